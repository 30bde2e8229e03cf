"""One queue size for the whole server: the English and Japanese pages' waiting events count
together, so a hosted server holds Limits.queue_size events, not that many per language."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import types

import pytest

from specviz.app.server_queue import ServerQueue

PROMPT = "Hello"


class _Line:
    def __init__(self, waiting: int) -> None:
        self.queue = [None] * waiting


class _Page:
    """A page's queue as ServerQueue sees it: its waiting events by concurrency group, and its
    own push (which queues the event in the group the body names)."""

    def __init__(self, engine: int, replay: int = 0) -> None:
        self.event_queue_per_concurrency_id = {"engine": _Line(engine), "replay": _Line(replay)}
        self.max_size, self.pushed, self.blocks = 40, 0, None

    async def push(self, body, request, username):
        self.pushed += 1
        self.event_queue_per_concurrency_id[body or "engine"].queue.append(None)
        return True, "event", "success"


@pytest.fixture
def groups(monkeypatch):
    """Each pushed body is the name of its event's concurrency group."""
    monkeypatch.setattr(ServerQueue, "group_of", staticmethod(lambda queue, body: body))


def test_the_waiting_events_of_every_page_count_against_one_size(groups) -> None:
    english, japanese = _Page(2), _Page(1)
    line = ServerQueue(4)
    line.join(english)
    line.join(japanese)
    assert english.max_size is None and japanese.max_size is None  # the pages' own caps lifted
    assert asyncio.run(japanese.push("engine", None, None))[2] == "success"  # 2 + 1: room
    refused = asyncio.run(english.push("engine", None, None))  # 2 + 2 waiting: full
    assert refused[0] is False and refused[2] == "queue_full"
    assert (english.pushed, japanese.pushed, line.waiting("engine")) == (0, 1, 4)


def test_replays_wait_in_a_line_of_their_own(groups) -> None:
    english, japanese = _Page(engine=4, replay=0), _Page(engine=0, replay=1)
    line = ServerQueue(4, {"replay": 2})
    line.join(english)
    line.join(japanese)
    # The main line is full, yet a replay still finds room in its own line...
    assert asyncio.run(english.push("replay", None, None))[2] == "success"
    # ...until its own line is full, which leaves the main line alone.
    assert asyncio.run(japanese.push("replay", None, None))[2] == "queue_full"
    assert asyncio.run(japanese.push("engine", None, None))[2] == "queue_full"
    assert (line.waiting("replay"), line.waiting("engine")) == (2, 4)
    english.event_queue_per_concurrency_id["engine"].queue.clear()  # the runs started
    assert asyncio.run(japanese.push("engine", None, None))[2] == "success"


def test_a_server_without_a_queue_size_takes_every_event(groups) -> None:
    page = _Page(10_000)
    ServerQueue(None).join(page)
    assert asyncio.run(page.push("engine", None, None))[2] == "success" and page.pushed == 1


def test_the_site_joins_every_language_page_to_the_hosted_queue_size() -> None:
    from hosted_fixtures import TinyCache

    from specviz.app.limits import HOSTED
    from specviz.app.site import bilingual_app
    from specviz.models.presets import load_presets

    site = bilingual_app(load_presets(), TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    line = site.state.queue
    assert line.max_size == HOSTED.queue_size == 40
    assert line.own_lines == {"replay": HOSTED.replay_waiting}
    assert len(line.queues) == 2 and all(queue.max_size is None for queue in line.queues)
    page = line.queues[0]
    index = next(i for i, fn in page.blocks.fns.items() if fn.concurrency_id == "replay")
    body = types.SimpleNamespace(fn_index=index, session_hash=None)
    assert line.group_of(page, body) == "replay"  # what push reads of a real page


@pytest.mark.parametrize("full_page", ["", "ja/"])
def test_a_request_on_one_page_is_refused_when_the_other_page_fills_the_queue(
    full_page: str,
) -> None:
    from gradio_client import Client
    from hosted_fixtures import TinyCache

    from specviz.app.limits import HOSTED
    from specviz.app.site import bilingual_app, serve
    from specviz.models.presets import load_presets

    limits = dataclasses.replace(HOSTED, queue_size=1)  # one waiting request fills it
    running = serve(bilingual_app(load_presets(), TinyCache(), limits=limits))  # type: ignore[arg-type]
    other_page = "ja/" if full_page == "" else ""
    try:
        busy, waiting = (Client(running.url + full_page, verbose=False) for _ in range(2))
        refused = Client(running.url + other_page, verbose=False)
        long_run = {"max_new_tokens": 256, "gamma": 1}
        first = busy.submit(PROMPT, api_name="/generate", **long_run)
        _wait_for(first, "PROCESSING", "ITERATING")  # the engine is busy
        second = waiting.submit(PROMPT, api_name="/generate", **long_run)
        _wait_for(second, "IN_QUEUE")
        with pytest.raises(Exception, match="Queue is full"):
            refused.predict(PROMPT, max_new_tokens=4, api_name="/generate")
        first.cancel()
        second.cancel()
        _text, stats = _later(refused)  # once the line has emptied, the other page serves
        assert stats["totals"]["new_tokens"] >= 1
    finally:
        running.close()


def _later(client, within_s: float = 120.0):
    """The client's request, tried again while the line is still full (a test failure after
    *within_s*)."""
    deadline = time.perf_counter() + within_s
    while True:
        try:
            return client.predict(PROMPT, max_new_tokens=4, api_name="/generate")
        except Exception as error:
            if "Queue is full" not in str(error) or time.perf_counter() > deadline:
                raise
            time.sleep(0.2)


def _wait_for(job, *states: str, within_s: float = 60.0) -> None:
    """Wait until the job's status is one of *states* (a test failure after *within_s*)."""
    deadline = time.perf_counter() + within_s
    while job.status().code.name not in states:
        assert time.perf_counter() < deadline, f"still {job.status().code.name}, not {states}"
        time.sleep(0.05)


def test_a_refused_upload_builds_one_session_on_the_page_that_serves_it(monkeypatch) -> None:
    """Each visitor session Gradio builds copies every component's config on the server's event
    loop: a trace refused at push builds the page's one session, never a second copy in an app
    the page is not served from, and the line's own bookkeeping builds none."""
    import httpx
    from gradio import state_holder
    from hosted_fixtures import TinyCache, replay_fn_index

    from specviz.app.limits import HOSTED
    from specviz.app.site import bilingual_app, serve
    from specviz.models.presets import load_presets

    built: list[int] = []
    plain_init = state_holder.SessionState.__init__

    def counted(self, blocks):
        built.append(id(blocks))
        plain_init(self, blocks)

    monkeypatch.setattr(state_holder.SessionState, "__init__", counted)
    site = bilingual_app(load_presets(), TinyCache(), limits=HOSTED)  # type: ignore[arg-type]
    running = serve(site)
    try:
        root = next(route.app.blocks for route in site.routes if route.path == "")
        index = replay_fn_index(root)
        api = running.url + "gradio_api"
        with httpx.Client(timeout=60) as http:
            path = http.post(api + "/upload", files={"files": ("t.json", b"not a trace")}).json()
            file = {"path": path[0], "orig_name": "t.json", "meta": {"_type": "gradio.FileData"}}
            join = {"data": [file, ""], "fn_index": index, "session_hash": "probe1"}
            built.clear()
            answer = http.post(api + "/queue/join", json=join)
        assert answer.status_code == 422, answer.text
        assert built == [id(root)]
        assert "probe1" in root.state_holder
        built.clear()  # which line an event waits in is read without building its session
        asking = types.SimpleNamespace(fn_index=index, session_hash="probe2")
        assert site.state.queue.group_of(root._queue, asking) == "replay" and built == []
    finally:
        running.close()
