"""watch against a real llama-server speculating with the bundled pair: what watch counts from
/metrics agrees with the server's own ``timings`` (draft_n, draft_n_accepted).

Skipped where no llama-server binary is found (specviz.engines.llama_build.find_llama_server: the
one `engines setup` built, $SPECVIZ_LLAMA_SERVER, or PATH) or the bundled GGUF files are not in
the cache. The server is started here on a free port, on two threads, and stopped when the
module's tests end.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from specviz.engines.llama_build import find_llama_server
from specviz.engines.llama_server import LlamaServer
from specviz.engines.watch import WatchPlan, iter_watch
from specviz.models.bundled import BUNDLED, cache_root

BUILD = find_llama_server()
TARGET, DRAFT = (
    cache_root() / "bundled" / model.name / model.file_name
    for model in (BUNDLED["qwen2.5-coder-1.5b-instruct"], BUNDLED["qwen2.5-coder-0.5b-instruct"])
)
START_S = 300.0  # loading two models on a busy 2-core machine

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        BUILD is None,
        reason="no llama-server (python -m specviz engines setup llama.cpp, "
        "$SPECVIZ_LLAMA_SERVER or PATH)",
    ),
    pytest.mark.skipif(
        not (TARGET.is_file() and DRAFT.is_file()), reason="bundled GGUF files not in the cache"
    ),
]


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    """A speculating llama-server's URL, once its /health says the models are loaded."""
    assert BUILD is not None
    command = [
        "-m", str(TARGET), "-md", str(DRAFT), "--spec-type", "draft-simple",
        "--spec-draft-n-max", "5", "--metrics",
    ]  # fmt: skip
    with LlamaServer(BUILD.path, command, threads=2, start_timeout_s=START_S) as server:
        yield server.url


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
