"""Production configs: each snippet parsed back and its names compared with the one flag table."""

from __future__ import annotations

import ast
import json
import shlex
from dataclasses import replace

import pytest

from specviz.cli.main import main
from specviz.core.settings import GenerationSettings
from specviz.models.presets import default_preset, load_presets
from specviz.production.engines import (
    ENGINES,
    FLAGS,
    LLAMA_CPP,
    SGLANG,
    TRANSFORMERS,
    VLLM,
    flag,
    flags_of,
)
from specviz.production.snippets import Snippet, production_snippets

PRESET = default_preset(load_presets())
SETTINGS = GenerationSettings(gamma=7, draft_stop_below=0.25, draft_stop_cumulative=0.2)
# generate()'s own sampling arguments: not speculative-decoding options, so not in the table.
SAMPLING = {"max_new_tokens", "do_sample", "temperature", "top_k", "top_p"}


def by_engine(drafter: str, settings: GenerationSettings = SETTINGS) -> dict[str, Snippet]:
    return {
        snippet.engine.name: snippet for snippet in production_snippets(PRESET, drafter, settings)
    }


def options(code: str) -> dict[str, str]:
    """A shell command's options with their values ("" for a switch)."""
    words = shlex.split(code.replace("\\\n", " "))
    found: dict[str, str] = {}
    for index, word in enumerate(words):
        if word.startswith("-") and not (word == "-m" and words[0] == "python"):
            following = words[index + 1] if index + 1 < len(words) else ""
            found[word] = "" if following.startswith("-") else following
    return found


def generate_options(code: str) -> dict[str, object]:
    """The assistant's generation_config fields and generate()'s keywords, parsed from Python."""
    found: dict[str, object] = {}
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute):
            target = node.targets[0]
            if isinstance(target.value, ast.Attribute) and target.value.attr == "generation_config":
                found[target.attr] = ast.literal_eval(node.value)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "generate":
            for keyword in node.keywords:
                if keyword.arg is not None and keyword.arg not in SAMPLING:
                    value = keyword.value
                    found[keyword.arg] = (
                        value.id if isinstance(value, ast.Name) else ast.literal_eval(value)
                    )
    return found


def test_every_flag_row_names_its_engine_and_a_source() -> None:
    assert {row.engine for row in FLAGS} == set(ENGINES)
    for row in FLAGS:
        assert row.source.startswith("https://"), row
        assert row.carries
    for engine in ENGINES.values():
        assert engine.version and engine.source.startswith("https://")
    assert len({(row.engine, row.name) for row in FLAGS}) == len(FLAGS)
    with pytest.raises(KeyError):
        flag(LLAMA_CPP, "--draft-max")  # removed from llama.cpp in 2026


def test_vllm_json_carries_the_draft_model_and_gamma() -> None:
    found = options(by_engine("draft-model")[VLLM].code)
    config = json.loads(found["--speculative-config"])
    assert set(config) <= set(flags_of(VLLM))
    assert config == {
        "method": "draft_model",
        "model": "Qwen/Qwen2.5-Coder-0.5B-Instruct",
        "num_speculative_tokens": 7,
    }


def test_vllm_json_for_prompt_lookup_uses_ngram_and_its_window() -> None:
    config = json.loads(
        options(by_engine("lookup:max_ngram=3,min_ngram=2")[VLLM].code)["--speculative-config"]
    )
    assert set(config) <= set(flags_of(VLLM))
    assert config == {
        "method": "ngram",
        "num_speculative_tokens": 7,
        "prompt_lookup_max": 3,
        "prompt_lookup_min": 2,
    }


@pytest.mark.parametrize(
    ("engine", "drafter", "expected"),
    [
        (
            LLAMA_CPP,
            "draft-model",
            {
                "-m": "qwen2.5-coder-1.5b-instruct.Q4_K_M.gguf",
                "-md": "qwen2.5-coder-0.5b-instruct.Q4_K_M.gguf",
                "--spec-type": "draft-simple",
                "--spec-draft-n-max": "7",
                "--spec-draft-n-min": "0",
                "--spec-draft-p-min": "0.25",
            },
        ),
        (
            LLAMA_CPP,
            "lookup:max_ngram=3",
            {
                "-m": "qwen2.5-coder-1.5b-instruct.Q4_K_M.gguf",
                "--spec-type": "ngram-simple",
                "--spec-ngram-simple-size-n": "3",
                "--spec-ngram-simple-size-m": "7",
            },
        ),
        (
            SGLANG,
            "draft-model",
            {
                "--model-path": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
                "--speculative-algorithm": "STANDALONE",
                "--speculative-draft-model-path": "Qwen/Qwen2.5-Coder-0.5B-Instruct",
                "--speculative-num-steps": "7",
                "--speculative-eagle-topk": "1",
                "--speculative-num-draft-tokens": "8",
            },
        ),
        (
            SGLANG,
            "lookup:max_ngram=3,min_ngram=2",
            {
                "--model-path": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
                "--speculative-algorithm": "NGRAM",
                "--speculative-num-draft-tokens": "8",
                "--speculative-ngram-min-match-window-size": "2",
                "--speculative-ngram-max-match-window-size": "3",
                "--speculative-ngram-max-bfs-breadth": "1",
            },
        ),
    ],
)
def test_server_commands_write_exactly_the_tabled_flags(
    engine: str, drafter: str, expected: dict[str, str]
) -> None:
    assert options(by_engine(drafter)[engine].code) == expected
    assert set(expected) <= set(flags_of(engine))


def test_llama_server_writes_none_of_the_removed_draft_flags() -> None:
    code = by_engine("draft-model")[LLAMA_CPP].code
    assert "--draft-max" not in code and "--draft-min" not in code and "--draft " not in code


def test_transformers_sets_the_assistants_generation_config() -> None:
    found = generate_options(by_engine("draft-model")[TRANSFORMERS].code)
    assert set(found) <= set(flags_of(TRANSFORMERS))
    assert found == {
        "num_assistant_tokens": 7,
        "num_assistant_tokens_schedule": "constant",
        "assistant_confidence_threshold": 0.25,
        "assistant_model": "assistant",
    }
    adaptive = replace(SETTINGS, adaptive_gamma=True)
    found = generate_options(by_engine("draft-model", adaptive)[TRANSFORMERS].code)
    assert found["num_assistant_tokens_schedule"] == "heuristic"


def test_transformers_prompt_lookup_and_early_exit() -> None:
    lookup = generate_options(by_engine("lookup:max_ngram=3")[TRANSFORMERS].code)
    assert lookup == {"prompt_lookup_num_tokens": 7, "max_matching_ngram_size": 3}
    early = generate_options(by_engine("layerskip:exit=14")[TRANSFORMERS].code)
    assert early == {"assistant_early_exit": 14, "num_assistant_tokens": 7}
    assert set(lookup) | set(early) <= set(flags_of(TRANSFORMERS))


def test_notes_say_what_has_no_counterpart() -> None:
    keys = {
        name: {note.key for note in snippet.notes}
        for name, snippet in by_engine("draft-model").items()
    }
    assert all("production.note.cumulative" in found for found in keys.values())
    # The per-token stop carries over to llama.cpp (--spec-draft-p-min) and transformers only.
    assert (
        "production.note.stop_below" in keys[VLLM] and "production.note.stop_below" in keys[SGLANG]
    )
    assert "production.note.stop_below" not in keys[LLAMA_CPP] | keys[TRANSFORMERS]
    no_stops = replace(SETTINGS, draft_stop_below=0.0, draft_stop_cumulative=0.0)
    for snippet in production_snippets(PRESET, "draft-model", no_stops):
        assert not {"production.note.cumulative", "production.note.stop_below"} & {
            n.key for n in snippet.notes
        }
    hybrid = by_engine("hybrid")
    assert all("production.note.drafter" in {n.key for n in s.notes} for s in hybrid.values())


def test_a_tree_is_sglangs_tree_and_a_chain_of_the_draft_model_elsewhere() -> None:
    """SGLang grows EAGLE-2's tree from a separate draft model: the dynamic tree's options carry
    over one for one, a fixed shape as its widest width and its node count (with a note)."""
    for drafter, steps, topk, verified in (
        ("tree", "6", "4", "17"),
        ("tree:nodes=32,depth=5,topk=8", "5", "8", "33"),
        ("tree:shape=2x2x1", "3", "2", "11"),
    ):
        snippets = by_engine(drafter)
        found = options(snippets[SGLANG].code)
        assert found["--speculative-algorithm"] == "STANDALONE"
        assert found["--speculative-num-steps"] == steps
        assert found["--speculative-eagle-topk"] == topk
        assert found["--speculative-num-draft-tokens"] == verified
        notes = {note.key for note in snippets[SGLANG].notes}
        assert ("production.note.tree_shape" in notes) == ("shape" in drafter)
        assert "production.note.drafter" not in notes
        # vLLM, llama.cpp and transformers verify a chain of the same draft model, and say so.
        assert json.loads(snippets[VLLM].code.split("'")[1])["method"] == "draft_model"
        assert options(snippets[LLAMA_CPP].code)["--spec-type"] == "draft-simple"
        for engine in (VLLM, LLAMA_CPP, TRANSFORMERS):
            assert "production.note.drafter" in {note.key for note in snippets[engine].notes}


def test_medusa_is_vllms_medusa_method_and_no_config_elsewhere() -> None:
    """vLLM serves the target's heads from the folder `heads export` writes; the others have no
    heads drafter, so they get no code and a note saying so."""
    for drafter, heads, only in (("medusa", 4, ""), ("medusa:heads=3,nodes=16", 3, " --heads 3")):
        snippets = by_engine(drafter)
        config = json.loads(options(snippets[VLLM].code)["--speculative-config"])
        assert set(config) <= set(flags_of(VLLM))
        assert config == {
            "method": "medusa",
            "model": "./Qwen2.5-Coder-1.5B-Instruct-medusa-heads",
            "num_speculative_tokens": heads,
        }
        notes = {note.key: note for note in snippets[VLLM].notes}
        assert "production.note.drafter" not in notes
        export = notes["production.note.medusa"]
        assert export.values["command"] == (
            f"python -m specviz heads export{only} ./Qwen2.5-Coder-1.5B-Instruct-medusa-heads"
        )
        for engine in (LLAMA_CPP, TRANSFORMERS, SGLANG):
            assert snippets[engine].code == ""
            assert [n.key for n in snippets[engine].notes] == ["production.note.no_equivalent"]


def test_cli_configs_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["configs", "--json", "--gamma", "6", "--drafter", "lookup"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [record["engine"] for record in records] == list(ENGINES)
    vllm = json.loads(options(records[0]["code"])["--speculative-config"])
    assert vllm["num_speculative_tokens"] == 6 and vllm["method"] == "ngram"
    assert all(record["version"] for record in records)


def test_cli_configs_text_heads_each_snippet_with_its_version(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["configs"]) == 0
    out = capsys.readouterr().out
    for engine in ENGINES.values():
        assert f"written for {engine.version}" in out
