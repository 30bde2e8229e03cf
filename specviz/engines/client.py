"""HTTP to a serving engine with the standard library: GET and POST JSON, every failure a
UserError the reader can act on (a wrong URL, a server that is down, one that is too slow)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from specviz.text import UserError

# The body of an error answer quoted in a message: enough to see the server's reason.
_QUOTED_BODY = 200
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


def check_url(url: str) -> str:
    """*url* as a base to append paths to (no trailing slash); refuses anything that is not an
    http(s) address with a host."""
    text = (url or "").strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError("error.watch.url", url=text or "''")
    return text.rstrip("/")


@dataclass(frozen=True)
class Answer:
    """What the server said: its HTTP status and body."""

    status: int
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class ServerClient:
    """One server's base URL and the time its answers may take."""

    def __init__(self, url: str, timeout_s: float) -> None:
        self.url = check_url(url)
        self.timeout_s = timeout_s
        # A server on this machine is asked directly, whatever proxy the environment names.
        direct = urlsplit(self.url).hostname in _LOOPBACK
        handlers = [urllib.request.ProxyHandler({})] if direct else []
        self._opener = urllib.request.build_opener(*handlers)

    def get(self, path: str) -> Answer:
        """GET *path*; an error status comes back as an Answer, no answer at all as a UserError."""
        return self._send(urllib.request.Request(self.url + path, method="GET"))

    def post_json(self, path: str, payload: dict[str, Any]) -> Answer:
        """POST *payload* as JSON to *path*."""
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(payload).encode("utf-8"),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        return self._send(request)

    def json_of(self, answer: Answer, path: str) -> dict[str, Any]:
        """The JSON object of a successful *answer* to *path*; a UserError for an error status
        or a body that is not a JSON object."""
        if not answer.ok:
            raise UserError(
                "error.watch.http",
                url=self.url + path,
                status=answer.status,
                body=answer.text[:_QUOTED_BODY].strip() or "''",
            )
        try:
            data = json.loads(answer.body)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise UserError("error.watch.not_json", url=self.url + path)
        return data

    def _send(self, request: urllib.request.Request) -> Answer:
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                return Answer(response.status, response.read())
        except urllib.error.HTTPError as error:  # an answer, with an error status
            return Answer(error.code, error.read() if error.fp is not None else b"")
        except TimeoutError:
            raise UserError(
                "error.watch.timeout", url=request.full_url, seconds=f"{self.timeout_s:g}"
            ) from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise UserError(
                    "error.watch.timeout", url=request.full_url, seconds=f"{self.timeout_s:g}"
                ) from None
            raise UserError(
                "error.watch.unreachable", url=request.full_url, cause=str(error.reason)
            ) from None
        except OSError as error:  # a connection reset or closed mid-answer
            raise UserError(
                "error.watch.unreachable", url=request.full_url, cause=str(error)
            ) from None
