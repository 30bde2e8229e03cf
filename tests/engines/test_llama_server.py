"""LlamaServer's process handling and request, against a stand-in program with llama-server's
HTTP surface (fake_llama_server.py), and the llama.cpp lane built on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from llama_fakes import fake_llama_binary

from specviz.core.settings import GenerationSettings
from specviz.engines.llama_server import LlamaServer, LlamaServerError, server_arguments
from specviz.measure.harness import Trial
from specviz.measure.llama_cpp import completion_totals, llama_cpp_decoding


@pytest.fixture
def fake_binary(tmp_path: Path) -> Path:
    return fake_llama_binary(tmp_path)


def test_the_server_gets_threads_for_both_models_one_slot_and_its_port() -> None:
    words = server_arguments(["-m", "t.gguf", "-md", "d.gguf"], threads=2, context=2048, port=8)
    pairs = dict(zip(words[4::2], words[5::2], strict=False))
    assert words[:4] == ["-m", "t.gguf", "-md", "d.gguf"]
    assert pairs["-t"] == pairs["-td"] == "2"
    assert "-np" in words and words[words.index("-np") + 1] == "1"
    assert words[words.index("--port") + 1] == "8"
    plain = server_arguments(["-m", "t.gguf"], threads=3, context=2048, port=8)
    assert "-td" not in plain and plain[plain.index("-t") + 1] == "3"


def test_a_request_sends_the_prompt_ids_and_sampling_and_reads_the_timings(
    fake_binary: Path,
) -> None:
    with LlamaServer(fake_binary, ["-m", "t.gguf", "-md", "d.gguf"], threads=1) as server:
        done = server.complete([5, 6, 7], max_new_tokens=4, temperature=0.7, seed=11, top_k=20)
    sent = json.loads(done.text)
    assert sent["prompt"] == [5, 6, 7]
    assert (sent["n_predict"], sent["temperature"], sent["seed"], sent["top_k"]) == (4, 0.7, 11, 20)
    assert sent["cache_prompt"] is False  # every run reads its prompt, as specviz's runs do
    assert sent["min_p"] == 0.0 and sent["repeat_penalty"] == 1.0  # only the target's law
    assert done.token_ids == (8, 9, 10, 11)
    assert (done.drafted, done.accepted) == (4, 2)
    assert done.acceptance_rate == 0.5
    assert done.server_tokens_per_s == pytest.approx(40.0)
    assert done.wall_s > 0


def test_the_lane_reports_llama_cpps_counts_as_specviz_totals(fake_binary: Path) -> None:
    settings = GenerationSettings(max_new_tokens=6, temperature=1.0, seed=2**64 - 1)
    with LlamaServer(fake_binary, ["-m", "t.gguf", "-md", "d.gguf"], threads=1) as server:
        method = llama_cpp_decoding(server, torch.tensor([[1, 2, 3]]), settings, "lane")
        outcome = method.run(Trial(0, settings, float("inf")))
    assert outcome is not None and outcome.new_tokens == 6
    assert json.loads(outcome.text)["seed"] < 2**32 - 1  # llama.cpp's seed is 32-bit
    totals = outcome.totals
    assert totals is not None
    assert totals.acceptance_rate == 0.5
    # Six tokens, three of them accepted drafts: three target passes, τ = 2.
    assert totals.target_forwards == 3 and totals.tokens_per_target_pass == 2.0


def test_plain_decoding_has_no_acceptance(fake_binary: Path) -> None:
    with LlamaServer(fake_binary, ["-m", "t.gguf"], threads=1) as server:
        done = server.complete([1], max_new_tokens=3, temperature=0.0, seed=0)
    assert done.acceptance_rate is None
    totals = completion_totals(done)
    assert totals.tokens_per_target_pass == 1.0 and totals.tested_positions == 0


@pytest.mark.parametrize(
    ("mode", "key"),
    [("exit", "error.llama.died"), ("sigill", "error.llama.illegal_instruction")],
)
def test_a_server_that_dies_at_start_is_a_clear_error_with_its_last_lines(
    fake_binary: Path, monkeypatch: pytest.MonkeyPatch, mode: str, key: str
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", mode)
    server = LlamaServer(fake_binary, ["-m", "t.gguf"], threads=1)
    with pytest.raises(LlamaServerError) as raised:
        server.start()
    assert raised.value.key == key
    assert "fake llama-server" in str(raised.value)  # the log's last lines
    assert not server._log.exists()  # nothing left behind


def test_a_server_that_never_answers_times_out(
    fake_binary: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "silent")
    server = LlamaServer(fake_binary, ["-m", "t.gguf"], threads=1, start_timeout_s=1.0)
    with pytest.raises(LlamaServerError) as raised:
        server.start()
    assert raised.value.key == "error.llama.start_timeout"


def test_an_error_answer_is_a_clear_error(
    fake_binary: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_MODE", "error")
    with (
        LlamaServer(fake_binary, ["-m", "t.gguf"], threads=1) as server,
        pytest.raises(LlamaServerError) as raised,
    ):
        server.complete([1], max_new_tokens=1, temperature=0.0, seed=0)
    assert raised.value.key == "error.llama.request"
    assert "model exploded" in str(raised.value)


def test_a_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    server = LlamaServer(tmp_path / "nowhere", ["-m", "t.gguf"], threads=1)
    with pytest.raises(LlamaServerError) as raised:
        server.start()
    assert raised.value.key == "error.llama.start"
