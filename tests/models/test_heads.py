"""Medusa heads (specviz.models.heads): the runner keeps the hidden rows the output layer reads,
heads are filed by their target's weights, and a training fits, measures, files and resumes on a
tiny model in seconds."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch
from tiny_models import ByteTokenizer, tiny_qwen

from specviz.core.tree import DraftTree
from specviz.models.heads import corpus, features
from specviz.models.heads.block import MedusaHeads
from specviz.models.heads.features import PassPlan
from specviz.models.heads.store import heads_folder, load_heads, read_report, weights_fingerprint
from specviz.models.heads.train import TrainingOptions, train_heads
from specviz.models.runner import ModelRunner

PROMPT = torch.tensor([list(b"def add(a, b):\n    return")])


def hooked(model: torch.nn.Module) -> torch.nn.Module:
    model.register_forward_hook(lambda *args: None)  # transformers' forward runs
    return model


@pytest.mark.parametrize("forward", ["lean", "transformers"])
def test_the_runner_keeps_the_rows_its_logits_came_from(forward: str) -> None:
    model = tiny_qwen(4) if forward == "lean" else hooked(tiny_qwen(4))
    runner = ModelRunner(model)
    assert runner.kind == forward and runner.last_hidden is None
    runner.forward(PROMPT)
    assert runner.last_hidden is None  # nothing kept unless asked
    runner.keep_hidden_states()
    logits = runner.forward(torch.tensor([[7, 8, 9]]), logits_to_keep=2)
    hidden = runner.last_hidden
    assert hidden is not None and hidden.shape == (2, 64)
    with torch.inference_mode():
        assert torch.allclose(model.lm_head(hidden), logits, atol=1e-5)
    tree = DraftTree((1, 2, 3), (-1, 0, -1))
    logits = runner.tree_forward(tree, 5)
    hidden = runner.last_hidden
    assert hidden is not None and hidden.shape == (4, 64)
    with torch.inference_mode():
        assert torch.allclose(model.lm_head(hidden), logits, atol=1e-5)


def test_untrained_heads_are_the_output_layer() -> None:
    heads = MedusaHeads(3, 64)
    model = tiny_qwen(4)
    row = torch.randn(64)
    logits = heads.logits(row, model.lm_head)
    assert torch.allclose(logits, model.lm_head(row).expand(3, -1), atol=1e-5)


def test_heads_are_filed_by_their_targets_weights(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    first, second = tiny_qwen(4), tiny_qwen(4)
    assert weights_fingerprint(first) == weights_fingerprint(second)
    assert heads_folder(first) == heads_folder(second) and tmp_path in heads_folder(first).parents
    with torch.no_grad():
        second.lm_head.weight[0, 0] += 1.0
    changed = tiny_qwen(4)
    with torch.no_grad():
        changed.lm_head.weight[0, 0] += 1.0
    assert weights_fingerprint(changed) != weights_fingerprint(first)
    assert load_heads(heads_folder(first)) is None and read_report(heads_folder(first)) is None


def tiny_documents(group: str):  # type: ignore[no-untyped-def]
    """Stand-in sources: a few hundred bytes of repetitive text per group."""

    def source():  # type: ignore[no-untyped-def]
        for index in range(40):
            text = f"def f{index}(x):\n    return x + {index}\n" * 6
            yield corpus.Document(group, f"{group}/{index}", text)

    return source


def test_a_training_fits_measures_files_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corpus, "SOURCES", {g: tiny_documents(g) for g in corpus.GROUPS})
    model = tiny_qwen(4)
    options = TrainingOptions(
        heads=2, minutes=0.2, max_tokens=640, plan=PassPlan(chunk_tokens=64, held_out_chunks=1)
    )
    messages: list[str] = []
    report = train_heads(
        model, ByteTokenizer(), tmp_path, options, lambda f, m: messages.append(m.key)
    )
    assert {"heads.reading", "heads.training", "heads.measuring", "heads.done"} <= set(messages)
    assert report["heads"] == 2 and report["steps"] > 0 and report["training_positions"] > 0
    for group in corpus.GROUPS:
        measured = report["agreement"][group]
        assert len(measured["top1"]) == 2 and all(
            0 <= a <= b <= 1 for a, b in zip(measured["top1"], measured["top5"], strict=True)
        )
    heads = load_heads(tmp_path)
    assert heads is not None and heads.count == 2
    # Stored in bfloat16: a few megabytes for the bundled target's shape, kilobytes here.
    assert (tmp_path / "medusa-heads.safetensors").stat().st_size < 100_000
    # A second run reads no chunk twice (the first read all max_tokens allows) and continues
    # the training from its checkpoint.
    read: list[int] = []
    original = features.target_features

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        read.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(features, "target_features", counted)
    again = train_heads(model, ByteTokenizer(), tmp_path, options, lambda f, m: None)
    assert read == [] and again["steps"] > report["steps"]


def test_heads_exported_for_vllm_compute_what_specviz_computes(tmp_path: Path) -> None:
    """The folder vLLM's Medusa loads: its config and, read back as vLLM's ResidualBlock and
    shared output layer compute them (x + SiLU(W x + b), then the output layer), the same
    logits as specviz's heads, to bfloat16's precision."""
    import json

    from safetensors.torch import load_file

    from specviz.models.heads.vllm_export import export_vllm_medusa

    model = tiny_qwen(4)
    heads = MedusaHeads(3, 64)
    with torch.no_grad():
        for block in heads.blocks:
            block.linear.weight.normal_(0, 0.05)  # type: ignore[union-attr]
            block.linear.bias.normal_(0, 0.05)  # type: ignore[union-attr]
    folder = export_vllm_medusa(heads, model.lm_head.weight, tmp_path / "medusa")
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "medusa" and config["architectures"] == ["MedusaModel"]
    assert (config["num_heads"], config["num_hidden_layers"], config["hidden_size"]) == (3, 1, 64)
    assert config["vocab_size"] == config["truncated_vocab_size"] == model.lm_head.weight.shape[0]
    assert config["medusa_fc_bias"] is True and config["original_lm_head"] is True
    tensors = load_file(str(folder / "model.safetensors"))
    assert set(tensors) == {
        *(f"blocks.{k}.layers.0.{part}" for k in range(3) for part in ("weight", "bias")),
        "lm_heads.0.weight",
    }
    row = torch.randn(64)
    expected = heads.logits(row, model.lm_head)
    output = tensors["lm_heads.0.weight"].float()
    for k in range(3):
        weight, bias = tensors[f"blocks.{k}.layers.0.weight"], tensors[f"blocks.{k}.layers.0.bias"]
        state = row + torch.nn.functional.silu(row @ weight.float().T + bias.float())
        assert torch.allclose(state @ output.T, expected[k], atol=2e-2), k


def test_an_export_may_keep_the_first_heads() -> None:
    from specviz.models.heads.vllm_export import first_heads, vllm_medusa_config

    heads = MedusaHeads(4, 64)
    kept = first_heads(heads, 2)
    assert kept.count == 2 and kept.blocks[1] is heads.blocks[1]
    assert first_heads(heads, None) is heads
    assert vllm_medusa_config(kept, 100)["num_heads"] == 2
    with pytest.raises(ValueError):
        first_heads(heads, 5)


def test_licences_stay_out_of_the_prose() -> None:
    """A licence that many packages ship word for word would put the held-out prose on text the
    heads read in training."""
    bsd = "3. Redistribution and use in source and\n   binary forms, with or without modification"
    assert corpus.is_licence(bsd)
    assert corpus.is_licence("THE SOFTWARE IS PROVIDED “AS IS”, WITHOUT WARRANTY OF ANY KIND")
    assert not corpus.is_licence("A form with a file is sent as multipart/form-data, in parts.")
    for document in itertools.islice(corpus.prose_documents(), 200):
        assert not corpus.is_licence(document.text), document.name
        assert not Path(document.name).name.upper().startswith(corpus.LICENCE_NAMES)


def test_the_export_command_writes_the_trained_heads_or_says_why_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from specviz.cli import heads as heads_cli
    from specviz.cli.main import main
    from specviz.models.heads.store import save_heads

    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path / "cache"))
    model = tiny_qwen(4)
    monkeypatch.setattr(heads_cli, "load_target", lambda args: (model, None))
    out = tmp_path / "medusa"
    assert main(["heads", "export", str(out)]) == 1  # none trained yet
    assert "heads train" in capsys.readouterr().out
    save_heads(MedusaHeads(3, 64), heads_folder(model), {"heads": 3})
    assert main(["heads", "export", "--heads", "5", str(out)]) == 2
    assert "1 to 3" in capsys.readouterr().out
    assert main(["heads", "export", "--heads", "2", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["num_heads"] == 2
    said = capsys.readouterr().out
    assert '"method": "medusa"' in said and '"num_speculative_tokens": 2' in said
