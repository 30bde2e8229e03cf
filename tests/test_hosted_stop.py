"""Stop ends long work between forwards: a long prompt between its chunks, a lab between its runs.

The app runs on the tiny pair with its target slowed (hosted_fixtures.SlowCache), so a forward
takes long enough for a visitor's Stop (gradio_client's cancel, as the Stop button's) to land
between two of them. Each test counts the target's forwards after Stop and asks the engine lock.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hosted_fixtures import SlowCache, launch, wait_for
from test_hosted_api import RUN

from specviz.app.limits import HOSTED

FORWARD_S = 0.2
CHUNK = 2
PROMPT = "x" * 40  # 40 byte tokens: 19 chunks of 2 before the last


@pytest.fixture(scope="module")
def slow_app() -> Iterator[tuple[SlowCache, str]]:
    cache = SlowCache(FORWARD_S)
    demo, url = launch(cache, dataclasses.replace(HOSTED, prefill_chunk=CHUNK))
    yield cache, url
    demo.close()


def busy(url: str) -> bool:
    from gradio_client import Client

    return bool(Client(url, verbose=False).predict(api_name="/health")["busy"])


def stopped(cache: SlowCache, url: str) -> int:
    """The target's forwards once the engine is free and stays free for a few forwards' time
    (a stop that did not land would read on)."""
    wait_for(lambda: not busy(url), within_s=10 * FORWARD_S + 5, what="the engine lock")
    read = len(cache.forwards)
    time.sleep(5 * FORWARD_S)
    assert len(cache.forwards) == read, "the run went on after Stop"
    assert not busy(url)
    return read


def shown(job: Any, words: str) -> bool:
    return any(words in json.dumps(output) for output in job.outputs())


def test_stop_ends_a_long_prompt_between_its_chunks(slow_app: tuple[SlowCache, str]) -> None:
    from gradio_client import Client

    cache, url = slow_app
    cache.forwards.clear()
    job = Client(url, verbose=False).submit(*RUN[:2], PROMPT, *RUN[3:], api_name="/run")
    wait_for(lambda: shown(job, "Reading the prompt: 4 / 40 tokens"), what="the second chunk")
    job.cancel()
    read = stopped(cache, url)
    assert set(cache.forwards) == {CHUNK}  # chunks only: the first cycle never began
    assert read < len(PROMPT) // CHUNK - 1


def test_a_long_prompt_read_to_the_end_decodes(slow_app: tuple[SlowCache, str]) -> None:
    from gradio_client import Client

    cache, url = slow_app
    cache.forwards.clear()
    prompt = "x" * 9  # four chunks of 2, then the last token with the first drafts
    text, stats = Client(url, verbose=False).predict(
        prompt, max_new_tokens=2, gamma=1, api_name="/generate"
    )
    assert cache.forwards[:4] == [CHUNK] * 4
    assert stats["totals"]["new_tokens"] == 2 and text
