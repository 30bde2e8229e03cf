"""The one progress callback: what loading and measuring report as they go, and the app shows.

``progress(fraction, message)``: how much is done, from 0 to 1, then what happens now, in words
each front end writes in its reader's language (a progress bar, a line on stderr).
"""

from __future__ import annotations

from collections.abc import Callable

from specviz.text.catalogue import Phrase

Progress = Callable[[float, Phrase], None]
