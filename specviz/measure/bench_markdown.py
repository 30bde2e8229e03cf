"""Bench results as Markdown: each table rendered from a bench report, never typed by hand.

A report is what `python -m specviz bench` writes as JSON (or the same dict before it is
written): rows of task, temperature, γ and drafter, each with plain decoding's, specviz's and
transformers' measurements. The table has a row per task (and per temperature and γ where the
report holds several) and a column per drafter: its speedup over plain decoding in the same run,
transformers' counterpart in brackets. Under it: the settings, the CPU and the command.

docs/performance.md holds its bench tables between markers that name the JSON each comes from
(`<!-- bench-table: results/x.json -->` ... `<!-- /bench-table -->`); render_document re-renders
them, and tests/test_bench_markdown.py fails when the doc and docs/results/ disagree.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "BLOCK",
    "block_sources",
    "cpu_words",
    "describe",
    "render_document",
    "render_report",
    "render_table",
]

# The flags that decide which matrix kernels a CPU runs, in the order a caption names them.
_KEY_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")
_WIDTH = 100  # the doc's line length, for the caption and the command
# A marked block: its source (relative to the document's folder), options, and body.
BLOCK = re.compile(
    r"(?P<open><!-- bench-table: (?P<source>\S+)(?P<options>(?: [\w-]+)*) -->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- /bench-table -->)",
    re.DOTALL,
)
ALPHA_TAU = "alpha-tau"  # the block option (and flag) that adds α and τ to every cell

Report = Mapping[str, Any]


def render_report(report: Report, alpha_tau: bool = False, source: str | None = None) -> str:
    """The report's table with its caption and command under it; *source*, the JSON's path, is
    linked in the caption when given."""
    parts = [render_table(report["rows"], alpha_tau), describe(report, alpha_tau, source)]
    command = report.get("command")
    if command:
        parts.append("```bash\n" + _wrap_command(str(command)) + "\n```")
    return "\n\n".join(parts)


def render_table(rows: Sequence[Mapping[str, Any]], alpha_tau: bool = False) -> str:
    """One Markdown row per task, temperature and γ (the last two as columns only where they
    vary), a column per drafter in the order the rows name them."""
    drafters = list(dict.fromkeys(str(row["drafter"]) for row in rows))
    keys = list(dict.fromkeys(_key(row) for row in rows))
    by_key = {(_key(row), str(row["drafter"])): row for row in rows}
    with_t = len({temperature for _, temperature, _ in keys}) > 1
    with_gamma = len({gamma for _, _, gamma in keys}) > 1
    head = ["task", *(["T"] if with_t else []), *(["γ"] if with_gamma else []), "plain tok/s"]
    lines = [_cells([*head, *drafters]), _cells(["---"] * (len(head) + len(drafters)))]
    for key in keys:
        task, temperature, gamma = key
        found = [by_key.get((key, drafter)) for drafter in drafters]
        best = max((_speedup(row) or 0.0 for row in found if row), default=0.0)
        plain = next((row["plain"]["tokens_per_s"] for row in found if row), None)
        cells = [task, *([f"{temperature:g}"] if with_t else []), *([gamma] if with_gamma else [])]
        cells.append(_number(plain))
        cells += [_cell(row, alpha_tau, best if len(drafters) > 1 else None) for row in found]
        lines.append(_cells(cells))
    return "\n".join(lines)


def describe(report: Report, alpha_tau: bool = False, source: str | None = None) -> str:
    """The caption: what a cell is, the settings every row shares, the machine and the date."""
    rows = report["rows"]
    temperatures = sorted({float(row["temperature"]) for row in rows})
    gammas = list(dict.fromkeys(str(row["gamma"]) for row in rows))
    legend = [
        "×: speedup over plain decoding in the same run (tokens/s by the wall clock, the prompt's reading included)"
    ]
    if any(row.get("transformers") or row.get("transformers_speedup") for row in rows):
        legend.append("in brackets, transformers' counterpart")
    if len({row["drafter"] for row in rows}) > 1:
        legend.append("bold, the row's fastest drafter")
    if alpha_tau:
        legend.append("α: share of drafted tokens accepted, τ: tokens per target pass")
    settings = [
        "Greedy" if temperatures == [0.0] else None,
        f"Temperature {temperatures[0]:g}" if len(temperatures) == 1 and temperatures[0] else None,
        f"γ = {gammas[0]}" if len(gammas) == 1 else None,
        f"{report['max_new_tokens']} new tokens" if report.get("max_new_tokens") else None,
        f"median of {report['repeats']}" if report.get("repeats") else None,
    ]
    machine = ["CPU: " + cpu_words(report), _models(report), _when(report)]
    sentences = ["; ".join(legend), _join(settings), "; ".join(filter(None, machine))]
    if report.get("note"):
        sentences.append(str(report["note"]).rstrip("."))
    if report.get("reconstructed"):
        sentences.append("Rebuilt from a hand-typed table")
    if source:
        sentences.append(f"Data: [{source}]({source})")
    return textwrap.fill(
        ". ".join(sentences) + ".", _WIDTH, break_long_words=False, break_on_hyphens=False
    )


def cpu_words(report: Report) -> str:
    """The CPU as a caption names it: model name, family and model, the flags that decide its
    kernels, and torch's threads."""
    cpu = report.get("cpu")
    if not isinstance(cpu, Mapping):
        name = str(report.get("machine") or "not recorded")
        return _join([name, _threads(report)])
    name = str(cpu.get("name") or "model not recorded")
    if cpu.get("family") is not None and cpu.get("model") is not None:
        name += f", family {cpu['family']} model {cpu['model']}"
    flags = [flag for flag in _KEY_FLAGS if flag in (cpu.get("flags") or ())]
    if flags:
        name += " (" + ", ".join(flags) + ")"
    return _join([name, _threads(report)])


def render_document(text: str, load: Callable[[str], Report]) -> str:
    """*text* with every marked bench table re-rendered from the report its marker names
    (*load* reads a source path)."""

    def rendered(match: re.Match[str]) -> str:
        source = match["source"]
        alpha_tau = ALPHA_TAU in match["options"].split()
        table = render_report(load(source), alpha_tau, source)
        return f"{match['open']}\n{table}\n\n{match['close']}"

    return BLOCK.sub(rendered, text)


def block_sources(text: str) -> list[str]:
    """The report paths the document's marked tables name, in order."""
    return [match["source"] for match in BLOCK.finditer(text)]


def _key(row: Mapping[str, Any]) -> tuple[str, float, str]:
    return str(row["task"]), float(row["temperature"]), str(row["gamma"])


def _speedup(row: Mapping[str, Any]) -> float | None:
    """The row's speedup: as the report states it, else from the two throughputs."""
    if row.get("speedup") is not None:
        return float(row["speedup"])
    plain, spec = row["plain"].get("tokens_per_s"), row["specviz"].get("tokens_per_s")
    return float(spec) / float(plain) if plain and spec is not None else None


def _transformers_speedup(row: Mapping[str, Any]) -> float | None:
    if row.get("transformers_speedup") is not None:
        return float(row["transformers_speedup"])
    hf, plain = row.get("transformers"), row["plain"].get("tokens_per_s")
    if not hf or hf.get("tokens_per_s") is None or not plain:
        return None
    return float(hf["tokens_per_s"]) / float(plain)


def _cell(row: Mapping[str, Any] | None, alpha_tau: bool, best: float | None) -> str:
    """A drafter's cell: its speedup (bold where it is the row's best), transformers' in
    brackets, α and τ when asked for."""
    speedup = None if row is None else _speedup(row)
    if row is None or speedup is None:
        return "–"
    text = f"{speedup:.2f}×"
    if best is not None and f"{speedup:.2f}" == f"{best:.2f}":
        text = f"**{text}**"
    hf = _transformers_speedup(row)
    if hf is not None:
        text += f" ({hf:.2f}×)"
    if alpha_tau:
        alpha = row["specviz"].get("acceptance_rate")
        tau = row["specviz"].get("tokens_per_target_pass")
        text += "".join(
            f", {name} {value:.2f}"
            for name, value in (("α", alpha), ("τ", tau))
            if value is not None
        )
    return text


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _cells(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _join(parts: Sequence[str | None]) -> str:
    return ", ".join(part for part in parts if part)


def _threads(report: Report) -> str | None:
    threads = report.get("threads")
    return f"{threads} threads" if threads else None


def _models(report: Report) -> str:
    """The pair as it ran: preset, the draft's format and the target's dtype, torch."""
    draft = report.get("draft_quantization")
    return _join(
        [
            str(report["preset"]) if report.get("preset") else None,
            f"{draft} draft" if draft else None,
            f"{report['dtype']} target" if report.get("dtype") else None,
            f"torch {report['torch']}" if report.get("torch") else None,
        ]
    )


def _when(report: Report) -> str | None:
    """The day measured: a timestamp's date, or the text a rebuilt report gives."""
    when = str(report.get("when") or "")
    if not when:
        return None
    return when[:10] if when[10:11] == "T" else when


def _wrap_command(command: str) -> str:
    """The command on lines of at most the doc's width, continued with backslashes."""
    lines: list[str] = []
    for word in command.split(" "):
        if lines and len(lines[-1]) + len(word) + 3 <= _WIDTH:
            lines[-1] += " " + word
        else:
            lines.append(word if not lines else "  " + word)
    return " \\\n".join(lines)
