"""One waiting line for the whole server: the pages of every language count against one size.

Each Gradio Blocks has its own queue, and the site mounts one Blocks per language, so a queue
size set on each page would let the server hold that many per language (40 at / and 40 more at
/ja/). A ``ServerQueue`` joins every page's queue and refuses a new event, as Gradio's own full
queue does, once the events waiting on all pages together reach its size.

Some concurrency groups wait in a line of their own (*own_lines*: the trace replays): their events
count against that line's size only, never the main one, so a burst of uploads cannot take the
places of visitors waiting to run a model, and a room of runs cannot keep a replay out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ServerQueue:
    """The events waiting on every joined page's queue, held to one *max_size* (None: no cap);
    the groups in *own_lines* (concurrency id -> size) each held to their own size instead."""

    def __init__(self, max_size: int | None, own_lines: Mapping[str, int] | None = None) -> None:
        self.max_size = max_size
        self.own_lines = dict(own_lines or {})
        self.queues: list[Any] = []  # gradio.queueing.Queue, one per page

    def join(self, queue: Any) -> None:
        """Count *queue*'s waiting events with the others' and refuse its new events once their
        line is full; its own per-page cap is lifted (this one replaces it)."""
        queue.max_size = None
        page_push = queue.push

        async def push(body: Any, request: Any, username: str | None) -> tuple[Any, Any, str]:
            group = self.group_of(queue, body)
            size = self.own_lines.get(group, self.max_size) if group else self.max_size
            waiting = self.waiting(group)
            if size is not None and waiting >= size:
                # Gradio's own words and state, so the page and gradio_client say it as usual.
                message = f"Queue is full. Max size is {size} and size is {waiting}."
                return False, message, "queue_full"
            return await page_push(body, request, username)  # type: ignore[no-any-return]

        queue.push = push
        self.queues.append(queue)

    @staticmethod
    def group_of(queue: Any, body: Any) -> str | None:
        """The concurrency id of the event *body* asks for (None when it names no event).

        Read from the page's own events, not the visitor's session: looking the session up would
        build its state (every component's config, the costliest step of a join on the server's
        event loop) before the event is even let in. The pages render nothing per session, so a
        session's events are the page's."""
        try:
            return str(queue.blocks.fns[body.fn_index].concurrency_id)
        except Exception:  # no event or an unknown one: Gradio's own push answers it
            return None

    def waiting(self, group: str | None = None) -> int:
        """Events waiting now on all joined pages in *group*'s line: the group itself when it has
        a line of its own, else every group without one (a running event no longer waits)."""
        own = group in self.own_lines
        return sum(
            len(line.queue)
            for queue in self.queues
            for name, line in queue.event_queue_per_concurrency_id.items()
            if (name == group if own else name not in self.own_lines)
        )
