"""A stand-in for the ``spaces`` package that crosses a process boundary as ZeroGPU does.

Not a test module. ``spaces.GPU(duration=...)`` on ZeroGPU (spaces 0.51, ``zero/wrappers.py``)
runs the decorated function in a worker process forked from the server (the 'fork' context):
the call's arguments are pickled into it, its result or each value it yields is pickled back
(yield by yield), a ``gr.Error`` raised there is raised here and any other failure becomes a
"ZeroGPU worker error"; closing the generator here asks the worker to stop after its current
item. Whatever the worker changes in place stays there. This module does the same with one
forked child per call (the real one keeps its worker while idle: that only hides state the
worker kept, which nothing may rely on), so anything unpicklable that would cross fails here.

Two things the real one need not do. The child runs torch on one thread: torch's CPU kernels use
GNU OpenMP (libgomp), whose thread pool belongs to the thread that last ran a parallel region; a
child forked from that thread inherits the pool's bookkeeping but not its threads, and its first
parallel region waits for them forever (at 0 % CPU, in ``libgomp.so``). And a worker that sends
nothing for ``QUIET_S`` seconds is killed and the call fails, naming where it was, so a hang is a
failed test rather than a stuck run.

``install(monkeypatch)`` puts it in ``sys.modules`` as ``spaces`` with ZeroGPU's flag set;
``decorated`` lists the name of each function decorated, ``calls`` (function name, duration
asked) per call.
"""

from __future__ import annotations

import faulthandler
import functools
import importlib.machinery
import inspect
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

import gradio as gr
import torch

CONTEXT = multiprocessing.get_context("fork")
STOP_WAIT_S = 0.5  # how long a stopped worker may take to finish its item before it is killed
QUIET_S = 120.0  # how long a worker may send nothing before it is taken for hung and killed
TRACE_WAIT_S = 1.0  # how long a hung worker has to write where it is before it is killed
decorated: list[str] = []
calls: list[tuple[str, int]] = []


class WorkerError(gr.Error):
    """What a failure other than gr.Error in the worker becomes (spaces: "ZeroGPU worker error")."""


def GPU(task: Callable[..., Any] | None = None, *, duration: Any = None) -> Any:
    """spaces.GPU: the task run in a forked worker, arguments and results pickled across."""
    if task is None:
        return functools.partial(GPU, duration=duration)
    streams = inspect.isgeneratorfunction(task)
    decorated.append(task.__name__)

    def asked(args: tuple, kwargs: dict) -> None:
        seconds = duration(*args, **kwargs) if callable(duration) else duration
        calls.append((task.__name__, seconds))

    if streams:

        @functools.wraps(task)
        def generator_handler(*args: Any, **kwargs: Any) -> Iterator[Any]:
            asked(args, kwargs)
            yield from _crossing(task, args, kwargs, streams=True)

        return generator_handler

    @functools.wraps(task)
    def handler(*args: Any, **kwargs: Any) -> Any:
        asked(args, kwargs)
        return next(_crossing(task, args, kwargs, streams=False))

    return handler


def _crossing(
    task: Callable[..., Any], args: tuple, kwargs: dict, *, streams: bool
) -> Iterator[Any]:
    """Run task(*args, **kwargs) in a forked child; its values, unpickled here, one by one."""
    payload = pickle.dumps((args, kwargs))  # spaces pickles the call onto its worker's queue
    here, there = CONTEXT.Pipe()
    stop = CONTEXT.Event()
    with tempfile.TemporaryFile() as trace:  # where a hung child writes its stack when asked
        worker = CONTEXT.Process(
            target=_work, args=(task, payload, there, stop, streams, trace), daemon=True
        )
        worker.start()
        there.close()
        try:
            while True:
                if not here.poll(QUIET_S):
                    raise WorkerError(_hung(task, worker, trace))
                try:
                    kind, value = pickle.loads(here.recv_bytes())
                except EOFError:
                    raise WorkerError("ZeroGPU worker error: GPU task aborted") from None
                if kind == "end":
                    return
                if kind == "error":
                    raise value
                yield value
        finally:
            stop.set()  # spaces sets the worker's stop event when the generator here is closed
            worker.join(STOP_WAIT_S)
            if worker.is_alive():
                worker.kill()
                worker.join()
            here.close()


def _hung(task: Callable[..., Any], worker: Any, trace: Any) -> str:
    """The message for a worker that sent nothing for QUIET_S: its Python stack, asked of it."""
    os.kill(worker.pid, signal.SIGUSR1)  # faulthandler in the child writes its stack to trace
    time.sleep(TRACE_WAIT_S)
    trace.seek(0)
    stack = trace.read().decode(errors="replace").strip() or "(it wrote no stack)"
    return (
        f"ZeroGPU stand-in: the worker running {task.__name__} sent nothing for {QUIET_S:g} s "
        f"and was killed (hung?). Where it was:\n{stack}"
    )


def _work(
    task: Callable[..., Any],
    payload: bytes,
    out: Connection,
    stop: Any,
    streams: bool,
    trace: Any,
) -> None:
    """The child: the call unpickled, each value pickled back, then "end" (or the error)."""
    faulthandler.register(signal.SIGUSR1, file=trace, all_threads=True)
    # One thread, so no OpenMP parallel region waits for the parent's pool threads (see above).
    torch.set_num_threads(1)
    try:
        args, kwargs = pickle.loads(payload)
        if streams:
            values = task(*args, **kwargs)
            for value in values:
                if stop.is_set():
                    values.close()
                    break
                out.send_bytes(pickle.dumps(("value", value)))
        else:
            out.send_bytes(pickle.dumps(("value", task(*args, **kwargs))))
        out.send_bytes(pickle.dumps(("end", None)))
    except Exception as error:  # every failure crosses, as spaces' do
        out.send_bytes(pickle.dumps(("error", _crossable(error))))


def _crossable(error: Exception) -> Exception:
    """A gr.Error as itself; anything else as a WorkerError naming it, with its traceback."""
    if isinstance(error, gr.Error):
        return error
    lines = "".join(traceback.format_exception(error))
    return WorkerError(f"ZeroGPU worker error: {type(error).__name__}\n{lines}")


def install(monkeypatch: Any) -> list[tuple[str, int]]:
    """This module as ``spaces``, with ZeroGPU's flag set; returns ``calls``, emptied (and
    ``decorated`` too)."""
    module = types.ModuleType("spaces")
    module.__spec__ = importlib.machinery.ModuleSpec("spaces", None)
    module.GPU = GPU  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "spaces", module)
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    decorated.clear()
    calls.clear()
    return calls
