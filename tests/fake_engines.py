"""Stand-ins for llama-server, vLLM and SGLang: a real HTTP server on a free port, in a thread.

Not a test module. ``FakeEngine(kind)`` answers what watch asks of each engine, the way each
engine answers it (llama-server's /props and ``timings``; vLLM's and SGLang's /v1/models owner
and /metrics counter names, as ``tests/engines/fixtures`` write them), and counts every
completion as a fixed ``Drafting``: so a test knows each request's counts without a model.
Its knobs make the failures watch must word: no speculation, no /metrics, slow answers, an
error status, counters that land after the answer, other clients' requests in between.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "fake/model-7b"


@dataclass(frozen=True)
class Drafting:
    """What one completion does: its verification steps, drafted and accepted tokens."""

    drafts: int = 4
    drafted: int = 16
    accepted: int = 10
    accepted_at: tuple[int, ...] = (4, 3, 2, 1)

    @property
    def new_tokens(self) -> int:
        # The prompt's reading emits one token, each step its accepted drafts and one more.
        return 1 + self.drafts + self.accepted


@dataclass
class FakeEngine:
    """One fake server; use it as a context manager (``with FakeEngine("vllm") as url:``)."""

    kind: str  # "llama-server", "vllm", "sglang", or "unknown" (404 for every path)
    speculative: bool = True
    metrics: bool = True
    drafting: Drafting = field(default_factory=Drafting)
    delay_s: float = 0.0  # before each completion's answer
    lag_s: float = 0.0  # the counters take a completion into account this long after answering
    completion_status: int = 200
    others_per_request: int = 0  # other clients' requests the server finishes meanwhile
    server_tps: float = 25.0  # llama-server's predicted_per_second
    counters: dict[str, float] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __enter__(self) -> str:
        engine = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                engine.answer_get(self)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                engine.answer_post(self, json.loads(self.rfile.read(length) or b"{}"))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- answers ---------------------------------------------------------------------------

    def answer_get(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path
        if self.kind == "llama-server" and path == "/props":
            settings = {"n_ctx": 2048, "params": {"temperature": 0.8}}
            self.send(
                handler, 200, {"default_generation_settings": settings, "model_path": "/m/t.gguf"}
            )
        elif self.kind != "unknown" and path == "/v1/models":
            owner = {"llama-server": "llamacpp"}.get(self.kind, self.kind)
            self.send(handler, 200, {"object": "list", "data": [{"id": MODEL, "owned_by": owner}]})
        elif self.kind != "unknown" and path == "/metrics" and self.metrics:
            self.send(handler, 200, self.metrics_text())
        else:
            self.send(handler, 404, {"error": "not found"})

    def answer_post(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if self.kind == "unknown" or handler.path not in (
            "/v1/chat/completions",
            "/v1/completions",
        ):
            self.send(handler, 404, {"error": "not found"})
            return
        self.requests.append({"path": handler.path, **body})
        time.sleep(self.delay_s)
        if self.completion_status != 200:
            self.send(handler, self.completion_status, {"error": {"message": "model crashed"}})
            return
        drafting = self.drafting if self.speculative else Drafting(0, 0, 0, ())
        new_tokens = drafting.new_tokens if self.speculative else 15
        if self.lag_s:
            threading.Timer(self.lag_s, self.count, (drafting, new_tokens)).start()
        else:
            self.count(drafting, new_tokens)
        message = {"role": "assistant", "content": "def f(): pass"}
        answer: dict[str, Any] = {
            "choices": [{"index": 0, "message": message, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": new_tokens},
        }
        if self.kind == "llama-server":
            timings: dict[str, Any] = {
                "prompt_n": 20,
                "predicted_n": new_tokens,
                "predicted_per_second": self.server_tps,
            }
            if drafting.drafted:  # as server_slot_stats::to_json: only where it drafted
                timings |= {"draft_n": drafting.drafted, "draft_n_accepted": drafting.accepted}
            answer["timings"] = timings
        self.send(handler, 200, answer)

    def count(self, drafting: Drafting, new_tokens: int) -> None:
        """Add one completion (and any other clients' requests) to the counters."""
        add = {
            "drafts": drafting.drafts,
            "drafted": drafting.drafted,
            "accepted": drafting.accepted,
            "generated": new_tokens,
            "requests": 1 + self.others_per_request,
        }
        for position, count in enumerate(drafting.accepted_at):
            add[f"at{position}"] = count
        for name, value in add.items():
            self.counters[name] = self.counters.get(name, 0.0) + value

    @staticmethod
    def send(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header(
            "Content-Type", "text/plain" if isinstance(body, str) else "application/json"
        )
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    # --- /metrics in each engine's names ----------------------------------------------------

    def metrics_text(self) -> str:
        value = self.counters.get
        positions = sorted(int(name[2:]) for name in self.counters if name.startswith("at"))
        lines: list[str] = []
        if self.kind == "vllm":
            labels = f'engine="0",model_name="{MODEL}"'
            lines += [
                f"vllm:generation_tokens_total{{{labels}}} {value('generated', 0.0)}",
                f'vllm:request_success_total{{{labels},finished_reason="length"}} {value("requests", 0.0)}',
            ]
            if self.speculative:
                lines += [
                    f"vllm:spec_decode_num_drafts_total{{{labels}}} {value('drafts', 0.0)}",
                    f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {value('drafted', 0.0)}",
                    f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {value('accepted', 0.0)}",
                    f"vllm:spec_decode_num_drafts_created{{{labels}}} 1765177600.0",
                ]
                lines += [
                    f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="{p}"}} '
                    f"{value(f'at{p}', 0.0)}"
                    for p in range(len(self.drafting.accepted_at))
                ]
        elif self.kind == "llama-server":
            lines += [
                f"llamacpp:tokens_predicted_total {value('generated', 0.0)}",
                f"llamacpp:spec_decode_num_draft_tokens_total {value('drafted', 0.0)}",
                f"llamacpp:spec_decode_num_accepted_tokens_total {value('accepted', 0.0)}",
                f"llamacpp:spec_decode_num_drafts_total {value('drafts', 0.0)}",
            ]
            lines += [
                f'llamacpp:spec_decode_num_accepted_tokens_per_pos_total{{position="{p}"}} '
                f"{value(f'at{p}', 0.0)}"
                for p in positions
            ]
        elif self.kind == "sglang":
            labels = f'model_name="{MODEL}"'
            lines += [
                f"sglang:spec_accept_length{{{labels}}} 0.0",
                f"sglang:generation_tokens_total{{{labels}}} {value('generated', 0.0)}",
                f"sglang:num_requests_total{{{labels}}} {value('requests', 0.0)}",
            ]
            if value("drafts", 0.0):  # a labelled counter appears with its first count
                lines.append(f"sglang:spec_verify_calls_total{{{labels}}} {value('drafts')}")
        return "\n".join(["# HELP fake metrics", *lines, ""])
