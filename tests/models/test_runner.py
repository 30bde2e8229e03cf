"""ModelRunner: the lean step only where a first-use check finds its logits equal the model's own.

Faithfulness across prompt/verify/rollback feeds is in test_lean_forward.py; here, each way the
lean step can be wrong for a model (a renamed module, a swapped module, a broken step, an
exception) must make the runner fall back to transformers' forward and say why.
"""

from __future__ import annotations

import pytest
import torch
from tiny_models import BYTE_VOCAB, EOS_ID, ByteTokenizer, MarkovLM, random_transition, tiny_qwen

from specviz.models import lean_forward
from specviz.models.loader import ModelPair
from specviz.models.model_steps import new_cache
from specviz.models.runner import ModelRunner, choose_forward

PROMPT = torch.tensor([list(b"def add(a, b):")])
STEP = torch.tensor([list(b" r")])


def own_logits(model: torch.nn.Module, feeds: list[torch.Tensor]) -> list[torch.Tensor]:
    """The model's own forward over successive feeds, each keeping every fed position's logits."""
    cache = new_cache(model)
    with torch.inference_mode():
        return [
            model(input_ids=feed, past_key_values=cache, logits_to_keep=feed.shape[1]).logits[0]
            for feed in feeds
        ]


def runner_logits(runner: ModelRunner, feeds: list[torch.Tensor]) -> list[torch.Tensor]:
    return [runner.forward(feed, logits_to_keep=feed.shape[1]) for feed in feeds]


def assert_close(got: list[torch.Tensor], expected: list[torch.Tensor]) -> None:
    for a, b in zip(got, expected, strict=True):
        assert (a - b).abs().max().item() < 1e-5


def test_a_supported_model_runs_the_lean_step() -> None:
    runner = ModelRunner(tiny_qwen(20))
    assert runner.kind == "lean" and runner.fallback_reason is None


def test_a_renamed_module_falls_back_with_the_reason() -> None:
    model = tiny_qwen(21)
    mlp = model.model.layers[1].mlp
    mlp.add_module("gate", mlp.gate_proj)
    del mlp.gate_proj
    runner = ModelRunner(model)  # no AttributeError
    assert runner.kind == "transformers"
    assert str(runner.fallback_reason) == "model.model.layers[1].mlp has no gate_proj"


class RowsDisagree(torch.nn.Linear):
    """A projection whose row path (what the lean step calls) is not its forward."""

    def forward_rows(self, rows: torch.Tensor) -> torch.Tensor:
        return super().forward(rows) * 1.5


def test_a_module_swapped_after_a_first_runner_is_seen_by_the_next() -> None:
    model = tiny_qwen(22)
    assert ModelRunner(model).kind == "lean"
    # A faithful swap: new weights; the next runner computes them, as the model's own forward.
    torch.manual_seed(0)
    model.model.layers[0].mlp.down_proj = torch.nn.Linear(128, 64, bias=False)
    runner = ModelRunner(model)
    assert runner.kind == "lean"
    assert_close(runner_logits(runner, [PROMPT, STEP]), own_logits(model, [PROMPT, STEP]))
    # A swap the lean step would compute wrongly: the next runner's check refuses it.
    swapped = RowsDisagree(64, 64, bias=False)
    swapped.weight.data.copy_(model.model.layers[1].self_attn.o_proj.weight)
    model.model.layers[1].self_attn.o_proj = swapped
    runner = ModelRunner(model)
    assert runner.kind == "transformers"
    assert runner.fallback_reason is not None and runner.fallback_reason.key == "forward.why.logits"
    assert_close(runner_logits(runner, [PROMPT, STEP]), own_logits(model, [PROMPT, STEP]))


def rotate_the_wrong_way(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((x[..., half:], -x[..., :half]), dim=-1)


def see_the_future(allowed: torch.Tensor) -> torch.Tensor:
    return torch.zeros(1, 1, *allowed.shape)


# A tiny random model attends almost uniformly, so a rotary sign moves its logits by about 1 %:
# caught at float32's tolerance, inside bfloat16's rounding. A causal mask that lets the prompt
# see later tokens moves them by far more than bfloat16's tolerance.
@pytest.mark.parametrize(
    ("dtype", "broken", "patch"),
    [
        (torch.float32, "_rotate_half", rotate_the_wrong_way),
        (torch.bfloat16, "_additive_mask", see_the_future),
    ],
)
def test_a_broken_lean_step_is_caught_by_the_first_use_check(
    monkeypatch: pytest.MonkeyPatch, dtype: torch.dtype, broken: str, patch: object
) -> None:
    model = tiny_qwen(23, dtype=dtype)
    monkeypatch.setattr(lean_forward, broken, patch)
    runner = ModelRunner(model)
    assert runner.kind == "transformers"
    assert runner.fallback_reason is not None and runner.fallback_reason.key == "forward.why.logits"
    monkeypatch.undo()
    assert ModelRunner(tiny_qwen(23, dtype=dtype)).kind == "lean"  # the control: unbroken


def test_an_exception_in_the_lean_step_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: object) -> torch.Tensor:
        raise RuntimeError("no kernel for this")

    monkeypatch.setattr(lean_forward, "grouped_attention", fail)
    runner = ModelRunner(tiny_qwen(24))
    assert runner.kind == "transformers"
    assert str(runner.fallback_reason) == "the lean step failed: RuntimeError: no kernel for this"


def test_the_check_runs_once_per_model_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    model = tiny_qwen(25)
    assert choose_forward(model).kind == "lean"
    monkeypatch.setattr(lean_forward, "grouped_attention", None)  # a new check would fail
    assert ModelRunner(model).kind == "lean"  # the verdict for this layout stands


def test_transformers_runner_feeds_rolls_back_and_branches() -> None:
    model = MarkovLM(random_transition(BYTE_VOCAB + 1, seed=1))
    runner = ModelRunner(model)
    assert runner.kind == "transformers" and runner.fallback_reason is not None
    runner.forward(PROMPT)
    runner.forward(STEP)
    runner.rollback(2)
    assert runner.cache_len == PROMPT.shape[1]
    runner.reset()
    assert runner.cache_len == 0
    branches = torch.tensor([[1, 2], [3, 4]])
    expected = model.log_transition[branches[:, -1]].float()
    assert torch.allclose(runner.branch_logits(branches).float(), expected)
    assert runner.cache_len == 0


def test_the_loaded_pair_reports_each_models_forward() -> None:
    draft = MarkovLM(random_transition(BYTE_VOCAB + 1, seed=2))
    pair = ModelPair(
        draft=draft,
        target=tiny_qwen(26),
        tokenizer=ByteTokenizer(),
        eos_token_ids=frozenset({EOS_ID}),
        device=torch.device("cpu"),
        dtype=torch.float32,
    )
    choices = pair.forward_choices()
    assert choices["target"].kind == "lean" and choices["target"].fallback_reason is None
    assert choices["draft"].kind == "transformers"
    assert str(choices["draft"].fallback_reason) == "model type None is not one of llama, qwen2"
