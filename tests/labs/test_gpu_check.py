"""gpu-check's code path on the CPU with tiny shapes (the real shapes need a CUDA machine)."""

from __future__ import annotations

import json

import pytest
import torch

from specviz.cli.main import main
from specviz.labs.speedup.fixed_cost import calibration_file, load_fixed_costs, read_calibration
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


def test_gpu_check_writes_one_json_record(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path / "cache"))
    out, calibration = tmp_path / "gpu.json", tmp_path / "calibration.json"
    command = ["gpu-check", "--device", "cpu", "--tiny", "--out", str(out)]
    assert main([*command, "--calibration-out", str(calibration)]) == 0
    record = json.loads(out.read_text())
    assert record["exactness"]["equal"] is True
    assert record["shapes"] == ["tiny-draft", "tiny-target"]
    assert len(record["verification"]["median_s"]) == 16
    assert record["verification"]["relative"][0] == 1.0
    assert [path["name"] for path in record["target_step"]["paths"]] == ["transformers", "lean"]
    assert record["draft_cost"] > 0
    assert set(record["speedups"]) == {"alpha=0.6", "alpha=0.7", "alpha=0.8"}
    # The fixed cost: eager measured at two depths of each shape and three sizes; no CUDA here.
    fixed = record["fixed_cost"]
    eager = fixed["fits"]["eager"]
    assert sorted({(p["layers"], p["tokens"]) for p in eager["points"]}) == [
        (layers, tokens) for layers in (1, 2, 3) for tokens in (1, 4, 16)
    ]
    assert min(eager["per_forward_s"], eager["per_layer_s"]) >= 0
    assert fixed["unavailable"] == {"cuda_graphs": "CUDA graphs need a CUDA device"}
    # The calibration file is the same record, and it reads back into the projection's costs.
    assert read_calibration(calibration).to_dict() == fixed
    costs = load_fixed_costs(calibration)
    assert costs["eager"].source == "measured" and costs["cuda_graphs"].published
    words = capsys.readouterr().out
    assert "equals plain: yes" in words and "CUDA graphs: not measured" in words
    assert f"calibration written to {calibration}" in words
    # Without --calibration-out a CPU's figures stay out of the cache the projection reads.
    assert not calibration_file().exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_without_cuda_the_command_says_so(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    assert main(["gpu-check", "--out", str(tmp_path / "gpu.json")]) == 2
    words = capsys.readouterr().out
    assert "No CUDA device here" in words and "--device cpu --tiny" in words
    assert list(tmp_path.iterdir()) == []  # neither a record nor a calibration
