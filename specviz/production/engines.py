"""The one table of serving engines and the flags the production snippets write.

Every flag, JSON key or generation-config field a snippet writes is a row here, with the setting
it carries and the page (documentation or source) it was checked against; ``flag()`` is the only
way a snippet names one, so a snippet cannot write a name this table lacks, and the tests parse
each snippet and compare its names with the table.
"""

from __future__ import annotations

from dataclasses import dataclass

VLLM, LLAMA_CPP, TRANSFORMERS, SGLANG = "vllm", "llama.cpp", "transformers", "sglang"


@dataclass(frozen=True)
class Engine:
    """A serving engine, and the version its snippet was written for."""

    name: str  # the key in ENGINES
    label: str  # as its authors write it
    version: str  # the release (or change) the flags were checked against
    source: str  # where that version's speculative-decoding options are documented


@dataclass(frozen=True)
class Flag:
    """One option an engine takes, and which part of a specviz run it carries."""

    engine: str
    name: str  # the flag ("--spec-draft-n-max"), JSON key or generation_config field
    carries: str  # the specviz setting, drafter option or model it is set from
    source: str  # the page that documents it, at the version of its Engine


ENGINES: dict[str, Engine] = {
    engine.name: engine
    for engine in (
        Engine(
            VLLM,
            "vLLM",
            "vLLM 0.26 (--speculative-config JSON)",
            "https://docs.vllm.ai/en/latest/features/speculative_decoding/draft_model/",
        ),
        Engine(
            LLAMA_CPP,
            "llama.cpp llama-server",
            "llama.cpp after PR #22964 (May 2026: --spec-draft-*, --spec-type)",
            "https://github.com/ggml-org/llama.cpp/pull/22964",
        ),
        Engine(
            TRANSFORMERS,
            "transformers",
            "transformers 5.23 (assisted generation)",
            "https://github.com/huggingface/transformers/blob/main/src/transformers/generation/configuration_utils.py",
        ),
        Engine(
            SGLANG,
            "SGLang",
            "SGLang 2026 docs (--speculative-algorithm STANDALONE | NGRAM)",
            "https://docs.sglang.io/docs/advanced_features/speculative_decoding.md",
        ),
    )
}

_VLLM_CONFIG = "https://docs.vllm.ai/en/latest/api/vllm/config/speculative.html"
_VLLM_NGRAM = "https://docs.vllm.ai/en/latest/features/speculative_decoding/n_gram/"
_VLLM_DRAFT = ENGINES[VLLM].source
_LLAMA_SPEC = ENGINES[LLAMA_CPP].source
# llama-server's --help as quoted in a 2026 pull request: the ngram-simple options.
_LLAMA_NGRAM = "https://github.com/ggml-org/llama.cpp/pull/23952"
# -m TARGET -md DRAFT: llama.cpp's own PR that added speculative decoding to llama-server. A 2026
# help text quoted elsewhere (NousResearch/hermes-agent PR 82506) still lists -md, long form now
# --spec-draft-model.
_LLAMA_MODEL = "https://github.com/ggml-org/llama.cpp/pull/10455"
_HF_CONFIG = ENGINES[TRANSFORMERS].source
_SGLANG = ENGINES[SGLANG].source

FLAGS: tuple[Flag, ...] = (
    Flag(VLLM, "--speculative-config", "the whole drafting setup, as JSON", _VLLM_DRAFT),
    Flag(VLLM, "method", "drafter kind: draft_model, ngram or medusa", _VLLM_CONFIG),
    Flag(VLLM, "model", "the draft model, or the Medusa heads' folder", _VLLM_DRAFT),
    Flag(VLLM, "num_speculative_tokens", "gamma", _VLLM_CONFIG),
    Flag(VLLM, "prompt_lookup_max", "lookup max_ngram", _VLLM_NGRAM),
    Flag(VLLM, "prompt_lookup_min", "lookup min_ngram", _VLLM_CONFIG),
    Flag(LLAMA_CPP, "-m", "the target model (GGUF)", _LLAMA_MODEL),
    Flag(LLAMA_CPP, "-md", "the draft model (GGUF)", _LLAMA_MODEL),
    Flag(LLAMA_CPP, "--spec-type", "drafter kind: draft-simple or ngram-simple", _LLAMA_SPEC),
    Flag(LLAMA_CPP, "--spec-draft-n-max", "gamma", _LLAMA_SPEC),
    Flag(
        LLAMA_CPP, "--spec-draft-n-min", "shortest draft worth verifying (specviz: 0)", _LLAMA_SPEC
    ),
    Flag(LLAMA_CPP, "--spec-draft-p-min", "draft_stop_below", _LLAMA_SPEC),
    Flag(LLAMA_CPP, "--spec-ngram-simple-size-n", "lookup max_ngram", _LLAMA_NGRAM),
    Flag(LLAMA_CPP, "--spec-ngram-simple-size-m", "gamma", _LLAMA_NGRAM),
    Flag(TRANSFORMERS, "assistant_model", "the draft model", _HF_CONFIG),
    Flag(TRANSFORMERS, "num_assistant_tokens", "gamma", _HF_CONFIG),
    Flag(TRANSFORMERS, "num_assistant_tokens_schedule", "adaptive_gamma", _HF_CONFIG),
    Flag(TRANSFORMERS, "assistant_confidence_threshold", "draft_stop_below", _HF_CONFIG),
    Flag(TRANSFORMERS, "prompt_lookup_num_tokens", "gamma (lookup)", _HF_CONFIG),
    Flag(TRANSFORMERS, "max_matching_ngram_size", "lookup max_ngram", _HF_CONFIG),
    Flag(TRANSFORMERS, "assistant_early_exit", "layer skip exit=N", _HF_CONFIG),
    Flag(SGLANG, "--model-path", "the target model", _SGLANG),
    Flag(SGLANG, "--speculative-algorithm", "drafter kind: STANDALONE or NGRAM", _SGLANG),
    Flag(SGLANG, "--speculative-draft-model-path", "the draft model", _SGLANG),
    Flag(SGLANG, "--speculative-num-steps", "gamma; a tree's depth", _SGLANG),
    Flag(SGLANG, "--speculative-eagle-topk", "one chain of drafts (1); a tree's topk", _SGLANG),
    Flag(
        SGLANG,
        "--speculative-num-draft-tokens",
        "gamma + 1, or a tree's nodes + 1 (with the verified position)",
        _SGLANG,
    ),
    Flag(SGLANG, "--speculative-ngram-min-match-window-size", "lookup min_ngram", _SGLANG),
    Flag(SGLANG, "--speculative-ngram-max-match-window-size", "lookup max_ngram", _SGLANG),
    Flag(SGLANG, "--speculative-ngram-max-bfs-breadth", "one chain of copies (1)", _SGLANG),
)


def flags_of(engine: str) -> dict[str, Flag]:
    """The table's flags of *engine*, by name."""
    return {row.name: row for row in FLAGS if row.engine == engine}


def flag(engine: str, name: str) -> str:
    """*name*, if the table lists it for *engine*; KeyError otherwise (a snippet may write only
    what the table documents)."""
    if name not in flags_of(engine):
        raise KeyError(f"{engine} has no flag {name!r} in specviz.production.engines.FLAGS")
    return name
