"""Medusa heads for a target (Cai et al., "Medusa", 2024): small residual blocks on the target's
last hidden state that guess the tokens after the next one, trained on this machine.

block: the heads themselves; store: where a target's trained heads live; corpus: the offline
text they learn from; features: one pass of the target over it; train: fitting and measuring;
report: the measured agreement as a plain record, for the views; vllm_export: the checkpoint
vLLM serves them from.

Importing this package loads no torch (the production configs read DEFAULT_HEADS).
"""

DEFAULT_HEADS = 4  # heads `heads train` fits unless told otherwise: head k guesses k + 1 ahead
