"""llama.cpp's lanes against a real llama-server on the bundled pair's GGUF files: the bench's
lane methods read the same prompt ids specviz reads, and llama.cpp's greedy text starts as
specviz's does (the same weights, in Q4_K_M there and bfloat16 here, so they may part later).

Skipped where no llama-server is found (`python -m specviz engines setup llama.cpp` builds one).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from specviz.core.engine import autoregressive_generate
from specviz.core.settings import GenerationSettings
from specviz.engines.llama_build import find_llama_server
from specviz.measure.harness import Trial
from specviz.measure.llama_cpp import LlamaLanes, llama_command, llama_cpp_decoding, plain_command
from specviz.models.presets import default_preset, load_presets

BUILD = find_llama_server()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BUILD is None, reason="no llama-server (engines setup llama.cpp)"),
]
PROMPT = "Write a Python function that returns the n-th Fibonacci number."
# Tokens both engines must agree on, greedy. The formats' rounding parts them at near-ties: on
# an AMD EPYC (Zen 4) this prompt agreed for all of 48 tokens, the squares prompt for 9 and a
# story prompt for 14; 8 leaves room for another CPU's kernels.
AGREED = 8


@pytest.fixture(scope="module")
def lanes() -> Iterator[LlamaLanes]:
    assert BUILD is not None
    with LlamaLanes(BUILD, threads=2) as started:
        yield started


def test_llama_cpp_decodes_what_specviz_decodes_from_the_same_prompt_ids(
    bundled_pair: object, lanes: LlamaLanes
) -> None:
    preset = default_preset(load_presets())
    settings = GenerationSettings(max_new_tokens=24, gamma=5)
    prompt_ids = bundled_pair.encode_prompt(PROMPT, chat=preset.chat_template)
    ours = [
        event.token.token_id
        for event in autoregressive_generate(bundled_pair, prompt_ids, settings)
    ]
    plain = llama_cpp_decoding(lanes.server(plain_command(preset)), prompt_ids, settings, "plain")
    done = plain.run(Trial(0, settings, float("inf")))
    assert done is not None and done.token_ids[:AGREED] == tuple(ours[:AGREED])
    command = llama_command(preset, "draft-model", settings)
    assert command is not None and "-md" in command
    spec = llama_cpp_decoding(lanes.server(command), prompt_ids, settings, "speculative")
    drafted = spec.run(Trial(0, settings, float("inf")))
    assert drafted is not None and drafted.totals is not None
    assert drafted.totals.tested_positions > 0  # it speculated
    assert 0.5 < drafted.totals.acceptance_rate <= 1.0  # a code prompt: the draft mostly agrees
    # Greedy speculative decoding is plain decoding, in llama.cpp as in specviz.
    assert drafted.token_ids[:AGREED] == done.token_ids[:AGREED]
