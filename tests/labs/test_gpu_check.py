"""gpu-check's code path on the CPU with tiny shapes (the real shapes need a CUDA machine)."""

from __future__ import annotations

import json

import pytest
import torch

from specviz.cli.main import main
from specviz.labs.speedup.gpu_check import SHAPES, check_greedy_exactness, random_model


def test_random_models_have_the_published_shapes() -> None:
    # Built on the meta device: the shapes without the memory (7B weights stay unallocated).
    model = random_model("qwen2.5-7b", torch.device("meta"), torch.bfloat16)
    params = sum(p.numel() for p in model.parameters())
    assert 7.5e9 < params < 7.7e9  # Qwen2.5-7B: 7.61 B parameters
    draft = random_model("qwen2.5-0.5b", torch.device("meta"), torch.bfloat16)
    assert 0.49e9 < sum(p.numel() for p in draft.parameters()) < 0.50e9  # 0.49 B (tied)
    assert draft.config.vocab_size == SHAPES["qwen2.5-0.5b"]["vocab_size"]
    assert next(model.parameters()).dtype == torch.bfloat16


def test_greedy_speculative_equals_plain_on_random_models() -> None:
    check = check_greedy_exactness(torch.device("cpu"), new_tokens=24, gamma=3)
    assert check.equal and check.first_difference is None and check.new_tokens == 24


def test_gpu_check_writes_one_json_record(tmp_path, capsys) -> None:
    out = tmp_path / "gpu.json"
    assert main(["gpu-check", "--device", "cpu", "--tiny", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["exactness"]["equal"] is True
    assert record["shapes"] == ["tiny-draft", "tiny-target"]
    assert len(record["verification"]["median_s"]) == 16
    assert record["verification"]["relative"][0] == 1.0
    assert [path["name"] for path in record["target_step"]["paths"]] == ["transformers", "lean"]
    assert record["draft_cost"] > 0
    assert set(record["speedups"]) == {"alpha=0.6", "alpha=0.7", "alpha=0.8"}
    assert "equals plain: yes" in capsys.readouterr().out


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_without_cuda_the_command_says_so(capsys) -> None:
    assert main(["gpu-check"]) == 2
    assert "No CUDA device here" in capsys.readouterr().out
