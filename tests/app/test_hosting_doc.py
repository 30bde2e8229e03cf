"""docs/hosting.md quotes the code's limits: its cap table and the numbers in its prose are read
here and compared with specviz.app.limits, so a changed cap cannot leave the page behind."""

from __future__ import annotations

import re
from pathlib import Path

from specviz.app.limits import HOSTED, LOCAL, Limits

DOC = (Path(__file__).resolve().parents[2] / "docs" / "hosting.md").read_text(encoding="utf-8")


def _gamma(limits: Limits) -> int:
    return limits.cap("gamma") or 16  # the schema's γ range tops out at 16


# Each row of the cap table by its first cell, and what it quotes from a Limits (None: the row
# says there is no limit: "all", "unbounded", "no limit").
ROWS = {
    "prompt, characters (checked before tokenizing)": lambda lim: lim.prompt_chars,
    "prompt, tokens after the chat template": lambda lim: lim.prompt_tokens,
    "max new tokens": lambda lim: lim.cap("max_new_tokens"),
    "γ": _gamma,
    "top-k": lambda lim: lim.cap("top_k"),
    "exactness lab, N per arm": lambda lim: lim.exactness_samples,
    "task lab, prompts per task": lambda lim: lim.task_prompts,
    "task lab, repeats": lambda lim: lim.task_repeats,
    "race, drafter lanes (plain decoding is one more)": lambda lim: lim.race_drafters,
    "race, repeats per lane": lambda lim: lim.race_repeats,
    "speedup lab, time budget": lambda lim: lim.speedup_budget_s,
    "cost curve, largest size": lambda lim: lim.cost_sizes,
    "pairs in memory": lambda lim: lim.pairs_in_memory,
    "queue, events waiting on all pages together": lambda lim: lim.queue_size,
    "engine seconds per run": lambda lim: lim.run_seconds,
    "prompt tokens per forward while a long prompt is read": lambda lim: lim.prefill_chunk,
    "trace upload and read, MB": lambda lim: lim.trace_bytes // 2**20,
    "replay, longest wall time": lambda lim: lim.replay_seconds,
    "replays playing at once": lambda lim: lim.replay_concurrency,
    "replays waiting, in a line of their own": lambda lim: lim.replay_waiting,
    "uploaded traces checked at once, before the replay line": lambda lim: lim.trace_checks,
    "cycles a session keeps after a replay": lambda lim: lim.replay_cycles_kept,
    "visitor sessions kept": lambda lim: lim.sessions_kept,
}
UNLIMITED = ("all", "unbounded", "no limit", "in the queue")


def cap_table() -> dict[str, tuple[str, str]]:
    """The table under "| cap | local | hosted |": each row's local and hosted cells."""
    lines = DOC[DOC.index("| cap | local | hosted |") :].splitlines()[2:]
    rows = {}
    for line in lines:
        if not line.startswith("|"):
            break
        cap, local, hosted = (cell.strip() for cell in line.strip("|").split("|"))
        rows[cap] = (local, hosted)
    return rows


def quoted(cell: str) -> float | None:
    """The number a cell quotes (its first, commas dropped), or None for "no limit" words."""
    if cell.startswith(UNLIMITED):
        return None
    match = re.search(r"\d[\d,]*(\.\d+)?", cell)
    assert match, f"no number in {cell!r}"
    return float(match.group().replace(",", ""))


def test_every_row_of_the_cap_table_is_the_codes_number() -> None:
    table = cap_table()
    assert set(table) == set(ROWS), "a row was added or renamed: say here what it quotes"
    for cap, (local, hosted) in table.items():
        for cell, limits in ((local, LOCAL), (hosted, HOSTED)):
            value = ROWS[cap](limits)
            expected = None if value is None else float(value)
            assert quoted(cell) == expected, f"{cap!r}: the page says {cell!r}, the code {value}"


def test_the_prose_quotes_the_same_numbers() -> None:
    assert f"against `Limits.queue_size` ({HOSTED.queue_size} hosted)" in DOC
    assert f"(`Limits.replay_waiting`, {HOSTED.replay_waiting} hosted)" in DOC
    assert f"**Uploads capped** at {HOSTED.trace_bytes // 2**20} MB" in DOC
    assert f"a replay plays at most\n  {HOSTED.replay_seconds:.0f} s" in DOC
    assert f"has held the engine for {HOSTED.run_seconds:.0f} s" in DOC


def test_the_argument_count_quoted_is_generates() -> None:
    from hosted_fixtures import TinyCache

    from specviz.app.builder import build_demo
    from specviz.models.presets import load_presets

    demo = build_demo(load_presets(), TinyCache())  # type: ignore[arg-type]
    generate = next(fn for fn in demo.fns.values() if fn.api_name == "generate")
    needed = len(generate.inputs)
    assert f"This endpoint takes {needed} values, got 0." in DOC
    assert f"| {needed + 1} values | This endpoint takes {needed} values, got {needed + 1}." in DOC
