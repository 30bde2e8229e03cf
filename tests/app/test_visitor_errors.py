"""No raw internals reach a visitor: what a prober of a hosted server found, row by row.

A lone surrogate in the prompt, a prompt that is no text, the status line while a long prompt is
read, a refusal shown on the input it is about, /run and /step values past a control's range, an
unexpected failure in a handler, and the command line's --device, output files and preset files:
each is answered in the catalogue's words, in one line where it is a command's.

The hosted app runs on two tiny models (hosted_fixtures.tiny_app) and is driven with
gradio_client or a hand-built request, as a stranger's script would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import gradio as gr
import pytest
from hosted_fixtures import PROMPT, RUN

from specviz.app.limits import HOSTED
from specviz.app.refusals import Refusal, refusing
from specviz.app.session import App
from specviz.models.loader import ModelCache
from specviz.models.presets import load_presets

ROOT = Path(__file__).resolve().parents[2]
PRESETS = load_presets()
PRESET = "qwen2.5-coder-bundled"
# Where /run's positional inputs (test_hosted_api.RUN) hold these values.
AT = {"prompt": 2, "gamma": 4, "temperature": 7, "seed": 10, "max_new_tokens": 11}


def run_args(**values: object) -> list[object]:
    """/run's (and /step's) positional inputs with some replaced by name."""
    args = list(RUN)
    for name, value in values.items():
        args[AT[name]] = value
    return args


def refused_fields(message: str) -> list[str]:
    """The parameters a gradio_client ValidationError names ("- gamma: ..." lines)."""
    return [line[2:].split(":", 1)[0] for line in message.splitlines() if line.startswith("- ")]


# --- 1. a lone surrogate is refused before the queue, naming its code point ---------------------


def test_a_lone_surrogate_is_refused_in_words_in_both_languages() -> None:
    for lang, words in (("en", "lone surrogate (U+D800)"), ("ja", "サロゲート（U+D800）")):
        with pytest.raises(Refusal) as refused:
            App(PRESETS, ModelCache(), lang=lang, limits=HOSTED).checks.check_prompt("\ud800abc")
        assert words in refused.value.message
        assert refused.value.fields.keys() == {"prompt"}
    with pytest.raises(Refusal, match="U\\+DFFF"):
        App(PRESETS, ModelCache()).checks.check_prompt("ok \udfff")


def test_noncharacters_and_surrogate_pairs_are_text() -> None:
    # The tokenizer takes U+FFFE, U+FFFF and U+FDD0; a pair (an emoji) is one character.
    App(PRESETS, ModelCache(), limits=HOSTED).checks.check_prompt("a\ufffe\uffff\ufdd0 😀 b")


def test_a_lone_surrogate_is_refused_before_the_queue(client, url: str) -> None:
    # gradio_client cannot send one (it encodes UTF-8); JSON's \ud800 escape carries it.
    request = urllib.request.Request(
        url + "gradio_api/call/generate",
        # /generate's 16 values: prompt, preset, 11 settings (None: the preset's), the switches
        # and the drafter; json.dumps writes the surrogate as the ASCII escape "\\ud800".
        data=json.dumps({"data": ["\ud800abc", PRESET, *[None] * 11, True, False, None]}).encode(),
        headers={"Content-Type": "application/json"},
    )
    began = time.perf_counter()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert time.perf_counter() - began < 5
    assert refused.value.code == 422  # the validator's answer, before any queue slot
    detail = json.loads(refused.value.read())["detail"]
    invalid = [item for item in detail if item.get("is_valid") is False]
    assert [item["parameter_name"] for item in invalid] == ["prompt"]
    assert "U+D800" in invalid[0]["message"]
    _serves(client)


# --- 4. a prompt that is no text is told so, not called empty ------------------------------------


@pytest.mark.parametrize(
    ("prompt", "got"),
    [(5, "integer 5"), (None, "null"), (["a"], "array"), (True, "boolean true")],
    ids=["number", "null", "list", "boolean"],
)
def test_a_prompt_that_is_no_text_is_told_so(client, prompt: object, got: str) -> None:
    from gradio_client.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        client.predict(prompt, api_name="/generate")
    message = str(refused.value)
    assert f"The prompt must be text, got {got}." in message
    assert "empty" not in message
    assert refused_fields(message) == ["prompt"]


def test_a_prompt_that_is_no_text_is_told_so_in_japanese() -> None:
    with pytest.raises(Refusal) as refused:
        App(PRESETS, ModelCache(), lang="ja").checks.check_prompt(5)
    assert refused.value.message.startswith("プロンプトはテキストでなければなりません")


# --- 2. the status line while a long prompt is read is one status, not markup in text -----------


def test_the_reading_status_is_wrapped_once() -> None:
    from specviz.app.live_tab import live_tab, reading_status
    from specviz.app.session import Session
    from specviz.core.events import Prefill

    with gr.Blocks():
        live = live_tab("en")
    update = live.views(Session(), reading_status(Prefill(256, 1024)), "info", charts_too=False)
    status = update[live.status]
    assert status.count('<div class="sv-status') == 1
    assert "&lt;div" not in status
    assert "Reading the prompt: 256 / 1,024 tokens" in status


def test_a_long_prompt_shows_its_reading_status_once(client) -> None:
    # Over 256 tokens (one chunk): the prompt is read in chunks, each shown on the status line.
    job = client.submit(*run_args(prompt="x" * 400, max_new_tokens=2), api_name="/step")
    job.result()
    reading = [out[0] for out in job.outputs() if "Reading the prompt" in out[0]]
    assert reading, "no status while the prompt was read"
    for status in reading:
        assert status.count('<div class="sv-status') == 1
        assert "&lt;" not in status


# --- 3. a refusal is shown on the input it is about ----------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "field", "words"),
    [
        ({"gamma": 17}, "gamma", "γ must be at most 8 here, got 17"),
        ({"temperature": 9}, "temperature", "Temperature must be between 0 and 2"),
        ({"preset": "no-such-pair"}, "preset", "Unknown preset 'no-such-pair'"),
        ({"drafter": "nonsense"}, "drafter", "unknown drafter"),
        ({"chat_template": None}, "chat_template", "chat_template must be true or false"),
    ],
    ids=["gamma", "temperature", "preset", "drafter", "chat switch"],
)
def test_a_refusal_names_its_field(client, arguments: dict, field: str, words: str) -> None:
    from gradio_client.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        client.predict(PROMPT, api_name="/generate", **arguments)
    assert refused_fields(str(refused.value)) == [field]
    assert words in str(refused.value)


def test_each_refused_setting_is_shown_on_its_own_field(client) -> None:
    from gradio_client.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        client.predict(PROMPT, gamma=0, top_p=1.5, api_name="/generate")
    assert sorted(refused_fields(str(refused.value))) == ["gamma", "top_p"]


def test_the_validator_marks_the_refused_input() -> None:
    def refuse(error: gr.Error):
        def check(*_: object) -> None:
            raise error

        return refusing(check, ["session", "prompt", "gamma"], "prompt")

    def invalid(answers: tuple) -> list[tuple[int, str]]:
        return [(at, a["message"]) for at, a in enumerate(answers) if not a["is_valid"]]

    assert invalid(refuse(Refusal.about("gamma", "too big"))()) == [(2, "too big")]
    # A plain gr.Error, or a refusal of an input the event does not have: on the prompt.
    assert invalid(refuse(gr.Error("no"))()) == [(1, "no")]
    assert invalid(refuse(Refusal.about("top_k", "no"))()) == [(1, "no")]


# --- 5. /run and /step values past a control's range: the catalogue's words, not a bare 400 ------


@pytest.mark.parametrize(
    ("endpoint", "values", "field", "words"),
    [
        ("/run", {"gamma": 999}, "gamma", "γ must be at most 8 here, got 999"),
        ("/step", {"max_new_tokens": -1}, "max_new_tokens", "Max new tokens must be between 1"),
        ("/run", {"temperature": -3}, "temperature", "Temperature must be between 0 and 2"),
        ("/step", {"seed": "abc"}, "seed", "got string 'abc'"),
    ],
    ids=["run gamma 999", "step max new tokens -1", "run temperature -3", "step seed abc"],
)
def test_run_and_step_refuse_out_of_range_values_in_words(
    client, endpoint: str, values: dict, field: str, words: str
) -> None:
    import httpx
    from gradio_client.exceptions import ValidationError

    try:
        client.predict(*run_args(**values), api_name=endpoint)
    except httpx.HTTPStatusError as bare:  # Gradio's own preprocess refused it: no words
        pytest.fail(f"answered {bare.response.status_code} without the catalogue's words")
    except ValidationError as refused:
        assert refused_fields(str(refused)) == [field]
        assert words in str(refused)
    else:
        pytest.fail("not refused")


def test_run_refuses_an_unknown_preset_in_words(client) -> None:
    from gradio_client.exceptions import ValidationError

    args = list(RUN)
    args[0] = "no-such-pair"
    with pytest.raises(ValidationError, match="Unknown preset 'no-such-pair'"):
        client.predict(*args, api_name="/run")


# --- 6. an unexpected failure shows no raw text to a visitor -------------------------------------


def test_the_hosted_mount_hides_exception_text() -> None:
    from specviz.app.builder import launch_options, mount_options

    assert mount_options(HOSTED)["show_error"] is False
    assert launch_options(HOSTED)["show_error"] is False


def test_an_unexpected_failure_is_worded_without_its_cause(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = RuntimeError("KeyError: '/srv/secret/cache' at engine.py:42")
    for lang in ("en", "ja"):
        hosted = App(PRESETS, ModelCache(), lang=lang, limits=HOSTED)
        message = hosted.failure("app.doing.generating", error).message
        assert "secret" not in message and "engine.py" not in message
    assert "/srv/secret/cache" in capsys.readouterr().err  # the operator reads the cause
    local = App(PRESETS, ModelCache()).failure("app.doing.generating", error).message
    assert "/srv/secret/cache" in local  # one's own machine shows it


class FailingCache:
    """A model cache whose every load fails with internals in its words."""

    def load_pair(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("CUDA driver at /srv/secret/lib64 crashed")


def test_a_hosted_handler_that_fails_shows_the_catalogues_words() -> None:
    from gradio_client import Client
    from gradio_client.exceptions import AppError
    from hosted_fixtures import launch

    demo, url = launch(FailingCache(), HOSTED)
    try:
        with pytest.raises(AppError) as failed:
            Client(url, verbose=False).predict(PROMPT, api_name="/generate")
    finally:
        demo.close()
    assert "Something went wrong while loading" in str(failed.value)
    assert "secret" not in str(failed.value)


# --- 7. the command line: one line, before any work -----------------------------------------------


def test_a_missing_device_is_refused_in_one_line_before_loading() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "specviz", "generate", "--device", "cuda:7", "--prompt", "x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # no loading progress, no traceback
    assert "cuda:7" in lines[0] and "Traceback" not in done.stderr
    assert time.perf_counter() - began < 30


@pytest.mark.parametrize("option", ["--trace", "--csv", "--report"])
def test_an_output_file_in_a_missing_folder_is_refused_before_loading(
    option: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from specviz.cli import options
    from specviz.cli.main import main

    def no_loading(*args: object, **kwargs: object) -> None:
        raise AssertionError("loaded the models before checking the output's folder")

    monkeypatch.setattr(options, "load_pair_for", no_loading)
    missing = tmp_path / "some" / "missing" / "folder"
    code = main(["generate", "--prompt", "x", option, str(missing / "out.file")])
    assert code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert option in lines[0] and str(missing) in lines[0]


GOOD = """\
id = "{id}"
label = "Test pair"
draft = "hub:Qwen/Qwen2.5-0.5B-Instruct"
target = "hub:Qwen/Qwen2.5-7B-Instruct"
dtype = "bfloat16"
{default}
[prompts]
code = ["Write a function."]
"""


def preset_folder(folder: Path, bad_is_default: bool) -> Path:
    """A preset folder with one good preset and one bad file (broken TOML); the good one is the
    default unless *bad_is_default*. Returns the bad file."""
    default = "" if bad_is_default else "default = true"
    (folder / "good.toml").write_text(GOOD.format(id="good", default=default), encoding="utf-8")
    bad = folder / "broken.toml"
    bad.write_text('id = "broken"\ndefault = true\nlabel = [unclosed\n', encoding="utf-8")
    return bad


def test_a_bad_preset_file_is_left_out_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from specviz.models import presets

    bad = preset_folder(tmp_path, bad_is_default=False)
    monkeypatch.setattr(presets, "PRESETS_DIR", tmp_path)
    assert list(presets.served_presets()) == ["good"]
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert str(bad) in lines[0] and lines[0].startswith("warning:")
    # The command line lists the others the same way.
    from specviz.cli.main import main

    assert main(["presets"]) == 0
    out = capsys.readouterr()
    assert "good" in out.out and len(out.err.strip().splitlines()) == 1


def test_a_bad_default_preset_file_stops_the_server_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from specviz.models import presets

    bad = preset_folder(tmp_path, bad_is_default=True)
    monkeypatch.setattr(presets, "PRESETS_DIR", tmp_path)
    with pytest.raises(SystemExit) as stopped:
        presets.served_presets(lang="ja")
    assert stopped.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert str(bad) in lines[0] and lines[0].startswith("エラー：")


def _serves(client) -> None:
    """The server still answers a good request."""
    _text, stats = client.predict(PROMPT, max_new_tokens=4, api_name="/generate")
    assert stats["totals"]["new_tokens"] >= 1
