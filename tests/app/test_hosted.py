"""Hosted mode without a server: detection, the caps written once in specviz.app.limits and
stated next to their controls, the hosted presets, the one-pair model cache and the ZeroGPU path
(with a stand-in ``spaces`` module that records what it decorates)."""

from __future__ import annotations

import dataclasses
import sys
import types

import gradio as gr
import pytest

from specviz.app import zerogpu
from specviz.app.limits import HOSTED, LOCAL, hosted_presets, limits_for, on_spaces
from specviz.app.session import App
from specviz.app.setting_controls import setting_controls
from specviz.core.settings import GenerationSettings
from specviz.models import loader, memory_room
from specviz.models.loader import ModelCache
from specviz.models.presets import ModelSource, default_preset, load_presets

PRESETS = load_presets()
DEFAULT = default_preset(PRESETS)


@pytest.mark.parametrize(
    ("environ", "hosted"),
    [({"SPACE_ID": "test/specviz"}, True), ({"SYSTEM": "spaces"}, True), ({}, False),
     ({"SPACE_ID": ""}, False), ({"SYSTEM": "local"}, False)],
)  # fmt: skip
def test_a_space_is_detected_from_its_environment(environ: dict, hosted: bool) -> None:
    assert on_spaces(environ) is hosted
    assert limits_for(on_spaces(environ)) is (HOSTED if hosted else LOCAL)


def test_hosted_caps_are_tighter_than_local_ones() -> None:
    assert HOSTED.hosted and not LOCAL.hosted
    for name in ("prompt_tokens", "prompt_chars", "exactness_samples", "speedup_budget_s"):
        assert getattr(HOSTED, name) < getattr(LOCAL, name)
    assert HOSTED.cap("max_new_tokens") < LOCAL.cap("max_new_tokens") == 512  # the slider's top
    assert HOSTED.cap("gamma") == 8 and LOCAL.cap("gamma") is None  # locally the schema's 16
    assert HOSTED.pairs_in_memory == 1 and HOSTED.queue_size is not None


def test_hosted_presets_take_no_path_and_no_remote_code() -> None:
    local = dataclasses.replace(DEFAULT, id="mine", draft=ModelSource("local", "/srv/model"))
    gguf = dataclasses.replace(DEFAULT, id="gguf", target=ModelSource("gguf", "/srv/m.gguf"))
    remote = dataclasses.replace(DEFAULT, id="remote", trust_remote_code=True)
    offered = hosted_presets({**PRESETS, "mine": local, "gguf": gguf, "remote": remote}, "all")
    assert set(offered) == set(PRESETS)  # the repository's presets are all hub or bundled
    with pytest.raises(gr.Error, match="Unknown preset 'mine'"):
        App(offered, ModelCache(), limits=HOSTED).checks.inputs("mine", "hi", {})


def test_each_cap_bounds_its_control_and_is_stated_beside_it() -> None:
    with gr.Blocks():
        controls = setting_controls(GenerationSettings(gamma=12), limits=HOSTED).components
    max_new, gamma = controls["max_new_tokens"], controls["gamma"]
    assert (max_new.maximum, gamma.maximum, gamma.value) == (256, 8, 8)
    assert "at most 256 here" in max_new.info and "at most 8 here" in gamma.info
    assert controls["top_k"].maximum == 1000 and "at most 1000 here" in controls["top_k"].info
    assert "here" not in controls["temperature"].info  # no cap: the schema's range


@pytest.mark.parametrize(
    ("limits", "settings", "message"),
    [(HOSTED, {"max_new_tokens": 300}, "Max new tokens must be at most 256 here, got 300"),
     (LOCAL, {"max_new_tokens": 600}, "Max new tokens must be at most 512 here, got 600"),
     (HOSTED, {"gamma": 9}, "γ must be at most 8 here, got 9"),
     (LOCAL, {"seed": 2**64}, "Seed must be between 0 and 18446744073709551615, got 1844")],
)  # fmt: skip
def test_requests_past_a_cap_are_refused(limits, settings: dict, message: str) -> None:
    with pytest.raises(gr.Error, match=message):
        App(PRESETS, ModelCache(), limits=limits).checks.inputs(DEFAULT.id, "hi", settings)


def test_a_prompt_longer_than_the_token_cap_is_refused(tiny_pair) -> None:
    from hosted_fixtures import TinyCache

    app = App(PRESETS, TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    pair = app.load(DEFAULT)
    fits = app.checks.inputs(DEFAULT.id, "a" * HOSTED.prompt_tokens, {}, chat=False)
    assert app.prompt_ids(fits, pair).shape == (1, HOSTED.prompt_tokens)
    long = app.checks.inputs(DEFAULT.id, "a" * (HOSTED.prompt_tokens + 1), {}, chat=False)
    with pytest.raises(gr.Error, match="1025 tokens long; this app takes at most 1024"):
        app.prompt_ids(long, pair)


def test_a_lab_size_past_its_cap_is_refused() -> None:
    app = App(PRESETS, ModelCache(), limits=HOSTED)
    app.checks.check_lab_size(
        HOSTED.exactness_samples, HOSTED.exactness_samples, "app.exactness.samples"
    )
    for sent in (5000, "abc", None):
        with pytest.raises(
            gr.Error, match=f"N samples per arm must be at most 2000 here, got {sent!r}"
        ):
            app.checks.check_lab_size(sent, HOSTED.exactness_samples, "app.exactness.samples")


# --- the model cache keeps at most max_pairs pairs ------------------------------------------------


@pytest.fixture
def counted_loads(monkeypatch, tmp_path) -> list[str]:
    """load_model and load_tokenizer replaced by tiny stand-ins that record each source loaded;
    the step costs measured at load are cached under tmp_path."""
    from tiny_models import OneWordVocab, tiny_qwen

    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))
    loads: list[str] = []

    def load_model(source, device, dtype, trust_remote_code=False, progress=None):
        loads.append(str(source))
        return tiny_qwen(len(loads))

    monkeypatch.setattr(loader, "load_model", load_model)
    monkeypatch.setattr(loader, "load_tokenizer", lambda source, trust, progress: OneWordVocab())
    monkeypatch.setattr(memory_room, "source_parameters", lambda source: 10**6)  # fits
    return loads


def _hub_pair(name: str, draft: str, target: str):
    return dataclasses.replace(
        DEFAULT,
        id=name,
        draft=ModelSource("hub", draft),
        target=ModelSource("hub", target),
        draft_quantization="none",
    )


def test_a_one_pair_cache_evicts_the_least_recently_used_pair(counted_loads) -> None:
    first, second = _hub_pair("one", "a/d", "a/t"), _hub_pair("two", "b/d", "b/t")
    cache = ModelCache(max_pairs=1)
    kept = cache.load_pair(first, device="cpu", dtype="float32")
    assert cache.load_pair(first, device="cpu", dtype="float32").target is kept.target  # reused
    cache.load_pair(second, device="cpu", dtype="float32")
    assert cache.loaded_pairs() == ["two|none|cpu|torch.float32"]
    cache.load_pair(first, device="cpu", dtype="float32")  # loaded again: it was evicted
    # The target first: the draft is fitted to its vocabulary as it loads.
    assert counted_loads == ["hub:a/t", "hub:a/d", "hub:b/t", "hub:b/d", "hub:a/t", "hub:a/d"]


def test_a_cache_without_a_limit_keeps_every_pair(counted_loads) -> None:
    cache = ModelCache()
    for pair in (_hub_pair("one", "a/d", "a/t"), _hub_pair("two", "b/d", "b/t")):
        cache.load_pair(pair, device="cpu", dtype="float32")
    cache.load_pair(_hub_pair("one", "a/d", "a/t"), device="cpu", dtype="float32")
    assert len(counted_loads) == 4 and len(cache.loaded_pairs()) == 2


def test_an_evicted_pair_shares_its_models_with_those_kept(counted_loads) -> None:
    cache = ModelCache(max_pairs=1)
    cache.load_pair(_hub_pair("one", "a/d", "a/t"), device="cpu", dtype="float32")
    cache.load_pair(_hub_pair("two", "a/d", "b/t"), device="cpu", dtype="float32")
    # The shared draft is reused: the pair in use is dropped only after the next one loaded.
    assert counted_loads == ["hub:a/t", "hub:a/d", "hub:b/t"]


# --- ZeroGPU, with a stand-in spaces module -------------------------------------------------------


@pytest.fixture
def stand_in_spaces(monkeypatch) -> types.ModuleType:
    """``spaces`` as ZeroGPU runs it (tests/fake_spaces.py: each call in a forked worker, pickled
    both ways): ``decorated`` names each function decorated, ``calls`` each call's duration."""
    import fake_spaces

    fake_spaces.install(monkeypatch)
    return fake_spaces


def test_without_zerogpu_handlers_are_left_alone(monkeypatch) -> None:
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    handler = lambda: None  # noqa: E731
    assert not zerogpu.zero_gpu() and zerogpu.on_gpu(handler, zerogpu.longest) is handler
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    monkeypatch.setitem(sys.modules, "spaces", None)  # flagged, but the package is absent
    assert not zerogpu.zero_gpu() and zerogpu.on_gpu(handler, zerogpu.longest) is handler


def test_gpu_seconds_grow_with_the_tokens_asked_and_stay_within_zerogpus_limit() -> None:
    assert zerogpu.gpu_seconds(0) == zerogpu.GPU_BASE_S
    assert zerogpu.gpu_seconds(8) < zerogpu.gpu_seconds(256) <= zerogpu.GPU_MAX_S
    assert zerogpu.gpu_seconds(10**9) == zerogpu.GPU_MAX_S


@pytest.mark.forks
def test_on_zerogpu_every_model_handler_runs_inside_spaces_gpu(stand_in_spaces) -> None:
    from gradio_client import Client
    from hosted_fixtures import TinyCache

    from specviz.app.builder import build_demo, launch_options, queue_options

    demo = build_demo(PRESETS, TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    names = sorted(stand_in_spaces.decorated)
    # Only the model work is decorated (specviz.app.gpu_work): a run (Run, Step, /generate), a
    # race, a lab (each of the five, by name). tests/test_zerogpu.py crosses it to a process.
    assert names == ["worker_lab", "worker_race", "worker_run"]
    assert demo.delete_cache == HOSTED.delete_cache  # Gradio's temporary files are cleaned
    demo.queue(**queue_options(HOSTED))
    _, url, _ = demo.launch(
        server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options(HOSTED)
    )
    try:
        client = Client(url, verbose=False)
        _text, stats = client.predict("Hello", max_new_tokens=8, api_name="/generate")
        client.predict("Hello", api_name="/generate")  # the preset's max new tokens
    finally:
        demo.close()
    assert stats["totals"]["new_tokens"] == 8
    asked = DEFAULT.settings.max_new_tokens
    assert stand_in_spaces.calls == [
        ("worker_run", zerogpu.gpu_seconds(8)),
        ("worker_run", zerogpu.gpu_seconds(asked)),
    ]


def test_the_queue_is_bounded_in_hosted_mode() -> None:
    from specviz.app.builder import launch_options, queue_options

    assert queue_options(HOSTED) == {"max_size": HOSTED.queue_size}
    assert queue_options(LOCAL) == {"max_size": None}
    assert launch_options(HOSTED)["max_file_size"] == "12mb"  # a trace to replay
    assert launch_options(LOCAL)["max_file_size"] == "20mb"


def test_the_readme_opens_with_spaces_front_matter_matching_the_pinned_gradio() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    lines = (root / "README.md").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "---"
    front = lines[1 : lines.index("---", 1)]
    fields = dict(line.split(": ", 1) for line in front if ": " in line and line[0] != " ")
    pinned = next(
        line.split("==")[1]
        for line in (root / "requirements.txt").read_text().splitlines()
        if line.startswith("gradio==")
    )
    assert (fields["sdk"], fields["sdk_version"], fields["app_file"]) == (
        "gradio",
        pinned,
        "app.py",
    )
    assert len(fields["short_description"]) <= 60  # the Hub's limit
    hub_models = {
        source.ref
        for preset in PRESETS.values()
        for source in (preset.draft, preset.target)
        if source.kind == "hub"
    }
    preloaded = [line.strip()[2:] for line in front[front.index("preload_from_hub:") + 1 :]]
    assert preloaded and set(preloaded) <= hub_models  # preloads only what a preset loads


def test_hosted_lab_sizes_stop_at_their_caps_stated_beside_them() -> None:
    from specviz.app.builder import build_demo

    def sliders(limits) -> dict:
        demo = build_demo(PRESETS, ModelCache(), limits=limits)
        components = demo.config["components"]
        return {
            item["props"]["label"]: item["props"]
            for item in components
            if item["type"] == "slider" and item["props"].get("label")
        }

    hosted, local = sliders(HOSTED), sliders(LOCAL)
    for label, cap in [("N samples per arm", 2000), ("Time budget (s)", 60),
                       ("Up to this many new tokens", 8), ("Prompts per task", 2)]:  # fmt: skip
        assert hosted[label]["maximum"] == cap
        assert hosted[label]["info"] == f"at most {cap} here"
        assert local[label]["maximum"] > cap and not local[label].get("info")


@pytest.mark.forks
def test_on_zerogpu_the_bilingual_site_runs_every_page_inside_spaces_gpu(stand_in_spaces) -> None:
    """app.py serves site.bilingual_app: each language's page decorates its own handlers, and
    a run on either page goes through spaces.GPU with its duration."""
    from gradio_client import Client
    from hosted_fixtures import TinyCache

    from specviz.app.language_switch import LANGUAGE_PATHS
    from specviz.app.site import bilingual_app, serve

    running = serve(bilingual_app(PRESETS, TinyCache(), limits=HOSTED))  # type: ignore[arg-type]
    try:
        names = sorted(stand_in_spaces.decorated)
        pages = len(LANGUAGE_PATHS)
        assert names == sorted(["worker_lab", "worker_race", "worker_run"] * pages)
        for path in LANGUAGE_PATHS.values():
            page = running.url + (f"{path}/" if path else "")
            _text, stats = Client(page, verbose=False).predict(
                "Hello", max_new_tokens=4, api_name="/generate"
            )
            assert stats["totals"]["new_tokens"] == 4
    finally:
        running.close()
    assert stand_in_spaces.calls == [("worker_run", zerogpu.gpu_seconds(4))] * pages


def test_a_hosted_server_keeps_a_bounded_number_of_visitor_sessions() -> None:
    """Gradio keeps every visitor session (at least a copy of each component's config) until it
    holds state_session_capacity of them, 10,000 by default, so a Space serving strangers only
    grew. Hosted mode keeps fewer, on both ways of serving a page (demo.launch, and the bilingual
    site's mount), and drops the least recently used."""
    from gradio_client import Client
    from hosted_fixtures import TinyCache

    from specviz.app.builder import build_demo, launch_options, mount_options

    assert HOSTED.sessions_kept < 1000 <= LOCAL.sessions_kept
    assert launch_options(HOSTED)["state_session_capacity"] == HOSTED.sessions_kept
    assert "state_session_capacity" not in mount_options(HOSTED)  # mount takes no such option
    few = dataclasses.replace(HOSTED, sessions_kept=3)
    demo = build_demo(load_presets(), TinyCache(), limits=few, startup=False)  # type: ignore[arg-type]
    assert demo.state_session_capacity == 3  # what a mount reads
    demo.queue()
    _, url, _ = demo.launch(
        server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_options(few)
    )
    try:
        for _ in range(6):  # six visitors, each its own session
            Client(url, verbose=False).predict(api_name="/health")
        assert len(demo.state_holder.session_data) == 3
    finally:
        demo.close()


def test_every_visitor_run_hands_freed_memory_back(monkeypatch) -> None:
    """A hosted server's resident set crept up run after run (glibc keeps freed KV caches in
    per-thread arenas); each run's end trims them, whatever way the run ended."""
    import specviz.app.session as session_module
    from specviz.models.allocator import return_freed_memory

    assert return_freed_memory() is (sys.platform == "linux")  # glibc here; nothing elsewhere
    trims: list[bool] = []
    monkeypatch.setattr(session_module, "return_freed_memory", lambda: trims.append(True))
    app = App(load_presets(), ModelCache(), limits=HOSTED)
    with app.one_run("visitor"):
        pass
    with pytest.raises(RuntimeError), app.one_run("visitor"):
        raise RuntimeError("a run that failed")
    assert trims == [True, True]


def test_a_hosted_visitor_never_starts_training_heads(tiny_pair, monkeypatch, tmp_path) -> None:
    """Medusa's heads train on first use locally; a hosted app's visitor gets the untrained
    heads' message when the drafter is built instead of minutes of training on the engine."""
    from hosted_fixtures import TinyCache

    from specviz.drafters import registry

    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path))  # no heads filed for the tiny target
    prepared: list[str] = []
    monkeypatch.setattr(registry, "prepare_drafter", lambda spec, *_: prepared.append(str(spec)))
    import specviz.app.session as session_module

    monkeypatch.setattr(session_module, "prepare_drafter", registry.prepare_drafter)
    for limits, expected in ((HOSTED, []), (LOCAL, ["medusa"])):
        prepared.clear()
        app = App(PRESETS, TinyCache(), limits=limits)  # type: ignore[arg-type]
        inputs = app.checks.inputs(DEFAULT.id, "def f(x):", {}, chat=False, drafter="medusa")
        app.load_with_prompt(inputs)
        assert prepared == expected
