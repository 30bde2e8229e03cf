"""A stand-in for llama-server's HTTP surface, run as a program by LlamaServer's tests.

It answers /health and /completion the way llama-server does (the fields specviz reads), so the
process handling (start, wait, request, stop, the error paths) is tested without a C++ build.
Its behaviour is chosen by $FAKE_LLAMA_MODE: "ok", "exit" (dies at once), "sigill" (dies of an
illegal instruction), "silent" (never listens), "error" (answers every request with HTTP 500).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

MODE = os.environ.get("FAKE_LLAMA_MODE", "ok")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer(200, {"status": "ok"})

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if MODE == "error":
            self._answer(500, {"error": {"message": "model exploded"}})
            return
        count = int(request["n_predict"])
        tokens = [int(request["prompt"][-1]) + step + 1 for step in range(count)]
        speculative = "-md" in sys.argv
        timings: dict[str, object] = {
            "prompt_n": len(request["prompt"]),
            "prompt_ms": 10.0,
            "predicted_n": count,
            "predicted_ms": 100.0,
        }
        if speculative:
            timings |= {"draft_n": count, "draft_n_accepted": count // 2}
        # The text is the request and the server's arguments, so tests can check what was sent.
        content = json.dumps(request | {"argv": sys.argv[1:]})
        self._answer(200, {"content": content, "tokens": tokens, "timings": timings})


def main() -> None:
    print("fake llama-server", " ".join(sys.argv[1:]), flush=True)
    if MODE == "exit":
        sys.exit(3)
    if MODE == "sigill":
        os.kill(os.getpid(), signal.SIGILL)
    if MODE == "silent":
        time.sleep(60)
    port = int(sys.argv[sys.argv.index("--port") + 1])
    HTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
