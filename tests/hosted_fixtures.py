"""The real app on two tiny models, served over HTTP in hosted mode (or locally) for API tests.

Not a test module: the API tests import ``tiny_app``, and the /run call ``RUN``, from here
(pytest puts tests/ on sys.path). The tiny pair answers in milliseconds, so a test sends what a
stranger could send and times the answer.
"""

from __future__ import annotations

import atexit
import functools
import os
from typing import Any

import torch

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

# A prompt any run may take, and the /run call a visitor's page makes with it.
PROMPT = "Hello"
PRESET = "qwen2.5-coder-bundled"
# /run's positional inputs: preset, drafter, prompt, chat_template, the shown settings (γ,
# adaptive γ, cost γ, temperature, top-k, top-p, seed, max new tokens, the two draft stops), race,
# the race's drafter lanes and its repeats per lane.
RUN = [
    PRESET,
    "draft-model",
    PROMPT,
    False,
    4,
    False,
    False,
    0.0,
    0,
    1.0,
    0,
    8,
    0.3,
    0.2,
    False,
    [],
    3,
]


class TinyTokenizer:
    """The byte tokenizer with the calls ModelPair makes of a transformers tokenizer."""

    chat_template = None

    def __init__(self) -> None:
        from tiny_models import ByteTokenizer

        self.bytes = ByteTokenizer()
        self.eos_token_id = self.bytes.eos_token_id
        self.all_special_ids = self.bytes.all_special_ids

    def __call__(self, text: str) -> dict[str, list[int]]:
        return {"input_ids": self.bytes.encode(text)}

    def decode(self, token_ids: list[int], skip_special_tokens: bool = False) -> str:
        return self.bytes.decode(token_ids, skip_special_tokens)


class TinyCache:
    """A model cache that hands every preset the same tiny pair (no file is read)."""

    def __init__(self) -> None:
        from tiny_models import EOS_ID, tiny_qwen

        from specviz.models.loader import ModelPair

        self.pair = ModelPair(
            draft=tiny_qwen(1),
            target=tiny_qwen(2, layers=3),
            tokenizer=TinyTokenizer(),
            eos_token_ids=frozenset({EOS_ID}),
            device=torch.device("cpu"),
            dtype=torch.float32,
            label="tiny",
        )

    def load_pair(self, preset: Any, *args: Any, **kwargs: Any) -> Any:
        return self.pair


@functools.cache
def tiny_app(hosted: bool = True) -> str:
    """Launch the app on the tiny pair (hosted limits unless told), return its URL."""
    from specviz.app.builder import build_demo, launch_options, queue_options
    from specviz.app.limits import hosted_presets, limits_for
    from specviz.models.presets import load_presets

    limits = limits_for(hosted)
    presets = hosted_presets(load_presets()) if hosted else load_presets()
    demo = build_demo(presets, TinyCache(), limits=limits)  # type: ignore[arg-type]
    demo.queue(**queue_options(limits))
    _, url, _ = demo.launch(
        server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options(limits)
    )
    atexit.register(demo.close)
    return str(url)


class SlowRunner:
    """A target runner that takes *seconds* per forward and counts them: long enough that a
    test can stop a run between two forwards."""

    def __init__(self, runner: Any, seconds: float, forwards: list[int]) -> None:
        self.runner, self.seconds, self.forwards = runner, seconds, forwards

    @property
    def cache_len(self) -> int:
        return int(self.runner.cache_len)

    def forward(self, input_ids: torch.Tensor, logits_to_keep: int = 1) -> torch.Tensor:
        import time

        time.sleep(self.seconds)
        self.forwards.append(input_ids.shape[1])
        return self.runner.forward(input_ids, logits_to_keep)  # type: ignore[no-any-return]

    def rollback(self, tokens: int) -> None:
        self.runner.rollback(tokens)


class SlowCache(TinyCache):
    """The tiny pair, its target slowed to *seconds* per forward; ``forwards`` lists the tokens
    each target forward read."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.forwards: list[int] = []
        pair, forwards = self.pair, self.forwards

        class SlowPair(type(pair)):  # type: ignore[misc]
            def target_runner(self) -> Any:
                return SlowRunner(super().target_runner(), seconds, forwards)

        self.pair = SlowPair(**{name: getattr(pair, name) for name in pair.__dataclass_fields__})


def launch(cache: Any, limits: Any) -> tuple[Any, str]:
    """The app on *cache* under *limits*, served on a free port: (demo, url). Close the demo."""
    from specviz.app.builder import build_demo, launch_options, queue_options
    from specviz.models.presets import load_presets

    demo = build_demo(load_presets(), cache, limits=limits)
    demo.queue(**queue_options(limits))
    _, url, _ = demo.launch(
        server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options(limits)
    )
    return demo, str(url)


def replay_fn_index(demo: Any) -> int:
    """The fn_index of the replay upload's event, as a script would push to it."""
    return next(
        i for i, fn in demo.fns.items() if getattr(fn.fn, "__name__", "") == "replay_upload"
    )


def wait_for(condition: Any, within_s: float = 30.0, what: str = "") -> None:
    """Wait until condition() is true (a test failure after *within_s*)."""
    import time

    deadline = time.perf_counter() + within_s
    while not condition():
        assert time.perf_counter() < deadline, f"waited {within_s} s for {what or condition}"
        time.sleep(0.05)
