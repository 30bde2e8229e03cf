"""`python -m specviz configs`: the preset's pair, drafter and settings as production configs.

Prints one snippet per serving engine (vLLM, llama.cpp, transformers, SGLang), each headed by the
version it was written for and followed by notes on what it cannot carry; `--json` prints them as
records. Loads no model.
"""

from __future__ import annotations

import argparse
from typing import Any

from specviz.cli.options import (
    add_drafter_option,
    drafter_spec_for,
    preset_for,
    print_json,
    settings_for,
)
from specviz.text import DEFAULT_LANGUAGE, t


def add_configs_command(commands: Any, lang: str = DEFAULT_LANGUAGE) -> None:
    """Register `configs` on the CLI's subparsers."""
    from specviz.core.settings import add_setting_arguments

    configs = commands.add_parser(
        "configs",
        help="the pair, drafter and settings as vLLM, llama.cpp, transformers and SGLang configs",
    )
    configs.add_argument("--preset", help="preset id (default: the bundled offline pair)")
    add_drafter_option(configs)
    add_setting_arguments(configs, lang=lang)
    configs.add_argument("--json", action="store_true", help="print the snippets as JSON")
    configs.set_defaults(run=run_configs, draft_quantization=None)


def run_configs(args: argparse.Namespace) -> int:
    """Print the snippets (or their JSON records) for the chosen preset, drafter and settings."""
    from specviz.production.snippets import production_snippets

    preset = preset_for(args)
    snippets = production_snippets(
        preset, drafter_spec_for(args, preset), settings_for(args, preset)
    )
    if args.json:
        print_json(
            [
                {
                    "engine": snippet.engine.name,
                    "version": snippet.engine.version,
                    "source": snippet.engine.source,
                    "language": snippet.language,
                    "code": snippet.code,
                    "notes": [note.text(args.lang) for note in snippet.notes],
                }
                for snippet in snippets
            ]
        )
        return 0
    for snippet in snippets:
        head = t(
            "production.written_for",
            args.lang,
            engine=snippet.engine.label,
            version=snippet.engine.version,
        )
        print(f"# {head}\n{snippet.code}")
        for note in snippet.notes:
            print("# " + t("production.cli.note", args.lang, note=note.text(args.lang)))
        print()
    return 0
