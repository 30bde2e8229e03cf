"""ZeroGPU: a Space whose GPU is lent per call, to functions decorated with ``@spaces.GPU``.

On ZeroGPU (``SPACES_ZERO_GPU=true`` and the ``spaces`` package importable) the model work is
decorated with ``spaces.GPU(duration=...)`` (``specviz.app.gpu_work``: it runs in a forked worker,
plain values in and out), the duration computed from the request's new tokens (a shorter request
waits less in ZeroGPU's own queue); the models are placed on ``cuda`` at start-up, as ZeroGPU
requires. Anywhere else ``on_gpu`` hands the function back unchanged and ``spaces`` is never
imported.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

# Seconds asked of ZeroGPU for a run: a start for loading the prompt and the first cycle, then
# a share per new token (a 7B target with a 0.5B draft emits several tokens per second on the
# GPU; a race asks for each of its runs as well: App.race_runs). ZeroGPU caps a call at 120 s
# for most visitors, so the duration stays within it.
GPU_BASE_S = 20
GPU_PER_TOKEN_S = 0.25
GPU_MAX_S = 120


def zero_gpu(environ: Mapping[str, str] = os.environ) -> bool:
    """True on a ZeroGPU Space with the ``spaces`` package installed."""
    if environ.get("SPACES_ZERO_GPU", "").lower() not in ("true", "1"):
        return False
    return importlib.util.find_spec("spaces") is not None


def start() -> None:
    """Import ``spaces`` before any model moves to ``cuda``: on ZeroGPU it stands in for the
    GPU in the main process, which has none, and must be in place before CUDA is first used."""
    import spaces  # noqa: F401  # imported for its effect on torch's CUDA


def gpu_seconds(new_tokens: int) -> int:
    """The GPU time to ask for a run of *new_tokens* tokens, in whole seconds."""
    return min(GPU_MAX_S, GPU_BASE_S + math.ceil(max(new_tokens, 0) * GPU_PER_TOKEN_S))


def on_gpu(handler: F, duration: Callable[..., int], enabled: bool | None = None) -> F:
    """*handler* decorated with ``spaces.GPU(duration=duration)`` on ZeroGPU, else *handler*.

    ZeroGPU calls *duration* with the handler's own arguments; it returns the seconds to ask for
    (``gpu_seconds`` of the request's new tokens, or ``GPU_MAX_S`` for a lab). *enabled* None:
    ask the environment (``zero_gpu``).
    """
    if not (zero_gpu() if enabled is None else enabled):
        return handler
    import spaces  # only on ZeroGPU: the package exists on Spaces, not in requirements.txt

    return spaces.GPU(duration=duration)(handler)  # type: ignore[no-any-return]


def longest(*args: Any, **kwargs: Any) -> int:
    """The duration of a call whose length the request does not say (a lab): the most."""
    del args, kwargs
    return GPU_MAX_S
