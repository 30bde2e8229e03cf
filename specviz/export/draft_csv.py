"""A run's drafted tokens as CSV: one row per drafted token, for a spreadsheet or pandas.

The columns are fixed machine names (a file read by programs, in every language); the last one,
``decision``, is the inspector's sentence for the token in the reader's language. Where
min(1, p/q) did not decide a token (greedy decoding keeps a draft when it is the target's argmax;
a draft after the first rejection is never tested) its column and u are left empty, and
``rule`` says what decided instead.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from specviz.core.events import Cycle, DraftToken
from specviz.text import DEFAULT_LANGUAGE
from specviz.views.verdicts import decided_by_path, draft_sentence, has_dice_roll

COLUMNS = (
    "cycle",  # 1-based, as the app numbers cycles
    "position",  # 1..γ within the cycle
    "seq_index",  # the generated token's index this draft would take (0 = the first new token)
    "token_id",
    "token_text",
    "q_draft",  # q(x), the drafter's probability of the token
    "p_target",  # p(x), the target's
    # min(1, p/q) where it decided the token (the whole path's chance in a tree tested from its
    # leaves up), else empty
    "accept_prob",
    "uniform",  # the u drawn against it, else empty
    "rule",  # "min(1,p/q)", "path_chance", "greedy_argmax" or "untested"
    "verdict",  # "accepted", "rejected" or "untested"
    "drafter",
    "decision",  # the inspector's sentence
)


def _rule(cycle: Cycle, token: DraftToken) -> str:
    if has_dice_roll(cycle, token):
        return "path_chance" if decided_by_path(cycle) else "min(1,p/q)"
    return "greedy_argmax" if token.tested else "untested"


def draft_rows(cycles: Sequence[Cycle], lang: str = DEFAULT_LANGUAGE) -> list[dict[str, object]]:
    """One dict per drafted token, keyed by COLUMNS, in the order the tokens were drafted."""
    rows: list[dict[str, object]] = []
    for cycle in cycles:
        for token in cycle.drafted:
            rolled = has_dice_roll(cycle, token)
            rows.append(
                {
                    "cycle": cycle.index + 1,
                    "position": token.position,
                    "seq_index": token.seq_index,
                    "token_id": token.token_id,
                    "token_text": token.special or token.text,
                    "q_draft": token.q_draft,
                    "p_target": token.p_target,
                    "accept_prob": token.accept_prob if rolled else "",
                    "uniform": token.uniform if rolled and token.uniform is not None else "",
                    "rule": _rule(cycle, token),
                    "verdict": token.verdict,
                    "drafter": cycle.drafter,
                    "decision": draft_sentence(cycle, token, lang),
                }
            )
    return rows


def draft_csv(cycles: Sequence[Cycle], lang: str = DEFAULT_LANGUAGE) -> str:
    """The rows as CSV text with a header line (RFC 4180 quoting; token text kept exact)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(draft_rows(cycles, lang))
    return out.getvalue()
