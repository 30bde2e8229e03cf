"""What the cumulative draft stop changes, counted rather than timed (no timing noise).

For each task's first bundled prompt and each γ (greedy, 64 new tokens), runs specviz with the
per-token stop alone and with the per-token plus the cumulative stop, and prints target passes P,
draft forwards D and tokens per unit of work, tokens / (P + COST × D), where COST is a draft step's
cost relative to a target pass (about 0.18 on the bundled pair on a 2-core CPU):
    .venv/bin/python scripts/stop_rule_counts.py [COST]
"""

import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from specviz.core.engine import GenerationSettings, speculative_generate
from specviz.drafters.draft_model import ModelDrafter
from specviz.models.loader import ModelCache
from specviz.models.presets import default_preset, load_presets

cost = float(sys.argv[1]) if len(sys.argv) > 1 else 0.18
preset = default_preset(load_presets())
pair = ModelCache().load_pair(preset)
rules = {
    "per-token": {"draft_stop_below": preset.draft_stop_below},
    "+cumulative": {
        "draft_stop_below": preset.draft_stop_below,
        "draft_stop_cumulative": preset.draft_stop_cumulative,
    },
}
print(f"per-token stop {preset.draft_stop_below}, cumulative {preset.draft_stop_cumulative}")
for task, prompts in preset.prompts.items():
    prompt_ids = pair.encode_prompt(prompts[0], chat=preset.chat_template)
    for gamma, adaptive in ((3, False), (5, False), (7, False), (5, True)):
        cells = []
        for name, stops in rules.items():
            settings = GenerationSettings(
                gamma=gamma, adaptive_gamma=adaptive, max_new_tokens=64, **stops
            )
            drafter = ModelDrafter(pair.draft)
            totals = list(speculative_generate(pair, prompt_ids, settings, drafter))[-1].totals
            work = totals.target_forwards + cost * totals.draft_forwards
            cells.append(
                f"{name} P{totals.target_forwards} D{totals.draft_forwards} "
                f"{totals.new_tokens / work:.2f}"
            )
        label = f"adaptive({gamma})" if adaptive else str(gamma)
        print(f"{task:<12} γ={label:<12} " + " | ".join(cells), flush=True)
