"""Layer skip: the target drafts with some of its layers left out, through its own KV cache."""

from __future__ import annotations

import gc
import itertools
from collections import Counter
from dataclasses import dataclass, replace

import pytest
import torch
from exactness_checks import assert_greedy_equals_plain, chain_pair, wrong_verify
from rule_drafters import record_proposals
from scipy.stats import chisquare
from tiny_models import EOS_ID, ByteTokenizer, TinyPair, tiny_qwen

import specviz.core.engine
from specviz.core.engine import GenerationSettings, autoregressive_generate, speculative_generate
from specviz.core.events import Cycle
from specviz.drafters.base import DrafterSpec
from specviz.drafters.layer_skip import (
    CALIBRATION_CANDIDATES,
    LayerSkipDrafter,
    LayerSkipOptions,
    fraction_skip,
    layers_kept,
    layers_option,
)
from specviz.drafters.registry import DRAFTERS, check_drafter_spec, drafter_entry, make_drafter
from specviz.models.lean_forward import LeanCache
from specviz.models.runner import ModelRunner
from specviz.views.run_html import cycle_tokens_html

PROMPT = torch.tensor([list(b"def fib(n):\n    return")])
LAYERS = 4


@dataclass
class RecordingPair(TinyPair):
    """A tiny pair that keeps the target runner it hands the engine, to read its cache."""

    runners: list[ModelRunner] | None = None

    def target_runner(self) -> ModelRunner:
        runner = ModelRunner(self.target)
        self.runners = [*(self.runners or []), runner]
        return runner


def deep_pair() -> RecordingPair:
    """A 4-layer tiny Qwen2 target (layers to skip); its outputs are far from uniform."""
    return RecordingPair(
        tiny_qwen(1), tiny_qwen(5, layers=LAYERS), ByteTokenizer(), frozenset({EOS_ID})
    )


@pytest.fixture(scope="module")
def pair() -> RecordingPair:
    return deep_pair()


def layer_skip(pair: TinyPair, spec: str) -> LayerSkipDrafter:
    drafter = make_drafter(spec, pair)
    assert isinstance(drafter, LayerSkipDrafter)
    return drafter


def cache_of(runner: ModelRunner) -> LeanCache:
    assert runner.lean_step is not None
    return runner.lean_step[1]


def plain_cache(pair: TinyPair, committed: list[int], length: int) -> LeanCache:
    """The cache plain decoding holds after feeding the prompt, then one token per step, up to
    length positions."""
    runner = ModelRunner(pair.target)
    prompt_len = PROMPT.shape[1]
    runner.forward(PROMPT)
    for token in committed[prompt_len:length]:
        runner.forward(torch.tensor([[token]]))
    return cache_of(runner)


# -- the cache after each cycle --------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["layerskip:skip=1-2", "layerskip:exit=1"])
def test_the_target_cache_is_plain_decodings_after_accepts_and_rejections(
    pair: RecordingPair, spec: str
) -> None:
    settings = GenerationSettings(gamma=3, max_new_tokens=30, stop_on_eos=False)
    committed = PROMPT[0].tolist()
    accepts = rejections = 0
    for cycle in speculative_generate(pair, PROMPT, settings, layer_skip(pair, spec)):
        committed += [token.token_id for token in cycle.emitted]
        accepts += cycle.accepted_len > 0
        rejections += cycle.accepted_len < cycle.draft_len
        assert pair.runners is not None
        cache = cache_of(pair.runners[-1])
        length = cycle.target_cache_len
        assert length == cache.length == len(committed) - 1  # the last emitted token is pending
        plain = plain_cache(pair, committed, length)
        for layer in range(LAYERS):
            for ours, theirs in ((cache.keys, plain.keys), (cache.values, plain.values)):
                got, want = ours[layer], theirs[layer]
                assert got is not None and want is not None
                torch.testing.assert_close(got[:, :length], want[:, :length], atol=1e-5, rtol=0)
    assert accepts and rejections  # both kinds of cycle were checked


def test_the_scratch_writes_past_the_length_and_the_prefix_copy_is_its_own(pair: TinyPair) -> None:
    runner = ModelRunner(pair.target)
    runner.forward(PROMPT)
    decoder, cache = runner.lean_step or (None, None)
    assert decoder is not None and cache is not None
    before = [keys[:, : cache.length].clone() for keys in cache.keys if keys is not None]
    copy = cache.prefix_copy(5)
    scratch = cache.scratch()
    decoder(input_ids=torch.tensor([[7, 8]]), past_key_values=scratch, layers=[0, 3])
    assert (cache.length, scratch.length, copy.length) == (PROMPT.shape[1], PROMPT.shape[1] + 2, 5)
    for kept, keys in zip(before, cache.keys, strict=True):
        assert keys is not None and torch.equal(keys[:, : cache.length], kept)
    decoder(input_ids=torch.tensor([[1, 2, 3]]), past_key_values=copy)
    for kept, keys in zip(before, cache.keys, strict=True):  # the copy writes its own buffers
        assert keys is not None and torch.equal(keys[:, : cache.length], kept)


def test_all_layers_are_the_full_forward(pair: TinyPair) -> None:
    runner = ModelRunner(pair.target)
    decoder, cache = runner.lean_step or (None, None)
    assert decoder is not None and cache is not None
    every = decoder(input_ids=PROMPT, past_key_values=cache.scratch(), layers=range(LAYERS))
    default = decoder(input_ids=PROMPT, past_key_values=cache.scratch())
    torch.testing.assert_close(every.logits, default.logits, atol=0, rtol=0)


# -- the output: greedy equality, the sampled law ---------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        "layerskip",
        "layerskip:skip=1-2",
        "layerskip:skip=0+3",
        "layerskip:exit=2",
        "layerskip:calibrate=yes",
    ],
)
@pytest.mark.parametrize(("gamma", "adaptive"), [(1, False), (4, False), (3, True)])
def test_greedy_equals_plain_decoding(
    pair: TinyPair, spec: str, gamma: int, adaptive: bool
) -> None:
    assert_greedy_equals_plain(pair, spec, gamma, adaptive)


def test_the_target_drafting_with_every_layer_is_always_right(pair: TinyPair) -> None:
    """skip=none drafts exactly as the target verifies, reading the same cache: every draft is
    accepted, so the scratch positions and the cache reads line up."""
    settings = GenerationSettings(gamma=4, max_new_tokens=30, stop_on_eos=False)
    cycles = list(
        speculative_generate(pair, PROMPT, settings, layer_skip(pair, "layerskip:skip=none"))
    )
    assert all(cycle.accepted_len == cycle.draft_len for cycle in cycles)
    assert sum(cycle.draft_len for cycle in cycles) > 20


VOCAB, TOKENS = 3, 4  # the joint law of the first four tokens over a 3-token vocabulary
CHAIN_PROMPT = [0, 1, 2, 1]


def chain_target() -> TinyPair:
    """A 2-layer Qwen2 over 3 tokens whose second layer matters: skipping it moves q far from p."""
    target = tiny_qwen(5, layers=2)
    target.lm_head = torch.nn.Linear(64, VOCAB, bias=False)
    torch.manual_seed(5)
    with torch.no_grad():
        target.lm_head.weight.normal_(0.0, 0.25)
        target.config.vocab_size = VOCAB
        for layer in target.model.layers:
            layer.mlp.down_proj.weight.mul_(10.0)
    return TinyPair(chain_pair().draft, target, ByteTokenizer(), frozenset())


def full_and_skipped_probs(
    pair: TinyPair, ids: list[int], kept: list[int]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax rows at every position of ids, with every layer and with the kept ones only,
    each from one cache-free forward."""
    decoder, cache = ModelRunner(pair.target).lean_step or (None, None)
    assert decoder is not None and cache is not None
    feed = torch.tensor([ids])

    def probs(layers: list[int] | None) -> torch.Tensor:
        out = decoder(
            input_ids=feed, past_key_values=cache.scratch(), logits_to_keep=len(ids), layers=layers
        )
        return torch.softmax(out.logits[0].double(), -1)

    return probs(None), probs(kept)


def target_law(pair: TinyPair) -> dict[tuple[int, ...], float]:
    """The target's probability of every continuation of TOKENS tokens, from full forwards."""
    law = {}
    for cell in itertools.product(range(VOCAB), repeat=TOKENS):
        p, _ = full_and_skipped_probs(pair, CHAIN_PROMPT + list(cell), [])
        rows = p[len(CHAIN_PROMPT) - 1 : -1]
        law[cell] = float(torch.prod(rows[torch.arange(TOKENS), torch.tensor(cell)]))
    return law


def layer_skip_p_value(gamma: int, samples: int) -> float:
    """The p-value of the first TOKENS tokens sampled with layer 1 skipped, against the law."""
    pair = chain_target()
    counts: Counter[tuple[int, ...]] = Counter()
    for seed in range(samples):
        settings = GenerationSettings(
            gamma=gamma, temperature=1.0, max_new_tokens=TOKENS, seed=seed, stop_on_eos=False
        )
        drafter = make_drafter("layerskip:skip=1", pair)
        cycles = speculative_generate(pair, torch.tensor([CHAIN_PROMPT]), settings, drafter)
        counts[tuple(t.token_id for c in cycles for t in c.emitted)] += 1
    law = target_law(pair)
    cells = sorted(law)
    return float(chisquare([counts[c] for c in cells], [law[c] * samples for c in cells]).pvalue)


def test_q_is_the_skipped_models_distribution_and_far_from_p() -> None:
    """Each proposal's q rows are what a cache-free forward through the kept layers gives over
    the committed text and the drafts before it; and they differ from p by a clear margin, so
    the sampled test below means something."""
    pair = chain_target()
    settings = GenerationSettings(gamma=3, temperature=1.0, max_new_tokens=12, stop_on_eos=False)
    drafter = layer_skip(pair, "layerskip:skip=1")
    proposals = record_proposals(drafter)
    list(speculative_generate(pair, torch.tensor([CHAIN_PROMPT]), settings, drafter))
    distances = []
    for context, proposal in proposals[1:]:
        drafts = proposal.token_ids.tolist()
        if not drafts:  # the budget left no room for one
            continue
        p, q = full_and_skipped_probs(pair, context + drafts[:-1], [0])
        assert proposal.q_draft is not None
        torch.testing.assert_close(proposal.q_draft.double(), q[-len(drafts) :], atol=1e-5, rtol=0)
        distances.append(float((p - q).abs().sum(-1).mean() / 2))
    assert sum(distances) / len(distances) > 0.2  # total variation between p and q


def test_layer_skip_reproduces_the_target_distribution() -> None:
    assert layer_skip_p_value(gamma=2, samples=1_500) > 1e-3


def test_negative_control_a_wrong_rule_with_layer_skip_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(specviz.core.engine, "verify_sampled", wrong_verify)
    assert layer_skip_p_value(gamma=2, samples=1_500) < 1e-6


# -- the records ------------------------------------------------------------------------------------


def test_cycles_record_the_drafter_and_its_layers(pair: TinyPair) -> None:
    settings = GenerationSettings(gamma=3, max_new_tokens=20, stop_on_eos=False)
    cycles: list[Cycle] = list(
        speculative_generate(pair, PROMPT, settings, layer_skip(pair, "layerskip:skip=1-2"))
    )
    first, rest = cycles[0], cycles[1:]
    assert first.draft_end == "prefill" and first.drafted == ()  # the target reads the prompt
    assert all(cycle.drafter == "layerskip" for cycle in cycles)
    assert all(cycle.drafter_detail == "skip=1-2" for cycle in cycles)
    assert all(cycle.draft_cache_len == 0 for cycle in cycles)
    assert rest[-1].totals.draft_forwards == sum(cycle.draft_len for cycle in rest)
    assert cycles[1].to_dict()["drafter_detail"] == "skip=1-2"
    assert "layerskip skip=1-2" in cycle_tokens_html(cycles[1])  # the stream's cycle mark
    exits = speculative_generate(pair, PROMPT, settings, layer_skip(pair, "layerskip:exit=3"))
    assert {cycle.drafter_detail for cycle in exits} == {"exit=3"}


def test_calibration_keeps_one_candidate_and_records_it(pair: TinyPair) -> None:
    settings = GenerationSettings(gamma=3, max_new_tokens=20, stop_on_eos=False)
    drafter = layer_skip(pair, "layerskip:calibrate=yes")
    cycles = list(speculative_generate(pair, PROMPT, settings, drafter))
    candidates = {
        layers_option(layers_kept(fraction_skip(f, LAYERS), LAYERS), LAYERS)
        for f in CALIBRATION_CANDIDATES
    }
    assert {cycle.drafter_detail for cycle in cycles[1:]} <= candidates
    assert cycles[1].drafter_detail == drafter.layers


def test_layers_print_as_the_option_that_keeps_them() -> None:
    assert layers_option([0, 3, 4, 6], 8) == "skip=1-2+5+7"
    assert layers_option([0, 1, 2], 8) == "exit=3"
    assert layers_option(range(8), 8) == "skip=none"
    for text in ("skip=1-2+5+7", "exit=3", "skip=none"):
        options = LayerSkipOptions.from_spec(DrafterSpec.parse(f"layerskip:{text}"))
        assert layers_option(options.kept_layers(8), 8) == text


# -- options and the registry -----------------------------------------------------------------------


def test_options_parse_with_defaults() -> None:
    parse = LayerSkipOptions.from_spec
    assert parse(DrafterSpec("layerskip")) == LayerSkipOptions()
    assert parse(DrafterSpec.parse("layerskip:skip=4-6+9")).skip == (4, 5, 6, 9)
    assert parse(DrafterSpec.parse("layerskip:exit=14")).kept_layers(28) == tuple(range(14))
    assert parse(DrafterSpec.parse("layerskip:calibrate=yes")).calibrate
    default = LayerSkipOptions().kept_layers(28)
    assert 0 in default and 27 in default and len(default) < 28


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("layerskip:skip=x", "layers are 0-based numbers"),
        ("layerskip:skip=5-2", "layers are 0-based numbers"),
        ("layerskip:skip=-1", "layers are 0-based numbers"),
        ("layerskip:exit=0", "exit must keep at least 1 layer"),
        ("layerskip:exit=two", "layers are 0-based numbers"),
        ("layerskip:calibrate=maybe", "calibrate must be yes or no"),
        ("layerskip:skip=1,exit=2", "takes one of skip, exit or calibrate"),
        ("layerskip:depth=2", "'layerskip' does not take depth"),
    ],
)
def test_bad_options_are_refused_without_a_model(bad: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_drafter_spec(bad)


def test_layers_the_target_lacks_are_refused(pair: TinyPair) -> None:
    for spec in ("layerskip:skip=2-4", "layerskip:exit=4"):
        with pytest.raises(ValueError, match="the target has 4 layers, numbered 0 to 3"):
            make_drafter(spec, pair)


def test_a_target_without_the_lean_step_is_refused() -> None:
    with pytest.raises(ValueError, match="lean step, which does not compute this target"):
        make_drafter("layerskip", chain_pair())


def test_every_drafter_checks_its_own_spec_and_says_if_the_exactness_lab_samples_it() -> None:
    assert list(DRAFTERS) == [
        "draft-model",
        "lookup",
        "hybrid",
        "layerskip",
        "tree",
        "lookahead",
        "medusa",
    ]
    assert DRAFTERS["layerskip"].load() is LayerSkipDrafter
    sampled = {kind for kind, registered in DRAFTERS.items() if registered.samples_in_exactness_lab}
    assert sampled == {"draft-model"}
    assert drafter_entry("layerskip:exit=3").load() is LayerSkipDrafter
    for kind, registered in DRAFTERS.items():
        registered.load().check_spec(DrafterSpec(kind))  # every kind runs with no options
        assert registered.kind == kind


@pytest.mark.slow
def test_greedy_layer_skip_equals_plain_decoding_on_the_bundled_pair_in_float32() -> None:
    from specviz.models.loader import ModelCache
    from specviz.models.presets import default_preset, load_presets

    preset = replace(default_preset(load_presets()), draft_quantization="none")
    cache = ModelCache()
    bundled = cache.load_pair(preset, dtype="float32")
    try:
        prompt_ids = bundled.encode_prompt("Write a Python function that reverses a string.")
        settings = GenerationSettings(gamma=3, max_new_tokens=16)
        plain = [s.token.token_id for s in autoregressive_generate(bundled, prompt_ids, settings)]
        for spec in ("layerskip", "layerskip:exit=20"):
            drafter = make_drafter(spec, bundled)
            cycles = list(speculative_generate(bundled, prompt_ids, settings, drafter))
            assert [t.token_id for c in cycles for t in c.emitted] == plain, spec
            assert sum(c.accepted_len for c in cycles) > 0, spec  # it did speculate
    finally:
        del bundled
        cache.clear()
        gc.collect()


def test_bench_rows_for_layer_skip_with_transformers_early_exit_beside_exit_k(
    tiny_pair: TinyPair,
) -> None:
    from commands import COMMAND_PRESET, EncodingPair, small_grid

    from specviz.cli.bench import split_drafter_specs
    from specviz.measure.bench import run_bench_grid

    bench_pair = EncodingPair(
        tiny_pair.draft, tiny_pair.target, ByteTokenizer(), frozenset({EOS_ID})
    )
    drafters = split_drafter_specs("layerskip:exit=1,layerskip:skip=1")
    assert drafters == ("layerskip:exit=1", "layerskip:skip=1")
    result = run_bench_grid(
        bench_pair, COMMAND_PRESET, small_grid(adaptive_start=0, drafters=drafters, repeats=1)
    )
    early_exit, skip = result.rows
    assert early_exit.transformers is not None  # generate(assistant_early_exit=1)
    assert early_exit.transformers.new_tokens == early_exit.plain.new_tokens
    assert skip.transformers is None  # transformers skips no inner layers
    assert early_exit.specviz.new_tokens == skip.specviz.new_tokens == skip.plain.new_tokens


@pytest.fixture
def cli_pair(monkeypatch: pytest.MonkeyPatch, tiny_pair: TinyPair) -> None:
    """The commands load the tiny pair instead of the bundled one."""
    from commands import EncodingPair

    import specviz.cli.options

    bench_pair = EncodingPair(tiny_pair.draft, tiny_pair.target, ByteTokenizer(), frozenset())
    monkeypatch.setattr(specviz.cli.options, "load_pair_for", lambda args, preset: bench_pair)


@pytest.mark.usefixtures("cli_pair")
def test_the_commands_draft_with_layer_skip(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from specviz.cli.main import main

    common = [
        "--prompt",
        "abcabc",
        "--raw",
        "--max-new-tokens",
        "8",
        "--drafter",
        "layerskip:skip=1",
    ]
    assert main(["generate", *common, "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert {cycle["drafter_detail"] for cycle in trace["cycles"]} == {"skip=1"}
    assert main(["inspect", *common]) == 0
    assert main(["exactness", *common, "--temperature", "0"]) == 0  # greedy equality
    assert "identical" in capsys.readouterr().out
    # The sampled arm draws from a draft model: layer skip is refused by its capability.
    assert main(["exactness", *common, "--temperature", "1"]) == 2
    assert "checked at temperature 0 (greedy equality) only" in capsys.readouterr().err
