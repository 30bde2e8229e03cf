"""llama.cpp's llama-server as a measured engine: start it on GGUF files, send a prompt, read
what it did.

One ``LlamaServer`` is one server process with one slot (``-np 1``), so requests run one at a time,
as specviz's own runs do. A request sends the prompt as token ids, the ones specviz's tokenizer and
chat template made, so both engines read the same prompt; ``cache_prompt`` is off so each request
reads its prompt again, as each specviz run does. The response carries llama-server's own timings
(``prompt_ms``, ``predicted_ms``) and, when it speculates, ``draft_n`` (tokens drafted) and
``draft_n_accepted`` (``server_slot_stats::to_json`` in tools/server/server-common.cpp).

The requests go through the watch's HTTP client (specviz.engines.client: the standard library,
no proxy for a server on this machine); nothing here imports torch.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from specviz.engines.client import ServerClient
from specviz.text import UserError

__all__ = [
    "Completion",
    "LlamaServer",
    "LlamaServerError",
    "free_port",
    "server_arguments",
]

# Long enough for a 1.1 GB GGUF to load from a cold disk on a slow machine.
_START_TIMEOUT_S = 180.0
# One request's limit: a 2-core CPU decodes a few hundred tokens well inside it.
_REQUEST_TIMEOUT_S = 600.0
_SIGILL = -signal.SIGILL


class LlamaServerError(UserError, RuntimeError):
    """llama-server did not start, died, or answered with an error: a catalogue key and values."""


def free_port() -> int:
    """A TCP port nobody listens on now, for a server on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_arguments(command: Sequence[str], threads: int, context: int, port: int) -> list[str]:
    """The server's own options after *command* (llama-server's words without the program):
    threads for the target and, when there is one, the draft, the context, one slot, this port."""
    words = list(command)
    extra = ["-t", str(threads), "-tb", str(threads)]
    if "-md" in words:
        extra += ["-td", str(threads), "-tbd", str(threads)]
    extra += ["-c", str(context), "-np", "1", "--no-webui", "--host", "127.0.0.1"]
    extra += ["--port", str(port)]
    return [*words, *extra]


@dataclass(frozen=True)
class Completion:
    """What one request produced, as llama-server reports it."""

    token_ids: tuple[int, ...]
    text: str
    wall_s: float  # the request's wall clock here: prompt reading, decoding and HTTP
    prompt_tokens: int
    prompt_ms: float  # the server's own timings
    predicted_tokens: int
    predicted_ms: float
    drafted: int  # draft_n: tokens the draft proposed (0 without speculation)
    accepted: int  # draft_n_accepted

    @property
    def acceptance_rate(self) -> float | None:
        """α as llama.cpp counts it: accepted / drafted draft tokens; None without a draft."""
        return self.accepted / self.drafted if self.drafted else None

    @property
    def server_tokens_per_s(self) -> float:
        """The server's own decoding speed (predicted tokens over its decoding time)."""
        return self.predicted_tokens / (self.predicted_ms / 1000) if self.predicted_ms else 0.0


class LlamaServer:
    """A llama-server process on 127.0.0.1, started and stopped with ``with``.

    *binary* is the executable, *command* its options as the configs tab prints them (``-m``,
    ``-md``, ``--spec-*``); threads, context, slot and port are added here.
    """

    def __init__(
        self,
        binary: Path,
        command: Sequence[str],
        threads: int,
        context: int = 4096,
        start_timeout_s: float = _START_TIMEOUT_S,
    ) -> None:
        self.binary = binary
        self.command = list(command)
        self.port = free_port()
        self.arguments = server_arguments(command, threads, context, self.port)
        self.url = f"http://127.0.0.1:{self.port}"
        self._health = ServerClient(self.url, timeout_s=2)
        self._client = ServerClient(self.url, timeout_s=_REQUEST_TIMEOUT_S)
        self._start_timeout_s = start_timeout_s
        self.warmed = False  # a first, untimed request has run (a measurement's warm-up)
        self._process: subprocess.Popen[bytes] | None = None
        handle, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
        os.close(handle)
        self._log = Path(name)  # what the server writes, for an error message

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Start the process and wait until /health says the models are loaded."""
        try:
            # The child keeps its own handle on the log; ours closes when Popen returns.
            with self._log.open("wb") as log:
                self._process = subprocess.Popen(
                    [str(self.binary), *self.arguments],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
        except OSError as error:
            self._log.unlink(missing_ok=True)
            raise LlamaServerError(
                "error.llama.start", binary=self.binary, reason=str(error)
            ) from error
        try:
            self._wait_until_healthy()
        except LlamaServerError:
            self.stop()  # the error already holds the log's last lines
            raise

    def _wait_until_healthy(self) -> None:
        deadline = time.monotonic() + self._start_timeout_s
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                if self._health.get("/health").ok:
                    return  # 503 while the models load
            except UserError:
                pass  # not listening yet
            time.sleep(0.2)
        raise LlamaServerError(
            "error.llama.start_timeout", seconds=round(self._start_timeout_s), log=self.log_tail()
        )

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL after five seconds) and remove its log."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._log.unlink(missing_ok=True)

    def log_tail(self, lines: int = 12) -> str:
        """The last lines the server wrote, for an error message."""
        try:
            text = self._log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _check_alive(self) -> None:
        if self._process is not None and self._process.poll() is not None:
            code = self._process.returncode
            key = "error.llama.illegal_instruction" if code == _SIGILL else "error.llama.died"
            raise LlamaServerError(key, code=code, log=self.log_tail())

    def complete(
        self,
        prompt_ids: Sequence[int],
        max_new_tokens: int,
        temperature: float,
        seed: int,
        top_k: int = 0,
        top_p: float = 1.0,
    ) -> Completion:
        """Decode up to *max_new_tokens* after the prompt (token ids) and report it.

        Sampling is the target's softmax at *temperature* (0: greedy), with top-k/top-p as
        specviz's settings give them and llama.cpp's other samplers (min-p, repetition penalty)
        off, so both engines sample the same law.
        """
        body = {
            "prompt": list(prompt_ids),
            "n_predict": max_new_tokens,
            "temperature": temperature,
            "seed": seed,
            "top_k": top_k,
            "top_p": top_p,
            "min_p": 0.0,
            "repeat_penalty": 1.0,
            "cache_prompt": False,
            "return_tokens": True,
            "stream": False,
        }
        began = time.perf_counter()
        try:
            reply = self._client.post_json("/completion", body)
        except UserError as error:  # no answer: a server that died says so first
            self._check_alive()
            raise LlamaServerError("error.llama.request", status="-", detail=str(error)) from error
        wall_s = time.perf_counter() - began
        if not reply.ok:
            raise LlamaServerError(
                "error.llama.request", status=reply.status, detail=reply.text[:400]
            )
        answer = json.loads(reply.body)
        timings = answer.get("timings", {})
        tokens = tuple(int(token) for token in answer.get("tokens", ()))
        return Completion(
            token_ids=tokens,
            text=str(answer.get("content", "")),
            wall_s=wall_s,
            prompt_tokens=int(timings.get("prompt_n", 0)),
            prompt_ms=float(timings.get("prompt_ms", 0.0)),
            predicted_tokens=int(timings.get("predicted_n", len(tokens))),
            predicted_ms=float(timings.get("predicted_ms", 0.0)),
            drafted=int(timings.get("draft_n", 0)),
            accepted=int(timings.get("draft_n_accepted", 0)),
        )


def default_threads() -> int:
    """The threads specviz's own torch computes with, so both engines use the same cores."""
    configured = os.environ.get("SPECVIZ_LLAMA_THREADS")
    if configured:
        return max(1, int(configured))
    import torch  # only here: the rest of this module needs no torch

    return torch.get_num_threads()
