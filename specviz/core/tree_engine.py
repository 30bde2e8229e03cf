"""Speculative decoding over draft trees: each cycle the drafter proposes a tree, the target
scores all of it in one forward (specviz.core.tree), a rule picks the path that survives, and
the target's KV cache keeps that path's entries only (a gather, no second forward).

The target's law is kept exactly by the rule: at a temperature above 0, where the children were
drawn from the draft's q, the one the proposal names (``verify_tree_traversal`` from the leaves
up, or ``verify_tree_recursive``, siblings in turn from the root); where they were chosen,
``verify_tree_recursive`` with one-hot proposals; ``verify_tree_greedy`` at temperature 0. Each
cycle is a ``Cycle`` record, as the chain engine writes: its ``drafted`` tokens are the tree's
main line, so every chain view reads it, and its ``tree`` holds every node with its verdict. specviz.core.engine.speculative_stream runs
this loop for any drafter with ``propose_tree``; chains keep the chain engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, cast

import torch

from specviz.core.device import sync
from specviz.core.events import (
    Cycle,
    DraftToken,
    EmittedToken,
    Origin,
    Rejection,
    Timing,
    TokenProb,
    TreeNode,
    TreeRecord,
)
from specviz.core.proposal import TreeDrafter, TreeProposal, VerificationReader
from specviz.core.run import (
    CommittedContext,
    ModelPairLike,
    Run,
    SelfDrafter,
    bars,
    token_probs,
    vocab_text,
)
from specviz.core.sampling import Sampler, top_entries_per_row
from specviz.core.settings import GAMMA_MAX, GenerationSettings
from specviz.core.tree import (
    ROOT,
    DraftTree,
    TreeVerdict,
    first_choices,
    verify_tree_greedy,
    verify_tree_recursive,
)
from specviz.core.tree_traversal import verify_tree_traversal


class TreeRunner(Protocol):
    """What the tree loop needs of the target's runner (specviz.models.runner.ModelRunner)."""

    @property
    def cache_len(self) -> int: ...

    def forward(self, input_ids: torch.Tensor, logits_to_keep: int = 1) -> torch.Tensor: ...

    def tree_forward(self, tree: DraftTree, root_id: int) -> torch.Tensor: ...

    def keep_path(self, path: Sequence[int]) -> None: ...


# A sampled verification rule: (tree, q rows or None, p rows, sampler) -> verdict. Tests pass a
# wrong one to see the statistical check fail.
Rule = Callable[[DraftTree, "torch.Tensor | None", torch.Tensor, Sampler], TreeVerdict]

# The exact rules for a tree whose children were drawn from q, by TreeProposal.rule.
SAMPLED_RULES: dict[str, Rule] = {
    "traversal": verify_tree_traversal,
    "recursive": verify_tree_recursive,
}


def tree_stream(
    pair: ModelPairLike,
    prompt_ids: torch.Tensor,
    settings: GenerationSettings,
    drafter: TreeDrafter,
    rule: Rule | None = None,
) -> Iterator[Cycle]:
    """Tree decoding of the target with *drafter*, one Cycle per cycle; *rule* replaces the
    sampled rule (a test's wrong one). The app runs trees through speculative_stream."""
    run = Run(pair, prompt_ids, settings)
    stop_ids = frozenset(pair.eos_token_ids) if settings.stop_on_eos else frozenset()
    if isinstance(drafter, SelfDrafter):
        drafter.use_target(run.target)
    drafter.start(prompt_ids, settings, stop_ids)
    context = CommittedContext(prompt_ids, settings.max_new_tokens)
    return tree_cycles(run, context, drafter, rule)


@torch.inference_mode()
def tree_cycles(
    run: Run, context: CommittedContext, drafter: TreeDrafter, rule: Rule | None = None
) -> Iterator[Cycle]:
    """The cycles of one run after its prompt head is read: propose a tree, score it in one
    target forward, keep the rule's path, emit it and the token after it."""
    target = cast(TreeRunner, run.target)
    sampler = run.sampler
    for index in range(run.settings.max_new_tokens):
        # Depth at most remaining - 1, so the path plus the token after it fit the budget.
        max_depth = min(run.remaining - 1, GAMMA_MAX)
        proposal = drafter.propose_tree(context.ids, max_depth, sampler)
        tree = proposal.tree
        began = time.perf_counter()
        pending = run.pending  # (1, L): the root is its last token
        if pending.shape[1] > 1:  # the prompt's last chunk before the first tree
            target.forward(pending[:, :-1])
        root_id = int(pending[0, -1])
        p_rows = sampler.probs(target.tree_forward(tree, root_id))  # (M + 1, V)
        sync(run.device)
        verified = time.perf_counter()
        if sampler.greedy:
            verdict, rule_name = verify_tree_greedy(tree, p_rows), "greedy"
        elif proposal.drawn:
            rule_name = proposal.rule
            chosen = rule or SAMPLED_RULES[rule_name]
            verdict = chosen(tree, proposal.q_rows, p_rows, sampler)
        else:
            verdict = (rule or verify_tree_recursive)(tree, None, p_rows, sampler)
            rule_name = "recursive_one_hot"
        target.keep_path(verdict.path)
        if isinstance(drafter, VerificationReader):
            drafter.read_verification(tree, p_rows, verdict.path)

        line = _main_line(tree, verdict)
        drafted = _line_records(run, tree, line, verdict, proposal, p_rows)
        emitted, stop_reason = _emit(run, verdict, drafted)
        drafter.commit_tokens([token.token_id for token in emitted])
        context.extend([token.token_id for token in emitted])
        stop_node = verdict.path[-1] if verdict.path else ROOT
        tested_below = bool(tree.children(stop_node))
        rejection = None
        if tested_below:
            rejection = _rejection(
                run, drafted[len(verdict.path)], stop_node, proposal, p_rows, verdict
            )
        record = _tree_record(run, tree, verdict, rule_name, proposal, root_id, p_rows)
        timing = Timing(proposal.seconds, verified - began, time.perf_counter() - verified)
        accepted = len(verdict.path)
        # α counts depths tested, as the chain counts positions: the kept path, and the depth
        # below it where every child lost.
        tested = accepted + int(tested_below)
        run.count_cycle(len(emitted), proposal.forwards, tested, accepted, timing)
        yield Cycle(
            index=index,
            draft_len=len(drafted),
            greedy=sampler.greedy,
            drafted=drafted,
            accepted_len=accepted,
            emitted=emitted,
            rejection=rejection,
            timing=timing,
            totals=run.totals,
            target_cache_len=target.cache_len,
            draft_cache_len=drafter.cache_len,
            context_len=run.prompt_len + run.totals.new_tokens,
            finished=stop_reason is not None,
            stop_reason=stop_reason,
            # An empty tree: one token of budget left, nothing worth drafting before it.
            draft_end="budget" if max_depth < 1 else proposal.ended_by,
            draft_gamma=max(tree.depths, default=0),
            drafter=proposal.drafter,
            drafter_detail=proposal.shape,
            tree=record,
        )
        if stop_reason is not None:
            return
        run.pending = torch.tensor([[verdict.next_token]], device=run.device)


def _main_line(tree: DraftTree, verdict: TreeVerdict) -> list[int]:
    """The tree read as a chain: the kept path, then the first child tested below it (which
    lost) and that child's first children down to a leaf."""
    line = list(verdict.path)
    node = line[-1] if line else ROOT
    while children := tree.children(node):
        node = children[0]
        line.append(node)
    return line


def _tops(
    rows: torch.Tensor | None, tree: DraftTree, nodes: Sequence[int]
) -> list[list[tuple[int, float]]]:
    """The inspector's bars for each node: the top entries of its parent's row."""
    if rows is None or not nodes:
        return [[] for _ in nodes]
    parents = [tree.parents[node] + 1 for node in nodes]
    return top_entries_per_row(rows[parents])


def _line_records(
    run: Run,
    tree: DraftTree,
    line: list[int],
    verdict: TreeVerdict,
    proposal: TreeProposal,
    p_rows: torch.Tensor,
) -> tuple[DraftToken, ...]:
    """The main line as DraftToken records, position = depth."""
    tokens = [tree.tokens[node] for node in line]
    texts = run.detok.peek(tokens)
    tops_q = _tops(proposal.q_rows, tree, line)
    tops_p = _tops(p_rows, tree, line)
    start = run.totals.new_tokens
    tokenizer = run.pair.tokenizer
    records = []
    for i, (node, token_id) in enumerate(zip(line, tokens, strict=True)):
        parent_row = tree.parents[node] + 1
        tested = node in verdict.accept_probs
        records.append(
            DraftToken(
                position=i + 1,
                seq_index=start + i,
                token_id=token_id,
                text=texts[i],
                q_draft=float(proposal.q_rows[parent_row, token_id]),
                p_target=float(p_rows[parent_row, token_id]),
                accept_prob=verdict.accept_probs.get(node, 0.0),
                uniform=verdict.uniforms.get(node),
                tested=tested,
                accepted=node in verdict.path,
                top_q=token_probs(tokenizer, tops_q[i]),
                top_p=token_probs(tokenizer, tops_p[i]),
                special=run.detok.special_name(token_id),
            )
        )
    return tuple(records)


def _tree_record(
    run: Run,
    tree: DraftTree,
    verdict: TreeVerdict,
    rule_name: str,
    proposal: TreeProposal,
    root_id: int,
    p_rows: torch.Tensor,
) -> TreeRecord:
    """The tree with every node's verdict and, for a lookahead window, what the target made of
    it in the same forward."""
    tokenizer = run.pair.tokenizer
    window = bool(proposal.window_rows)
    return TreeRecord(
        _node_records(run, tree, verdict, proposal, p_rows),
        verdict.path,
        rule_name,
        proposal.shape,
        proposal.window_rows,
        window_root=TokenProb(root_id, vocab_text(tokenizer, root_id), 1.0) if window else None,
        window_next=_window_next(run, proposal.window_rows, p_rows),
        window_guesses=proposal.window_guesses,
        window_harvest=proposal.window_harvest,
    )


def _window_next(
    run: Run, window_rows: tuple[tuple[int, ...], ...], p_rows: torch.Tensor
) -> tuple[TokenProb, ...]:
    """A window's next row: the target's first choice after each slot of its newest row, the
    drafter's own reading (first_choices); () when a slot was left out (the window waits)."""
    newest = window_rows[-1] if window_rows else ()
    if not newest or ROOT in newest:
        return ()
    return token_probs(run.pair.tokenizer, first_choices(p_rows, newest))


def _node_records(
    run: Run,
    tree: DraftTree,
    verdict: TreeVerdict,
    proposal: TreeProposal,
    p_rows: torch.Tensor,
) -> tuple[TreeNode, ...]:
    """Every node of the tree with its verdict, its text decoded after its ancestors."""
    # Each node's text after its ancestors: one decode per leaf's path covers every node on it.
    texts: dict[int, str] = {}
    for leaf in (node for node in range(tree.size) if not tree.children(node)):
        path = tree.path_to(leaf)
        texts.update(zip(path, run.detok.peek([tree.tokens[step] for step in path]), strict=True))
    ranks: dict[int, int] = {}
    nodes = []
    for node, (token_id, parent) in enumerate(zip(tree.tokens, tree.parents, strict=True)):
        ranks[parent] = ranks.get(parent, 0) + 1
        text = texts[node]
        nodes.append(
            TreeNode(
                parent=parent,
                depth=tree.depths[node],
                rank=ranks[parent],
                token_id=token_id,
                text=text,
                q_draft=float(proposal.q_rows[parent + 1, token_id]),
                p_target=float(p_rows[parent + 1, token_id]),
                accept_prob=verdict.accept_probs.get(node, 0.0),
                uniform=verdict.uniforms.get(node),
                verdict=verdict.verdict_of(node),
                special=run.detok.special_name(token_id),
            )
        )
    return tuple(nodes)


def _emit(
    run: Run, verdict: TreeVerdict, drafted: tuple[DraftToken, ...]
) -> tuple[tuple[EmittedToken, ...], str | None]:
    """The kept path then the resampled or bonus token, cut at EOS or the token budget."""
    last_origin = Origin.BONUS if verdict.bonus else Origin.RESAMPLED
    kept = drafted[: len(verdict.path)]
    return run.emit(kept, verdict.next_token, verdict.next_dist, last_origin)


def _rejection(
    run: Run,
    rejected: DraftToken,
    stop_node: int,
    proposal: TreeProposal,
    p_rows: torch.Tensor,
    verdict: TreeVerdict,
) -> Rejection:
    """The bars at the depth where every child lost: p and q there, and the law the token
    after the path was drawn from (what is left of p once every child lost)."""
    tokenizer = run.pair.tokenizer
    row = stop_node + 1
    next_token = verdict.next_token
    return Rejection(
        position=rejected.position,
        rejected_token=TokenProb(rejected.token_id, rejected.text, rejected.q_draft),
        resampled_token=TokenProb(
            next_token,
            tokenizer.decode([next_token], skip_special_tokens=False),
            float(verdict.next_dist[next_token]),
        ),
        top_p=bars(tokenizer, p_rows[row]),
        top_q=bars(tokenizer, proposal.q_rows[row]),
        top_residual=() if run.sampler.greedy else bars(tokenizer, verdict.next_dist),
    )
