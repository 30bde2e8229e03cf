"""What one visitor may ask of the app, written once: the local limits and the hosted ones.

The settings schema (``specviz.core.settings``) holds every value a setting can take at all (the
CLI and presets use its whole range); the app narrows some of them here. Each cap is applied in
two places from this one table: the control's range (with the cap stated in its info text) and
the check every request passes, so an API call cannot ask for what the sliders never allow.

Hosted mode (a Hugging Face Space, detected from its environment, or ``python app.py --hosted``)
tightens the caps for a room of strangers sharing one engine, keeps one pair in memory and bounds
the queue. ``limits_for(hosted)`` is the one entry point.
"""

from __future__ import annotations

import os
import types
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from specviz.core.engine import PREFILL_CHUNK
from specviz.core.settings import SettingError, settings_schema
from specviz.export.trace import MAX_TRACE_BYTES
from specviz.models.presets import Preset, default_preset
from specviz.text import Phrase, UserError


def slider_high(name: str) -> int:
    """The top of the schema's slider for setting *name*: the app takes no more than it shows."""
    item = next(item for item in settings_schema() if item.name == name)
    if item.slider_range is None:
        raise ValueError(f"setting {name!r} has no slider")
    return int(item.slider_range[1])


@dataclass(frozen=True)
class Limits:
    """The caps one visitor's requests are held to, and how the server shares itself out."""

    hosted: bool
    # The prompt's length in tokens after the chat template: a long prompt is read in chunks
    # (prefill_chunk) before the first cycle, so its cost and memory are bounded here.
    prompt_tokens: int
    # The prompt's length in characters: checked before anything is loaded or tokenized.
    prompt_chars: int
    # The highest value the app takes for a setting, by setting name (below the schema's own).
    setting_caps: Mapping[str, int]
    exactness_samples: int  # the exactness lab's N per arm
    task_prompts: int  # the task lab's prompts per task
    task_repeats: int  # the task lab's repeats of every prompt
    speedup_budget_s: int  # the speedup lab's time budget
    cost_sizes: int  # the cost curve's largest verification size
    advisor_tokens: int  # the draft advisor's new tokens per run
    race_drafters: int  # the race's drafter lanes (plain decoding is always one more)
    race_repeats: int  # the race's repeats per lane
    advisor_budget_s: int  # the draft advisor's time budget
    # Whether the advisor may load the draft at other formats than the preset's (a pair each).
    advisor_formats: bool
    queue_size: int | None  # events waiting at most; a full queue tells the visitor to retry
    pairs_in_memory: int | None  # loaded pairs kept (least recently used evicted); None: all
    # Engine seconds one run may hold (its prompt and cycles, not its race); None: no limit.
    run_seconds: float | None = None
    # Prompt tokens per forward while a long prompt is read: Stop waits at most one chunk.
    prefill_chunk: int = PREFILL_CHUNK
    # The largest trace read for a replay, in whole MB of bytes: Gradio's cap on an upload (the
    # one file the app takes) and read_trace's own, since Gradio's holds per request.
    trace_bytes: int = MAX_TRACE_BYTES
    # A replay plays at its measured speed for at most this long; a longer run plays faster
    # (and says so), so an upload holds a worker thread for this long at most.
    replay_seconds: float = 300.0
    # Replays playing at once (uploads and --replay pages share the "replay" queue), each one
    # a worker thread while it plays; a visitor plays one at a time.
    replay_concurrency: int = 16
    # Replays waiting at most, in a line of their own beside the queue (ServerQueue): a burst of
    # uploads never takes a visitor's place in the line to run a model. None: the main line.
    replay_waiting: int | None = None
    # Cycles a session keeps after a replay, for the inspector (None: all): a session outlives
    # its replay, and the server keeps sessions_kept of them.
    replay_cycles_kept: int | None = None
    # Uploaded traces checked at once when their uploads are pushed, before the replay line
    # (each check parses the file on a worker thread); others wait their turn.
    trace_checks: int = 2
    # Gradio's temporary files: every hour, those older than an hour are deleted.
    delete_cache: tuple[int, int] = (3600, 3600)
    # Visitor sessions Gradio keeps, least recently used dropped first (a dropped visitor's paused
    # run is gone; Run starts again). Each holds at least a copy of every component's config
    # (0.35 MB on this page) and Gradio drops none before this many (its default is 10,000), so a
    # Space serving strangers would only grow (docs/hosting.md, "Memory over many runs").
    sessions_kept: int = 10_000

    @property
    def max_file_size(self) -> str:
        """Gradio's cap on an upload ("12mb"): the largest trace this app reads."""
        return f"{self.trace_bytes // 2**20}mb"

    def cap(self, name: str) -> int | None:
        """The app's highest value for a setting, or None where the schema's range holds."""
        return self.setting_caps.get(name)

    def check_settings(self, values: Mapping[str, object]) -> None:
        """Raise a SettingError naming every number in *values* (settings by name, as sent or
        as a GenerationSettings' fields) above its setting's cap ("at most 256 here"); other
        values are the schema's to check."""
        problems = []
        for item in settings_schema():
            cap = self.cap(item.name)
            value = values.get(item.name)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if cap is not None and number and value > cap:  # type: ignore[operator]
                reason = Phrase("error.setting.must_be", requirement=at_most(cap), got=repr(value))
                problems.append(item.problem(reason))
        if problems:
            raise SettingError(problems)

    def check_prompt_tokens(self, count: int) -> None:
        """Raise a UserError when a prompt of *count* tokens is longer than the cap."""
        if count > self.prompt_tokens:
            raise UserError("error.app.prompt_long", tokens=count, cap=self.prompt_tokens)


def at_most(cap: int) -> Phrase:
    """A cap in words, for a control's info text and an error: "at most 256 here"."""
    return Phrase("app.limit.at_most", value=cap)


# The app on one's own machine: the schema's ranges, except where the app's controls stop short.
LOCAL = Limits(
    hosted=False,
    prompt_tokens=4096,
    prompt_chars=32768,
    setting_caps=types.MappingProxyType(
        {"max_new_tokens": slider_high("max_new_tokens"), "top_k": 1000}
    ),
    exactness_samples=5000,
    task_prompts=3,
    task_repeats=5,
    speedup_budget_s=300,
    cost_sizes=16,
    advisor_tokens=64,
    race_drafters=3,
    race_repeats=5,
    advisor_budget_s=300,
    advisor_formats=True,
    queue_size=None,
    pairs_in_memory=None,
)

# A public Space: a room of visitors shares one engine, so each request is kept short.
HOSTED = Limits(
    hosted=True,
    prompt_tokens=1024,
    prompt_chars=8192,
    setting_caps=types.MappingProxyType({"max_new_tokens": 256, "gamma": 8, "top_k": 1000}),
    exactness_samples=2000,
    task_prompts=2,
    task_repeats=3,
    speedup_budget_s=60,
    cost_sizes=8,
    advisor_tokens=16,
    # Each lane and repeat decodes the request's tokens again: 2 drafters x 3 repeats is 9 runs.
    race_drafters=2,
    race_repeats=3,
    advisor_budget_s=60,
    # One pair in memory: another draft format would evict the pair the room is using.
    advisor_formats=False,
    queue_size=40,
    pairs_in_memory=1,
    run_seconds=120,
    sessions_kept=120,  # a room of 30 to 60, each reloading a few times
    # A hosted run's trace (256 tokens, a race of 2 drafters and plain decoding, γ up to 8) is
    # 3.0 MB at γ 5 when 9 drafts in 10 pass, 4.8 MB at 7 in 10, 6.7 MB at γ 8 and 7 in 10, 10.5
    # MB at γ 8 and 5 in 10; only a run whose drafts mostly fail goes past (20 MB when every
    # first draft fails). Read back, a trace holds about 1.6 times its size (3.4 times while it is
    # parsed); after the replay a visitor's session keeps replay_cycles_kept cycles of it.
    trace_bytes=12 * 2**20,
    replay_seconds=60.0,  # the room's visitors wait for replays' threads at most this long
    replay_concurrency=4,
    replay_waiting=8,
    # A hosted run makes at most 256 cycles (one token each at least), so a hosted trace keeps
    # them all; a longer uploaded one keeps this many for the inspector (5 to 10 MB a session).
    replay_cycles_kept=256,
)


def limits_for(hosted: bool) -> Limits:
    """The hosted limits or the local ones."""
    return HOSTED if hosted else LOCAL


def on_spaces(environ: Mapping[str, str] = os.environ) -> bool:
    """True on a Hugging Face Space: it sets SPACE_ID (Gradio itself checks SYSTEM=spaces)."""
    return bool(environ.get("SPACE_ID")) or environ.get("SYSTEM") == "spaces"


# The hosted presets a host allows (comma-separated ids, or "all"): the pair a room shares is the
# host's choice; without this only the default (the bundled pair) is offered.
HOSTED_PRESETS_VARIABLE = "SPECVIZ_HOSTED_PRESETS"


def hosted_presets(
    presets: Mapping[str, Preset], allowed: Collection[str] | str | None = None
) -> dict[str, Preset]:
    """The presets a hosted app offers: those the host *allowed* (ids, or "all"; None: the
    default preset alone), and of those only models from the hub or the bundle (no folder or
    GGUF path of the server's), never with remote code. Visitors choose among these by id only;
    an allowed id that is not a preset raises a UserError naming it."""
    if allowed is None or allowed == "":
        allowed = [default_preset(presets).id]
    elif isinstance(allowed, str):
        allowed = list(presets) if allowed.strip() == "all" else allowed.split(",")
    wanted = [name.strip() for name in allowed if name.strip()]
    unknown = [name for name in wanted if name not in presets]
    if unknown:
        raise UserError(
            "error.app.hosted_presets", names=", ".join(unknown), known=", ".join(presets)
        )
    offered = {
        preset_id: preset
        for preset_id, preset in presets.items()
        if preset_id in wanted
        and not preset.trust_remote_code
        and all(source.kind in ("hub", "bundled") for source in (preset.draft, preset.target))
    }
    if not offered:
        raise UserError("error.app.hosted_presets_none", names=", ".join(wanted))
    return offered
