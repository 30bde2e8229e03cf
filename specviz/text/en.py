"""The English text: every sentence, label and message the user reads, by key.

Keys are grouped by where the text appears (``origin.*`` token kinds, ``tip.*`` token tooltips,
``card.*`` and ``cards.*`` the current cycle, ``counter.*``, ``race.*``, ``chart.*``, one prefix per
lab, ``cli.*``, ``error.*``). Fields in braces are filled by the code, which formats the numbers.
Another language is another module with the same keys and fields (tests/test_text.py checks).
"""

from __future__ import annotations

from types import MappingProxyType

TABLE = MappingProxyType(
    {
        # --- token origins: legend labels and what they mean --------------------------------------
        "origin.accepted": "accepted draft",
        "origin.accepted.meaning": "the draft guessed it and the target agreed",
        "origin.rejected": "rejected draft",
        "origin.rejected.meaning": "the draft's guess, thrown away by the target",
        "origin.untested": "never tested",
        "origin.untested.meaning": "drafted after a rejection, so discarded unchecked",
        "origin.resampled": "resampled",
        "origin.resampled.meaning": "the target's replacement for the rejected guess",
        "origin.bonus": "bonus",
        "origin.bonus.meaning": "a free extra token when every draft was accepted",
        "origin.target": "plain decoding",
        "origin.target.meaning": "one target forward pass per token",
        "legend.sample": "token",
        "legend.cycle": "cycle boundary",
        "legend.cycle.meaning": "one target forward pass each",
        "legend.hint": "Hover or click a token for q, p, min(1, p/q) and u.",
        # --- the token stream and its tooltips ----------------------------------------------------
        "stream.cycle_mark": "cycle {cycle}",
        "stream.stop.eos": "end of text",
        "stream.stop.max_new_tokens": "token limit reached",
        "tip.head": "{token}  {origin}",
        "tip.draft_where": "cycle {cycle}, draft position {position} of {gamma}",
        "tip.extra_where": "cycle {cycle}, position {position}",
        "tip.plain_where": "token {index}: one target forward pass",
        "tip.q_and_p": "q_draft = {q}   p_target = {p}",
        "tip.p_target": "p_target = {p}",
        "tip.accept_prob": "min(1, p/q) = {accept}",
        "tip.probability": "probability = {prob}",
        "tip.rule.greedy": "greedy: accepted only if it is the target's top choice",
        "tip.rule.sampled": "u = {u}  (accepted when u < min(1, p/q))",
        "tip.untested": "never tested: an earlier draft token was rejected",
        "tip.source.bonus": "drawn from p after every draft token was accepted",
        "tip.source.greedy": "the target's top choice at the rejected position",
        "tip.source.residual": "drawn from norm(max(0, p − q)) at the rejected position",
        # --- the current cycle's cards ------------------------------------------------------------
        "card.position": "draft {position}",
        "card.verdict.accepted": "✓ accepted",
        "card.verdict.rejected": "✗ rejected",
        "card.verdict.untested": "– not tested",
        "card.verdict.bonus": "★ bonus",
        "card.verdict.resampled": "↻ resampled",
        "card.u": "u = {u}",
        "card.q_and_p": "q {q} · p {p}",
        "card.accept_prob": "min(1, p/q) {accept}",
        "card.rule.greedy": "greedy: is it the target's top choice?",
        "card.rule.sampled": "accept if u {u} < {accept}",
        "card.probability": "probability {prob}",
        "card.why.bonus": "every draft accepted: one more token from p for free",
        "card.why.greedy": "target's top choice",
        "card.why.residual": "drawn from norm(max(0, p − q))",
        "cards.title": "Current cycle",
        "cards.placeholder": (
            "Press Run or Step: the draft model proposes γ tokens, the target checks them all in "
            "one forward pass."
        ),
        "cards.cycle": "Cycle {cycle}",
        "cards.head": (
            "{cycle} · drafted γ = {gamma} · {accepted} accepted · {outcome} → {new_tokens} from "
            "one target pass"
        ),
        "cards.new_tokens.one": "{n} new token",
        "cards.new_tokens": "{n} new tokens",
        "cards.outcome.rejected": "rejected at draft {position}, the target supplied a replacement",
        "cards.outcome.bonus": "all accepted, plus a bonus token",
        "cards.outcome.eos": "all accepted, and the answer ended",
        "cards.outcome.limit": "all accepted, and the token limit was reached",
        "cards.foot": (
            "draft {draft_ms} ms · verify {verify_ms} ms · overhead {overhead_ms} ms · KV cache "
            "after rollback: target {target_cache}, draft {draft_cache}"
        ),
        "caption.none": "No rejection yet: every draft token has been accepted.",
        "caption.where_cycle": "cycle {cycle}, draft {position}",
        "caption.where": "draft {position}",
        "caption.rejection": (
            "Last rejection ({where}): the draft guessed {rejected} (q = {q}); the target replaced "
            "it with {resampled}."
        ),
        # --- counters -----------------------------------------------------------------------------
        "counter.tokens": "tokens generated",
        "counter.tokens.note": "new tokens so far",
        "counter.target_forwards": "target passes",
        "counter.target_forwards.note": "plain decoding needs {n}",
        "counter.saved": "target passes saved",
        "counter.saved.note": "{percent}% fewer than plain decoding",
        "counter.draft": "draft passes",
        "counter.draft.note": "cheap forwards of the draft",
        "counter.alpha": "acceptance rate α",
        "counter.alpha.note": "{accepted} of {tested} tested drafts",
        "counter.tau": "tokens per target pass τ",
        "counter.tau.note": "plain decoding: 1.00",
        "counter.tps": "tokens / s",
        "counter.tps.note": "{seconds} s engine time",
        "counter.gamma": "γ this cycle",
        "counter.gamma.note": "tokens drafted",
        # --- the race -----------------------------------------------------------------------------
        "race.waiting": "waiting",
        "race.speed": "{tps} tok/s",
        "race.numbers": "{speed} · {tokens} tokens · {passes} target passes · {seconds} s",
        "race.speedup": "{ratio}× faster",
        "race.speedup.waiting": "speedup: waiting for both runs",
        "race.spec": "Speculative decoding",
        "race.spec.placeholder": "not started",
        "race.plain": "Plain decoding (target only)",
        "race.plain.placeholder": "runs after the speculative run",
        "race.method": (
            "Both runs decode the same target with the same settings and seed, one after the "
            "other; speeds are compute time measured inside the engine (each reads the prompt in "
            "its first pass; the app's own drawing is excluded), so the UI does not distort the "
            "comparison."
        ),
        "race.same_tokens": "Both runs produced exactly the same tokens.",
        "race.differ.sampled": (
            "The texts differ because sampling draws different random numbers; both follow the "
            "target's distribution exactly."
        ),
        "race.part.at": "at token {index}",
        "race.part.length": "in length",
        "race.differ.greedy": (
            "The greedy texts part {where}: in reduced precision the target's one batched "
            "verification pass and its one-token steps round slightly differently, so a near-tie "
            "can break the other way. In float32 they match token for token (see the tests)."
        ),
        "race.replay": "replay · {seconds} s",
        # --- the probability inspector (the dice roll) -------------------------------------------
        "inspector.explanation": (
            "Each drafted token x was sampled by the draft from q. The target then scored it: "
            "p(x). The verifier draws u uniformly from [0, 1) and **accepts x if u < min(1, "
            "p(x)/q(x))**: a token the target likes at least as much as the draft always passes; "
            "one the draft over-rates passes only sometimes (Leviathan et al. 2023, Algorithm 1). "
            "At the first rejection the replacement is drawn from the **residual** norm(max(0, "
            "p − q)), the probability the draft under-supplied, which is exactly what makes every "
            "emitted token follow p. Later drafts are never tested. In greedy mode (temperature 0) "
            "there is no dice roll: a draft is kept while it is the target's top choice."
        ),
        "inspector.decision.untested": (
            "not tested: an earlier draft was rejected, so this guess was discarded"
        ),
        "inspector.decision.greedy_accepted": "the target's top choice too → accepted",
        "inspector.decision.greedy_rejected": "the target's top choice is {top} → rejected",
        "inspector.decision.accepted": "u = {u} < min(1, p/q) = {accept} → accepted",
        "inspector.decision.rejected": "u = {u} ≥ min(1, p/q) = {accept} → rejected",
        "inspector.extra.none": (
            "The run stopped inside this cycle, so no token was added after the drafts."
        ),
        "inspector.extra.bonus": (
            "All {gamma} drafts passed, so the target's own next distribution p gave a bonus "
            "token {token} (p = {prob})."
        ),
        "inspector.extra.greedy": (
            "Draft {position} was rejected; the target's top choice {token} (p = {prob}) took its "
            "place."
        ),
        "inspector.extra.residual": (
            "Draft {position} was rejected; {token} was drawn from the residual norm(max(0, p − "
            "q)) with probability {prob}."
        ),
        "inspector.end.budget": (
            "The draft stopped after {n}: only that many tokens were left in the budget."
        ),
        "inspector.end.eos": (
            "The draft stopped after {n}: its last guess ends the text, so nothing after it could "
            "be kept."
        ),
        "inspector.end.confidence": (
            "The draft stopped itself after {n}: it gave its last guess {token} only q = {q} (the "
            "per-token confidence stop)."
        ),
        "inspector.end.cumulative": (
            "The draft stopped itself after {n}: its own estimate that every guess is right, "
            "{product} = {total}, fell below the cumulative stop."
        ),
        "inspector.end.cumulative_scaled": (
            "The draft stopped itself after {n}: its estimate that every guess is right, "
            "{product} = {total}, fell below the cumulative stop. Each factor is 1 − {scale} × "
            "(1 − its top probability): earlier in this run its guesses were right more often "
            "than it expected, so its doubts count for less."
        ),
        "inspector.lines.head": "cycle {cycle}: γ = {gamma}, {accepted} accepted",
        "inspector.lines.greedy": " (greedy)",
        "inspector.lines.draft": "  draft {position} {token}  q {q}  p {p}  {decision}",
        "inspector.lines.top_q": "      top q: {entries}",
        "inspector.lines.top_p": "      top p: {entries}",
        "inspector.lines.top_residual": "      top residual: {entries}",
        "inspector.placeholder": (
            "Run or Step on the Live run tab first, then pick a cycle here (or click a token in "
            "the stream)."
        ),
        "inspector.cycle": "Cycle {cycle}",
        "inspector.of_count": " of {count}",
        "inspector.summary": " · γ = {gamma} drafted · {accepted} accepted",
        "inspector.summary.greedy": " · greedy",
        "inspector.column.draft": "draft",
        "inspector.column.token": "token x",
        "inspector.column.q": "q(x)",
        "inspector.column.p": "p(x)",
        "inspector.column.ratio": "p/q",
        "inspector.column.accept": "min(1, p/q)",
        "inspector.column.u": "u",
        "inspector.column.decision": "decision",
        "inspector.chart.empty_title": "The dice roll, position by position",
        "inspector.chart.no_cycle": "no cycle selected",
        "inspector.chart.title": "Cycle {cycle}: q (draft) and p (target) at each drafted position",
        "inspector.chart.panel": "draft {position}: {token} — {decision}",
        "inspector.chart.residual": "residual norm(max(0, p − q))",
        # --- the live run's charts (Plotly: {x}-style values are Plotly's own references) -------
        "chart.axis.token": "token",
        "chart.axis.probability": "probability",
        "chart.axis.milliseconds": "milliseconds",
        "chart.no_cycles": "no cycles yet",
        "chart.series.p_target": "p (target)",
        "chart.series.q_draft": "q (draft)",
        "chart.hover.value": "{label}<br>{name} = {value}",
        "chart.acceptance.title": "Acceptance rate by draft position",
        "chart.acceptance.x": "draft position",
        "chart.acceptance.y": "accepted / tested",
        "chart.acceptance.series": "acceptance rate",
        "chart.acceptance.hover": "draft position {position}<br>accepted {counts}<br>rate {rate}",
        "chart.accepted_length.title": "Accepted draft tokens per cycle",
        "chart.accepted_length.x": "accepted tokens in the cycle",
        "chart.accepted_length.y": "cycles",
        "chart.accepted_length.series": "cycles",
        "chart.accepted_length.hover": "{cycles} cycles accepted {accepted} draft tokens",
        "chart.tokens.title": "Tokens vs target forward passes",
        "chart.tokens.x": "target forward passes",
        "chart.tokens.y": "tokens generated",
        "chart.tokens.speculative": "speculative",
        "chart.tokens.plain_measured": "plain decoding (measured)",
        "chart.tokens.plain_ideal": "plain decoding (1 token per pass)",
        "chart.time.title": "Time per cycle",
        "chart.time.x": "cycle",
        "chart.time.draft": "draft",
        "chart.time.verify": "verify",
        "chart.time.overhead": "overhead",
        "chart.time.hover": "cycle {cycle}: {part} {ms} ms",
        "chart.rejection.empty_title": "At a rejection: p, q and the residual",
        "chart.rejection.none": "no rejection yet",
        "chart.rejection.title": "Rejection at draft {position}: p, q and the residual",
        "chart.rejection.x": "token (✗ rejected guess, ↻ replacement)",
        "chart.rejection.residual": "residual max(0, p − q), normalised",
    }
)
