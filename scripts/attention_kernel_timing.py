"""One attention call at the bundled target's shapes, three ways: why the lean step groups heads.

One query (a decoding step) against CACHED positions, 12 query heads over 2 key/value heads, head
size 128, bfloat16 inputs, on this CPU: PyTorch's scaled_dot_product_attention (transformers'
default), transformers' eager form (repeat the cache per head, product in bfloat16) and the lean
step's float32 grouped form (specviz.models.lean_forward.grouped_attention). Median µs per call:
    .venv/bin/python scripts/attention_kernel_timing.py [CACHED ...]
"""

import os
import statistics
import sys
import time
from collections.abc import Callable

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from specviz.models.lean_forward import grouped_attention

HEADS, KV_HEADS, DIM = 12, 2, 128
SCALING = DIM**-0.5


def eager(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """transformers' eager_attention_forward for one query, no mask."""
    groups = HEADS // KV_HEADS
    keys = key[:, :, None].expand(1, KV_HEADS, groups, *key.shape[2:]).reshape(1, HEADS, -1, DIM)
    values = value[:, :, None].expand(1, KV_HEADS, groups, *value.shape[2:])
    values = values.reshape(1, HEADS, -1, DIM)
    weights = torch.matmul(query, keys.transpose(2, 3)) * SCALING
    weights = torch.softmax(weights, dim=-1, dtype=torch.float32).to(query.dtype)
    return torch.matmul(weights, values)


def median_us(call: Callable[[], object], repeats: int = 500) -> float:
    for _ in range(20):
        call()
    samples = []
    for _ in range(5):
        began = time.perf_counter()
        for _ in range(repeats // 5):
            call()
        samples.append((time.perf_counter() - began) / (repeats // 5) * 1e6)
    return statistics.median(samples)


def time_one(cached: int) -> str:
    query = torch.randn(1, HEADS, 1, DIM).bfloat16()
    key, value = (torch.randn(1, KV_HEADS, cached, DIM).bfloat16() for _ in range(2))
    key32, value32 = key[0].float(), value[0].float()  # the lean cache is float32, batch-free
    sdpa = median_us(
        lambda: torch.nn.functional.scaled_dot_product_attention(
            query, key, value, scale=SCALING, enable_gqa=True
        )
    )
    repeated = median_us(lambda: eager(query, key, value))
    grouped = median_us(lambda: grouped_attention(query[0], key32, value32, SCALING, None))
    return f"{cached:5d} cached: SDPA {sdpa:6.0f} µs | eager {repeated:6.0f} µs | lean {grouped:6.0f} µs"


torch.manual_seed(0)
for cached in [int(arg) for arg in sys.argv[1:]] or [100, 300, 600]:
    print(time_one(cached))
