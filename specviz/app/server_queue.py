"""One waiting line for the whole server: the pages of every language count against one size.

Each Gradio Blocks has its own queue, and the site mounts one Blocks per language, so a queue
size set on each page would let the server hold that many per language (40 at / and 40 more at
/ja/). A ``ServerQueue`` joins every page's queue and refuses a new event, as Gradio's own full
queue does, once the events waiting on all pages together reach its size.
"""

from __future__ import annotations

from typing import Any


class ServerQueue:
    """The events waiting on every joined page's queue, held to one *max_size* (None: no cap)."""

    def __init__(self, max_size: int | None) -> None:
        self.max_size = max_size
        self.queues: list[Any] = []  # gradio.queueing.Queue, one per page

    def join(self, queue: Any) -> None:
        """Count *queue*'s waiting events with the others' and refuse its new events once the
        total is full; its own per-page cap is lifted (this one replaces it)."""
        queue.max_size = None
        page_push = queue.push

        async def push(body: Any, request: Any, username: str | None) -> tuple[Any, Any, str]:
            waiting = self.waiting()
            if self.max_size is not None and waiting >= self.max_size:
                # Gradio's own words and state, so the page and gradio_client say it as usual.
                message = f"Queue is full. Max size is {self.max_size} and size is {waiting}."
                return False, message, "queue_full"
            return await page_push(body, request, username)  # type: ignore[no-any-return]

        queue.push = push
        self.queues.append(queue)

    def waiting(self) -> int:
        """Events waiting now on all joined pages (a running event no longer waits)."""
        return sum(len(queue) for queue in self.queues)
