"""llama.cpp's llama-server as measured lanes: plain and speculative decoding of the same GGUF
pair, as harness methods beside specviz's own.

The speculative lane runs the command the configs tab prints for the run's drafter and settings
(``specviz.production.snippets.llama_server_args``), with the GGUF names made paths; a drafter
llama.cpp has no equivalent of gets no lane. The plain lane is ``llama-server -m TARGET``. Each
distinct command is one server, started once and kept for every run that needs it
(``LlamaLanes``), so loading a model is never timed.

What the lanes can and cannot say: llama.cpp's target computes in the GGUF's own Q4_K_M format
while specviz dequantizes the same file to bfloat16, so greedy texts may part after a while; its
α is ``draft_n_accepted / draft_n`` (every drafted token counts, where specviz counts the tested
ones), and τ is derived from it (each target pass gives its accepted tokens plus one); it has no
per-token view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from specviz.core.events import Totals
from specviz.core.settings import GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.engines.llama_build import BuildInfo
from specviz.engines.llama_server import Completion, LlamaServer, default_threads
from specviz.measure.harness import Method, Outcome, Trial
from specviz.models.bundled import BUNDLED, assemble, cache_root
from specviz.models.presets import ModelSource, Preset
from specviz.production.engines import LLAMA_CPP
from specviz.production.snippets import Setup, llama_server_args, model_names
from specviz.text import UserError

__all__ = ["LlamaLanes", "gguf_path", "llama_command", "llama_cpp_decoding", "plain_command"]

# llama.cpp's seed is 32-bit, and 0xFFFFFFFF asks it for a random one.
_SEED_MODULUS = 2**32 - 1


def gguf_path(source: ModelSource) -> Path:
    """The GGUF file llama.cpp loads for *source*: a bundled model's joined file, or the GGUF
    given; a Hub or folder source has none here."""
    if source.kind == "bundled" and source.ref in BUNDLED:
        model = BUNDLED[source.ref]
        return assemble(model, cache_root() / "bundled" / model.name)
    if source.kind == "gguf":
        return Path(source.ref).expanduser().resolve()
    raise UserError("error.llama.no_gguf", model=source.ref)


def llama_command(
    preset: Preset,
    drafter: str | DrafterSpec,
    settings: GenerationSettings,
    exact: bool = True,
) -> list[str] | None:
    """llama-server's options for *drafter* at *settings*: the configs tab's command, with the
    models' paths for their file names; None where llama.cpp has no equivalent of the drafter,
    or (with *exact*) only a stand-in (a draft model's chain for a draft tree), which would
    measure another drafter under this one's name."""
    spec = DrafterSpec.parse(drafter) if isinstance(drafter, str) else drafter
    target = replace(model_names(preset.target), gguf=str(gguf_path(preset.target)))
    draft = replace(model_names(preset.draft), gguf=str(gguf_path(preset.draft)))
    setup = Setup(target, draft, spec, settings)
    equivalent = setup.equivalent(LLAMA_CPP)
    if equivalent is None or (exact and not equivalent.exact):
        return None
    return llama_server_args(replace(setup, serving=equivalent))[1:]


def plain_command(preset: Preset) -> list[str]:
    """llama-server on the target alone: plain decoding."""
    return ["-m", str(gguf_path(preset.target))]


class LlamaLanes:
    """The servers a measurement needs, one per distinct command, started on first use and all
    stopped on leaving ``with``."""

    def __init__(self, build: BuildInfo, threads: int | None = None) -> None:
        self.build = build
        self.threads = threads or default_threads()
        self._servers: dict[tuple[str, ...], LlamaServer] = {}

    def server(self, command: Sequence[str]) -> LlamaServer:
        key = tuple(command)
        if key not in self._servers:
            server = LlamaServer(self.build.path, command, self.threads)
            server.start()
            self._servers[key] = server
        return self._servers[key]

    def close(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers.clear()

    def __enter__(self) -> LlamaLanes:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def completion_totals(done: Completion) -> Totals:
    """The server's counters in specviz's record: drafted tokens as tested positions, target
    passes as tokens less accepted drafts (each pass gives its accepted drafts plus one)."""
    return Totals(
        new_tokens=done.predicted_tokens,
        target_forwards=max(1, done.predicted_tokens - done.accepted),
        draft_forwards=done.drafted,
        tested_positions=done.drafted,
        accepted_positions=done.accepted,
        elapsed_s=done.predicted_ms / 1000,
        prefill_s=done.prompt_ms / 1000,
    )


def llama_cpp_decoding(
    server: LlamaServer, prompt_ids: Any, settings: GenerationSettings, name: str
) -> Method:
    """One request to *server* per run, the same prompt ids and sampling settings as specviz's
    runs (seed + repeat at temperature > 0, as the harness gives every method)."""
    ids = [int(token) for token in prompt_ids.reshape(-1).tolist()]

    def run(trial: Trial) -> Outcome:
        chosen = trial.settings
        done = server.complete(
            ids,
            max_new_tokens=chosen.max_new_tokens,
            temperature=chosen.temperature,
            seed=chosen.seed % _SEED_MODULUS,
            top_k=chosen.top_k,
            top_p=chosen.top_p,
        )
        return Outcome(
            new_tokens=len(done.token_ids) or done.predicted_tokens,
            totals=completion_totals(done),
            text=done.text,
            token_ids=done.token_ids,
        )

    return Method(name, run, settings)
