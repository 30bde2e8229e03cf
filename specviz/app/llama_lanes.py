"""llama.cpp in the app's race: the "llama.cpp" choice among the race's lanes, and the
llama-server processes it runs.

The choice is offered only where a llama-server was found (built by `python -m specviz engines
setup llama.cpp`, on PATH, or $SPECVIZ_LLAMA_SERVER) and never in hosted mode: a Space's visitors
share two cores, and a second engine would take them from everyone. Picked, it adds two lanes:
llama.cpp's plain decoding of the same GGUF target, and its speculative decoding by the configs
tab's command for the race's first drafter llama.cpp has an equivalent of (plain alone when none
has). Servers are started on first use and kept for later races, one per distinct command, and
stopped when the app exits.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Sequence

from specviz.core.settings import GenerationSettings
from specviz.engines.llama_build import BuildInfo, LlamaBuildError, find_llama_server
from specviz.engines.llama_server import LlamaServer
from specviz.measure.llama_cpp import LlamaLanes, llama_command, plain_command
from specviz.measure.race_records import LLAMA_CHOICE, LLAMA_PLAIN_LANE, LLAMA_SPEC_LANE
from specviz.models.presets import Preset
from specviz.text import UserError, t

__all__ = [
    "LLAMA_CHOICE",
    "llama_build",
    "llama_choice",
    "llama_pool",
    "llama_race_servers",
    "split_llama",
]

_lock = threading.Lock()
_pool: LlamaLanes | None = None


def llama_build(hosted: bool) -> BuildInfo | None:
    """The llama-server the race may run: None in hosted mode or where none was found."""
    if hosted:
        return None
    try:
        return find_llama_server()
    except LlamaBuildError:  # $SPECVIZ_LLAMA_SERVER names no file: as if none
        return None


def llama_choice(hosted: bool, lang: str) -> list[tuple[str, str]]:
    """The race dropdown's llama.cpp choice, where the race can run it."""
    if llama_build(hosted) is None:
        return []
    return [(t("app.race.llama_choice", lang), LLAMA_CHOICE)]


def split_llama(lanes: Sequence[str]) -> tuple[tuple[str, ...], bool]:
    """The race's drafter specs without the llama.cpp choice, and whether it was picked."""
    drafters = tuple(lane for lane in lanes if lane != LLAMA_CHOICE)
    return drafters, len(drafters) < len(lanes)


def llama_pool(hosted: bool) -> LlamaLanes:
    """The app's llama-server processes (started on first use, kept, stopped at exit); refused
    in hosted mode, whatever a hand-built request asks."""
    if hosted:
        raise UserError("error.app.race_llama_hosted")
    build = llama_build(hosted)
    if build is None:
        raise UserError("error.llama.missing")
    return _servers(build)


def _servers(build: BuildInfo) -> LlamaLanes:
    global _pool
    with _lock:
        if _pool is None or _pool.build != build:
            if _pool is not None:
                _pool.close()
            _pool = LlamaLanes(build)
            atexit.register(_pool.close)
        return _pool


def llama_race_servers(
    preset: Preset, settings: GenerationSettings, drafters: Sequence[str], hosted: bool
) -> list[tuple[str, LlamaServer]]:
    """The llama.cpp lanes of a race: (lane name, its server), plain first; servers started here
    (a few seconds the first time) and kept."""
    pool = llama_pool(hosted)
    lanes = [(LLAMA_PLAIN_LANE, pool.server(plain_command(preset)))]
    for spec in drafters:
        command = llama_command(preset, spec, settings)
        if command is not None:
            lanes.append((LLAMA_SPEC_LANE, pool.server(command)))
            break
    return lanes
