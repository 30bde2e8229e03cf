"""watch against a real llama-server speculating with the bundled pair: what watch counts from
/metrics agrees with the server's own ``timings`` (draft_n, draft_n_accepted).

Skipped where no llama-server binary is found ($SPECVIZ_LLAMA_SERVER, else llama-server on PATH)
or the bundled GGUF files are not in the cache. The server is started here on a free port, on
two threads, and stopped when the module's tests end.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from specviz.engines.client import ServerClient
from specviz.engines.watch import WatchPlan, iter_watch
from specviz.models.bundled import BUNDLED, cache_root

BINARY = os.environ.get("SPECVIZ_LLAMA_SERVER") or shutil.which("llama-server")
TARGET, DRAFT = (
    cache_root() / "bundled" / model.name / model.file_name
    for model in (BUNDLED["qwen2.5-coder-1.5b-instruct"], BUNDLED["qwen2.5-coder-0.5b-instruct"])
)
START_S = 300.0  # loading two models on a busy 2-core machine

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(BINARY is None, reason="no llama-server ($SPECVIZ_LLAMA_SERVER or PATH)"),
    pytest.mark.skipif(
        not (TARGET.is_file() and DRAFT.is_file()), reason="bundled GGUF files not in the cache"
    ),
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A speculating llama-server's URL, once its /health says the models are loaded."""
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        str(BINARY), "-m", str(TARGET), "-md", str(DRAFT), "--spec-type", "draft-simple",
        "--spec-draft-n-max", "5", "-t", "2", "-td", "2", "-c", "2048", "-np", "1",
        "--port", str(port), "--metrics",
    ]  # fmt: skip
    with log.open("w") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(server, url, log)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _wait_healthy(server: subprocess.Popen[bytes], url: str, log: Path) -> None:
    client = ServerClient(url, timeout_s=5)
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"llama-server exited {server.returncode}:\n{log.read_text()[-2000:]}")
        try:
            if client.get("/health").ok:
                return
        except ValueError:  # not listening yet (a UserError)
            pass
        time.sleep(0.5)
    pytest.fail(f"llama-server not healthy after {START_S:g} s:\n{log.read_text()[-2000:]}")


def test_watch_counts_agree_with_llama_servers_own_timings(llama_server: str) -> None:
    prompt = "Write a Python function that returns the squares of a list of numbers."
    plan = WatchPlan(url=llama_server, prompts=(("code", prompt),), max_tokens=32)
    last = list(iter_watch(plan))[-1]
    assert last.server.kind == "llama-server" and last.server.metrics
    (result,) = last.results
    counts, reported = result.counts, result.reply.reported
    assert reported is not None and reported.drafted  # the answer's timings: draft_n > 0
    # What watch read from /metrics, before and after, is what the server says in its answer.
    assert (counts.drafted, counts.accepted) == (reported.drafted, reported.accepted)
    assert counts.alpha == reported.alpha
    # Each step adds one to every position it got to: the positions sum to the accepted tokens.
    assert counts.drafts and sum(counts.accepted_at) == counts.accepted
    assert len(counts.accepted_at) == 5  # --spec-draft-n-max 5
    tau = counts.mean_acceptance_length
    assert tau is not None and 1.0 <= tau <= 6.0
    assert result.reply.new_tokens > 0 and (result.reply.server_tps or 0) > 0
