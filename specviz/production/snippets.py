"""Copy-ready speculative-decoding configs for serving engines, from a specviz run's setup.

``production_snippets(preset, drafter, settings)`` gives one ``Snippet`` per engine in
``specviz.production.engines.ENGINES``: the command or code, the version it was written for, and
notes for what the engine cannot carry over (the cumulative stop everywhere; a drafter the engine
has only a stand-in for; the cost γ schedule). Which method a snippet configures is the drafter's
registry entry's ``serving``, the first of its equivalents the engine has; a drafter with none
gets no code and a note saying so. Every option a snippet writes passes through ``engines.flag``,
so each is a row of the one documented table.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace

from specviz.core.settings import GenerationSettings
from specviz.drafters.base import DrafterSpec
from specviz.drafters.prompt_lookup import LookupOptions
from specviz.drafters.registry import ServingEquivalent, ServingMethod, drafter_entry
from specviz.drafters.tree_growth import TreeGrowth, growth_of
from specviz.models.bundled import BUNDLED
from specviz.models.heads import DEFAULT_HEADS
from specviz.models.presets import ModelSource, Preset
from specviz.production.engines import (
    ENGINES,
    LLAMA_CPP,
    SGLANG,
    TRANSFORMERS,
    VLLM,
    Engine,
    flag,
)
from specviz.text import Phrase

# The bundled GGUF files' models as their authors publish them on the Hugging Face Hub: the
# weights a serving engine loads (the hub preset of the same pair uses these ids too).
BUNDLED_HUB_IDS: dict[str, str] = {
    "qwen2.5-coder-0.5b-instruct": "Qwen/Qwen2.5-Coder-0.5B-Instruct",
    "qwen2.5-coder-1.5b-instruct": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
}


@dataclass(frozen=True)
class Snippet:
    """One engine's config: what to paste, in which language, for which version, and notes."""

    engine: Engine
    language: str  # "shell" or "python" (gr.Code's names)
    code: str
    notes: tuple[Phrase, ...]  # settings or drafters it cannot carry, each in words


@dataclass(frozen=True)
class ModelNames:
    """How the engines name one model: a Hub id or folder, and a GGUF file for llama.cpp."""

    weights: str  # vLLM, SGLang and transformers load this
    gguf: str  # llama.cpp loads this
    needs_gguf: bool  # True: no GGUF is at hand, the file name is a stand-in to convert or fetch


def model_names(source: ModelSource) -> ModelNames:
    """The names a serving engine loads *source*'s model by."""
    if source.kind == "bundled":
        bundled = BUNDLED[source.ref]
        return ModelNames(BUNDLED_HUB_IDS.get(source.ref, source.ref), bundled.file_name, False)
    if source.kind == "gguf":
        return ModelNames(source.ref, source.ref, False)
    stem = source.ref.rstrip("/").rsplit("/", 1)[-1]
    return ModelNames(source.ref, f"{stem}.gguf", True)


# A separate draft model: the method a Setup configures until production_snippets picks one.
DRAFT_MODEL = ServingEquivalent(ServingMethod.DRAFT_MODEL)


@dataclass(frozen=True)
class Setup:
    """What the snippets are built from: the pair's names, the drafter, the settings, and the
    serving method that stands for the drafter in the engine at hand."""

    target: ModelNames
    draft: ModelNames
    drafter: DrafterSpec
    settings: GenerationSettings
    serving: ServingEquivalent = DRAFT_MODEL  # production_snippets sets it per engine

    def equivalent(self, engine: str) -> ServingEquivalent | None:
        """The first of the drafter's serving equivalents *engine* has, None if it has none
        (early exit: transformers alone, and only for a spec that sets exit=N; a draft tree:
        SGLang alone; Medusa heads: vLLM alone)."""
        for equivalent in drafter_entry(self.drafter).serving:
            method = equivalent.method
            if method is ServingMethod.EARLY_EXIT:
                if engine == TRANSFORMERS and self.exit_layers:
                    return equivalent
            elif method is ServingMethod.DRAFT_TREE:
                if engine == SGLANG:
                    return equivalent
            elif method is ServingMethod.MEDUSA_HEADS:
                if engine == VLLM:
                    return equivalent
            else:
                return equivalent
        return None

    @property
    def tree(self) -> TreeGrowth | None:
        """How the engine grows its draft tree, None where it drafts a chain."""
        if self.serving.method is not ServingMethod.DRAFT_TREE:
            return None
        return growth_of(self.drafter)

    @property
    def medusa_heads(self) -> int:
        """How many Medusa heads the engine drafts with: the spec's heads=N, else as many as
        `heads train` trains by default (the folder `heads export` writes holds them all)."""
        return int(self.drafter.option("heads", str(DEFAULT_HEADS)))

    @property
    def exit_layers(self) -> int:
        """The spec's exit=N (the first N layers draft), 0 when it sets none."""
        return int(self.drafter.option("exit", "0"))

    @property
    def copies(self) -> bool:
        """Whether the engine copies from the text (n-gram lookup) instead of a draft model."""
        return self.serving.method is ServingMethod.NGRAM

    @property
    def lookup(self) -> LookupOptions:
        """The prompt-lookup options (the defaults for any other drafter)."""
        return LookupOptions.from_spec(self.drafter) if self.copies else LookupOptions()

    @property
    def early_exit(self) -> int:
        """exit=N where the engine drafts with the target's first N layers, else 0."""
        return self.exit_layers if self.serving.method is ServingMethod.EARLY_EXIT else 0


def _shell(program: list[str], options: list[str]) -> str:
    """*program* then *options*, one option (with its value) per line, quoted for a POSIX shell."""
    lines = [shlex.join(program)]
    index = 0
    while index < len(options):
        takes_value = index + 1 < len(options) and not options[index + 1].startswith("-")
        part = options[index : index + 2] if takes_value else options[index : index + 1]
        lines.append("  " + shlex.join(part))
        index += len(part)
    return " \\\n".join(lines)


def _common_notes(
    setup: Setup, engine: Engine, *, stop_below: bool, schedule: bool
) -> list[Phrase]:
    """Notes on the settings *engine* has no option for (stop_below / schedule: it has one)."""
    settings, notes = setup.settings, []
    label = engine.label
    if not setup.serving.exact:
        notes.append(Phrase("production.note.drafter", engine=label, drafter=setup.drafter.kind))
    if settings.draft_stop_below > 0 and not stop_below:
        notes.append(
            Phrase("production.note.stop_below", engine=label, value=settings.draft_stop_below)
        )
    if settings.draft_stop_cumulative > 0:
        notes.append(
            Phrase("production.note.cumulative", engine=label, value=settings.draft_stop_cumulative)
        )
    if settings.cost_gamma or (settings.adaptive_gamma and not schedule):
        notes.append(Phrase("production.note.schedule", engine=label, gamma=settings.gamma))
    return notes


def medusa_folder(setup: Setup) -> str:
    """The folder a config names for the target's exported heads (`heads export` writes it)."""
    stem = setup.target.weights.rstrip("/").rsplit("/", 1)[-1]
    return f"./{stem}-medusa-heads"


def vllm_config(setup: Setup) -> dict[str, object]:
    """vLLM's --speculative-config: a draft model, n-gram lookup with its window, or the
    target's Medusa heads."""
    gamma = setup.settings.gamma
    if setup.serving.method is ServingMethod.MEDUSA_HEADS:
        return {
            flag(VLLM, "method"): "medusa",
            flag(VLLM, "model"): medusa_folder(setup),
            flag(VLLM, "num_speculative_tokens"): setup.medusa_heads,
        }
    if setup.copies:
        return {
            flag(VLLM, "method"): "ngram",
            flag(VLLM, "num_speculative_tokens"): gamma,
            flag(VLLM, "prompt_lookup_max"): setup.lookup.max_ngram,
            flag(VLLM, "prompt_lookup_min"): setup.lookup.min_ngram,
        }
    return {
        flag(VLLM, "method"): "draft_model",
        flag(VLLM, "model"): setup.draft.weights,
        flag(VLLM, "num_speculative_tokens"): gamma,
    }


def vllm_snippet(setup: Setup) -> Snippet:
    """`vllm serve TARGET --speculative-config '{...}'`."""
    engine = ENGINES[VLLM]
    config = json.dumps(vllm_config(setup))
    code = _shell(
        ["vllm", "serve", setup.target.weights], [flag(VLLM, "--speculative-config"), config]
    )
    notes = _common_notes(setup, engine, stop_below=False, schedule=False)
    if setup.serving.method is ServingMethod.MEDUSA_HEADS:
        count = f" --heads {setup.medusa_heads}" if setup.drafter.option("heads", "") else ""
        command = f"python -m specviz heads export{count} {medusa_folder(setup)}"
        notes.append(Phrase("production.note.medusa", heads=setup.medusa_heads, command=command))
    notes.append(Phrase("production.note.sampling", engine=engine.label))
    return Snippet(engine, "shell", code, tuple(notes))


def llama_server_args(setup: Setup) -> list[str]:
    """llama-server's arguments: a draft GGUF with the --spec-draft-* limits, or ngram-simple."""
    settings = setup.settings
    words = ["llama-server", flag(LLAMA_CPP, "-m"), setup.target.gguf]
    if setup.copies:
        return [
            *words,
            flag(LLAMA_CPP, "--spec-type"),
            "ngram-simple",
            flag(LLAMA_CPP, "--spec-ngram-simple-size-n"),
            str(setup.lookup.max_ngram),
            flag(LLAMA_CPP, "--spec-ngram-simple-size-m"),
            str(settings.gamma),
        ]
    return [
        *words,
        flag(LLAMA_CPP, "-md"),
        setup.draft.gguf,
        flag(LLAMA_CPP, "--spec-type"),
        "draft-simple",
        flag(LLAMA_CPP, "--spec-draft-n-max"),
        str(settings.gamma),
        # specviz verifies a draft of any length, even one token.
        flag(LLAMA_CPP, "--spec-draft-n-min"),
        "0",
        # Written even at 0: llama.cpp's own default would otherwise stop drafts specviz keeps.
        flag(LLAMA_CPP, "--spec-draft-p-min"),
        f"{settings.draft_stop_below:g}",
    ]


def llama_cpp_snippet(setup: Setup) -> Snippet:
    """`llama-server -m TARGET.gguf -md DRAFT.gguf --spec-draft-n-max γ ...`."""
    engine = ENGINES[LLAMA_CPP]
    notes = _common_notes(setup, engine, stop_below=not setup.copies, schedule=False)
    if setup.copies and setup.lookup.min_ngram < setup.lookup.max_ngram:
        notes.append(
            Phrase(
                "production.note.ngram_fixed",
                n=setup.lookup.max_ngram,
                low=setup.lookup.min_ngram,
                high=setup.lookup.max_ngram,
            )
        )
    for model in (setup.target, setup.draft) if not setup.copies else (setup.target,):
        if model.needs_gguf:
            notes.append(Phrase("production.note.gguf", model=model.weights, file=model.gguf))
    notes.append(Phrase("production.note.sampling", engine=engine.label))
    args = llama_server_args(setup)
    return Snippet(engine, "shell", _shell(args[:1], args[1:]), tuple(notes))


def assistant_options(setup: Setup) -> dict[str, object]:
    """The generation options transformers' assisted generation takes for this setup."""
    settings = setup.settings
    if setup.copies:
        return {
            flag(TRANSFORMERS, "prompt_lookup_num_tokens"): settings.gamma,
            flag(TRANSFORMERS, "max_matching_ngram_size"): setup.lookup.max_ngram,
        }
    options: dict[str, object] = {
        flag(TRANSFORMERS, "num_assistant_tokens"): settings.gamma,
        flag(TRANSFORMERS, "num_assistant_tokens_schedule"): (
            "heuristic" if settings.adaptive_gamma and not settings.cost_gamma else "constant"
        ),
        # None switches transformers' confidence stop off (specviz writes 0 for "never").
        flag(TRANSFORMERS, "assistant_confidence_threshold"): settings.draft_stop_below or None,
    }
    if setup.early_exit:
        options = {
            flag(TRANSFORMERS, "assistant_early_exit"): setup.early_exit,
            flag(TRANSFORMERS, "num_assistant_tokens"): settings.gamma,
        }
    return options


def transformers_snippet(setup: Setup) -> Snippet:
    """Python: load the pair, set the assistant's generation_config, call generate()."""
    engine = ENGINES[TRANSFORMERS]
    settings = setup.settings
    options = assistant_options(setup)
    uses_assistant = flag(TRANSFORMERS, "num_assistant_tokens") in options and (
        flag(TRANSFORMERS, "assistant_early_exit") not in options
    )
    lines = [
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        "",
        f"tokenizer = AutoTokenizer.from_pretrained({setup.target.weights!r})",
        f"target = AutoModelForCausalLM.from_pretrained({setup.target.weights!r})",
    ]
    call: dict[str, object] = {}
    if uses_assistant:
        lines.append(f"assistant = AutoModelForCausalLM.from_pretrained({setup.draft.weights!r})")
        lines.extend(
            f"assistant.generation_config.{name} = {value!r}" for name, value in options.items()
        )
        call[flag(TRANSFORMERS, "assistant_model")] = "assistant"
    else:
        call.update({name: repr(value) for name, value in options.items()})
    sampling: dict[str, object] = {"max_new_tokens": settings.max_new_tokens}
    if settings.temperature > 0:
        sampling |= {"do_sample": True, "temperature": settings.temperature}
        sampling |= {"top_k": settings.top_k, "top_p": settings.top_p}
    else:
        sampling["do_sample"] = False
    arguments = ", ".join(
        [f"{name}={value}" for name, value in call.items()]
        + [f"{name}={value!r}" for name, value in sampling.items()]
    )
    lines += [
        'inputs = tokenizer("def fibonacci(n):", return_tensors="pt")',
        f"output = target.generate(**inputs, {arguments})",
        "print(tokenizer.decode(output[0], skip_special_tokens=True))",
    ]
    # The confidence threshold belongs to the assistant model; prompt lookup and early exit have none.
    with_threshold = uses_assistant and not setup.copies
    notes = _common_notes(setup, engine, stop_below=with_threshold, schedule=True)
    if settings.draft_stop_below > 0 and with_threshold:
        notes.append(Phrase("production.note.threshold_adapts", value=settings.draft_stop_below))
    return Snippet(engine, "python", "\n".join(lines), tuple(notes))


def sglang_args(setup: Setup) -> list[str]:
    """sglang.launch_server's arguments: STANDALONE with a draft model, or NGRAM lookup."""
    gamma = setup.settings.gamma
    words = [
        "python",
        "-m",
        "sglang.launch_server",
        flag(SGLANG, "--model-path"),
        setup.target.weights,
    ]
    if setup.copies:
        return [
            *words,
            flag(SGLANG, "--speculative-algorithm"),
            "NGRAM",
            flag(SGLANG, "--speculative-num-draft-tokens"),
            str(gamma + 1),
            flag(SGLANG, "--speculative-ngram-min-match-window-size"),
            str(setup.lookup.min_ngram),
            flag(SGLANG, "--speculative-ngram-max-match-window-size"),
            str(setup.lookup.max_ngram),
            flag(SGLANG, "--speculative-ngram-max-bfs-breadth"),
            "1",
        ]
    # One chain of γ drafts (top-k 1), verified with the position before them: γ + 1 tokens.
    # A tree: depth steps of top-k children each, the best nodes verified with that position.
    steps, topk, verified = gamma, 1, gamma + 1
    if (tree := setup.tree) is not None:
        steps, topk, verified = tree.max_depth, tree.width, tree.size + 1
    return [
        *words,
        flag(SGLANG, "--speculative-algorithm"),
        "STANDALONE",
        flag(SGLANG, "--speculative-draft-model-path"),
        setup.draft.weights,
        flag(SGLANG, "--speculative-num-steps"),
        str(steps),
        flag(SGLANG, "--speculative-eagle-topk"),
        str(topk),
        flag(SGLANG, "--speculative-num-draft-tokens"),
        str(verified),
    ]


def sglang_snippet(setup: Setup) -> Snippet:
    """`python -m sglang.launch_server --speculative-algorithm STANDALONE ...`."""
    engine = ENGINES[SGLANG]
    notes = _common_notes(setup, engine, stop_below=False, schedule=False)
    if (tree := setup.tree) is not None and tree.widths:
        notes.append(
            Phrase(
                "production.note.tree_shape",
                engine=engine.label,
                shape=str(tree),
                topk=tree.width,
                nodes=tree.size,
            )
        )
    notes.append(Phrase("production.note.sampling", engine=engine.label))
    args = sglang_args(setup)
    return Snippet(engine, "shell", _shell(args[:3], args[3:]), tuple(notes))


SNIPPETS: dict[str, Callable[[Setup], Snippet]] = {
    VLLM: vllm_snippet,
    LLAMA_CPP: llama_cpp_snippet,
    TRANSFORMERS: transformers_snippet,
    SGLANG: sglang_snippet,
}


def production_snippets(
    preset: Preset, drafter: str | DrafterSpec, settings: GenerationSettings
) -> tuple[Snippet, ...]:
    """One snippet per engine for *preset*'s pair run with *drafter* and *settings*."""
    spec = DrafterSpec.parse(drafter) if isinstance(drafter, str) else drafter
    setup = Setup(model_names(preset.target), model_names(preset.draft), spec, settings)
    snippets = []
    for name, build in SNIPPETS.items():
        equivalent = setup.equivalent(name)
        if equivalent is None:
            snippets.append(no_equivalent(ENGINES[name], spec))
        else:
            snippets.append(build(replace(setup, serving=equivalent)))
    return tuple(snippets)


def no_equivalent(engine: Engine, drafter: DrafterSpec) -> Snippet:
    """No config: *engine* has nothing that drafts as *drafter* does, and the note says so."""
    note = Phrase("production.note.no_equivalent", engine=engine.label, drafter=drafter.kind)
    language = "python" if engine.name == TRANSFORMERS else "shell"
    return Snippet(engine, language, "", (note,))
