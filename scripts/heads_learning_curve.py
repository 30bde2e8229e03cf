"""How the Medusa heads' agreement grows with the text they are trained on: a learning curve over
the features `python -m specviz heads train` already read into the cache.

Trains fresh heads on the first 1/8, 1/4, 1/2 and all of each group's training chunks, each for
the same number of steps, and once on all of them for twice the steps (more passes over the same
text), then
measures each on the same held-out chunks with the full output layer, as `heads train` does.
Prints one row per training and, from the last doubling of the text, the text a 50 % head 1 on
code would need if the curve kept rising as it did.

    PYTHONPATH=. .venv/bin/python scripts/heads_learning_curve.py [--steps 240] [--json OUT]

Steps, not seconds: the runs train the same heads however busy the machine is.

Run `python -m specviz heads train` first (it reads the text once; this script reads none).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

import torch

from specviz.models.heads.block import MedusaHeads
from specviz.models.heads.features import load_chunk
from specviz.models.heads.store import heads_folder, read_report
from specviz.models.heads.train import (
    TrainingOptions,
    agreement,
    fit_heads,
    head_pairs,
    output_weight_of,
)

FRACTIONS = (0.125, 0.25, 0.5, 1.0)


def load_target():  # type: ignore[no-untyped-def]
    from specviz.cli.heads import load_target as load
    from specviz.cli.main import _parser

    args = _parser("en").parse_args(["heads", "show"])
    return load(args)[0]


def training_chunks(features: Path, fraction: float) -> list[Path]:
    """The first *fraction* of each group's training chunks, in the order they were read."""
    by_group: dict[str, list[Path]] = {}
    for path in sorted(features.glob("train-*.pt")):
        group = re.match(r"train-(\w+)-\d+\.pt", path.name)
        assert group is not None
        by_group.setdefault(group.group(1), []).append(path)
    return [p for paths in by_group.values() for p in paths[: max(1, round(len(paths) * fraction))]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=240, help="training steps per run")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    model = load_target()
    folder = heads_folder(model)
    report = read_report(folder)
    folders = sorted(folder.glob("features-*"))
    if report is None or not folders:
        print("No heads trained yet: run `python -m specviz heads train` first.", file=sys.stderr)
        return 1
    features = folders[-1]
    heads_count = int(report["heads"])
    weight = output_weight_of(model)
    held = [load_chunk(path) for path in sorted(features.glob("held-*.pt"))]
    runs = [(fraction, args.steps) for fraction in FRACTIONS] + [(1.0, 2 * args.steps)]
    rows = []
    for fraction, most in runs:
        pairs = head_pairs(
            [load_chunk(p) for p in training_chunks(features, fraction)], heads_count
        )
        heads = MedusaHeads(heads_count, int(weight.shape[1]))
        options = TrainingOptions(heads=heads_count)
        checkpoint = Path(f"/tmp/heads-curve-{fraction}-{most}.pt")
        checkpoint.unlink(missing_ok=True)
        began = time.perf_counter()
        steps, loss = fit_heads(
            heads, weight, pairs, options, math.inf, checkpoint, lambda s, v: None, most
        )
        checkpoint.unlink(missing_ok=True)
        measured = agreement(heads, weight, held)
        row = {
            "positions": int(pairs.hidden.shape[0]),
            "seconds": round(time.perf_counter() - began, 1),
            "steps": steps,
            "loss": round(loss, 3),
            "agreement": measured,
        }
        rows.append(row)
        code = measured["code"]["top1"]
        print(
            f"{row['positions']:>7} positions {steps:>5} steps  code top-1 "
            + "  ".join(f"h{k + 1} {v:.1%}" for k, v in enumerate(code))
            + f"  prose h1 {measured['prose']['top1'][0]:.1%}  ja h1 {measured['ja']['top1'][0]:.1%}",
            flush=True,
        )
    # Head 1 on code against log2(positions) over the last doubling of the text (equal steps).
    half, whole = rows[len(FRACTIONS) - 2], rows[len(FRACTIONS) - 1]
    gain = whole["agreement"]["code"]["top1"][0] - half["agreement"]["code"]["top1"][0]
    now = whole["agreement"]["code"]["top1"][0]
    if gain > 0:
        doublings = (0.5 - now) / gain
        needed = whole["positions"] * 2**doublings
        print(
            f"head 1 on code gained {gain:.1%} from the last doubling; at that rate 50 % needs "
            f"{doublings:.1f} more doublings, about {needed:,.0f} positions "
            f"({math.log10(needed):.1f} in log10)"
        )
    print(f"CPU threads {torch.get_num_threads()}; features {features}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
