"""Tiny real models and the byte tokenizer they read, built in memory from a config with a fixed
seed: the fast tests' models, and Markov-chain models whose law is known in closed form.

Not a test module: tests and conftest.py import from here (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

import pytest
import torch
from transformers import DynamicCache, PretrainedConfig, Qwen2Config, Qwen2ForCausalLM

from specviz.core.settings import GenerationSettings
from specviz.models.runner import ModelRunner

ConfigT = TypeVar("ConfigT", bound=PretrainedConfig)

BYTE_VOCAB = 256
EOS_ID = 256  # one special token after the 256 byte values


class ByteTokenizer:
    """A real byte-level tokenizer (as in ByT5): id b < 256 is the byte b; 256 is end-of-text.

    Multi-byte UTF-8 characters span several tokens, which is what incremental detokenisation
    has to get right.
    """

    eos_token_id = EOS_ID
    all_special_ids = [EOS_ID]  # noqa: RUF012 - read-only, as the tokenizer protocol's property

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, token_ids: list[int], skip_special_tokens: bool = False) -> str:
        data = bytes(i for i in token_ids if i < BYTE_VOCAB)
        text = data.decode("utf-8", errors="replace")
        if not skip_special_tokens and EOS_ID in token_ids:
            text += "</s>"
        return text


class OneWordVocab:
    """The tokenizer calls load_pair makes, over one shared vocabulary: a stand-in for load_tokenizer
    where the models are tiny stand-ins too."""

    eos_token_id = 0
    unk_token_id = None

    def get_vocab(self) -> dict[str, int]:
        return {"a": 0}

    def __len__(self) -> int:
        return 257

    def convert_tokens_to_ids(self, token: str) -> None:
        return None

    def encode(self, text: str) -> list[int]:
        """Ids for the step costs' agreement text (the tiny models read any id below 257)."""
        return [byte % 200 + 1 for byte in text.encode("utf-8")]


class LoaderTokenizer(ByteTokenizer):
    """What the loader and a run ask of a transformers tokenizer, over the byte vocabulary."""

    unk_token_id = None
    chat_template = None

    def get_vocab(self) -> dict[str, int]:
        return {str(index): index for index in range(EOS_ID + 1)}

    def __len__(self) -> int:
        return EOS_ID + 1

    def __call__(self, text: str, **_: Any) -> dict[str, list[int]]:
        return {"input_ids": self.encode(text)}

    def convert_tokens_to_ids(self, token: str) -> int:
        return -1


def load_tiny_models(monkeypatch: pytest.MonkeyPatch, cache_folder: Path) -> list[str]:
    """Make the loader read tiny models ("draft": 2 layers, any other ref: 3) and the byte
    tokenizer instead of files, its cost cache in *cache_folder*; returns the refs it reads."""
    from specviz.models import loader

    read: list[str] = []

    def load_model(source: Any, *args: Any, **kwargs: Any) -> torch.nn.Module:
        read.append(source.ref)
        return tiny_qwen(1) if source.ref == "draft" else tiny_qwen(2, layers=3)

    monkeypatch.setenv("SPECVIZ_CACHE", str(cache_folder))
    monkeypatch.setattr(loader, "load_model", load_model)
    # A quiet machine, whatever else runs beside the tests: costs timed under load are not
    # cached, and these tests read the cache back.
    monkeypatch.setattr(loader, "OthersShare", lambda: SimpleNamespace(share=lambda: 0.0))
    monkeypatch.setattr(loader, "load_tokenizer", lambda *args: LoaderTokenizer())
    return read


def tiny_local_preset(**changes: Any) -> Any:
    """A preset of the models load_tiny_models serves (local sources "draft" and "target")."""
    from dataclasses import replace

    from specviz.models.presets import ModelSource, Preset

    preset = Preset(
        id="tiny",
        label="tiny",
        description="",
        draft=ModelSource("local", "draft"),
        target=ModelSource("local", "target"),
        dtype="float32",
        settings=GenerationSettings(),
        chat_template=False,
        trust_remote_code=False,
        default=False,
        prompts={"code": ("x",)},
    )
    return replace(preset, **changes)


@dataclass
class TinyPair:
    """What the engine needs of a pair, around tiny in-memory models."""

    draft: torch.nn.Module
    target: torch.nn.Module
    tokenizer: ByteTokenizer
    eos_token_ids: frozenset[int]

    def target_runner(self) -> ModelRunner:
        return ModelRunner(self.target)


def tiny_config(config_type: type[ConfigT], layers: int = 2, **overrides: Any) -> ConfigT:
    """The tiny test shape for any decoder family: byte vocabulary, 64 wide, 4 query heads over 2
    key/value heads (grouped attention), untied output layer unless overrides say otherwise."""
    shape: dict[str, Any] = {
        "vocab_size": BYTE_VOCAB + 1,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 512,
        "tie_word_embeddings": False,
    }
    return config_type(**(shape | overrides))


def tiny_qwen(seed: int, layers: int = 2, dtype: torch.dtype = torch.float32) -> Qwen2ForCausalLM:
    """A randomly initialised Qwen2 with a byte vocabulary: real attention and KV cache, tiny."""
    torch.manual_seed(seed)
    config = tiny_config(Qwen2Config, layers, eos_token_id=EOS_ID)
    model = Qwen2ForCausalLM(config).to(dtype).eval()
    # Sharpen the output layer so greedy choices are well separated and texts are not uniform noise.
    with torch.no_grad():
        model.lm_head.weight.mul_(8.0)
    return model


class MarkovLM(torch.nn.Module):
    """A language model whose next-token law is a fixed Markov chain: P(next | last token).

    It behaves like a transformers causal LM to the engine (input_ids, a DynamicCache it appends
    to, logits_to_keep, .logits), so the engine's whole path runs, yet the exact distribution of
    any continuation is known in closed form.
    """

    def __init__(self, transition: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("log_transition", transition.double().clamp_min(1e-300).log())
        self.config = None

    @property
    def transition(self) -> torch.Tensor:
        return self.log_transition.exp()

    def forward(
        self,
        input_ids: torch.Tensor,
        past_key_values: DynamicCache | None = None,
        use_cache: bool = True,
        logits_to_keep: int = 0,
        **positions_and_mask: Any,
    ) -> Any:
        # A chain's next-token law is its own token's row: where a token sits and what it may
        # attend to (a tree's position ids and mask) change nothing.
        length = input_ids.shape[1]
        if past_key_values is not None:
            # One dummy key/value per position, so cache lengths and cropping are real.
            dummy = torch.zeros(1, 1, length, 1, dtype=torch.float64)
            past_key_values.update(dummy, dummy, 0)
        logits = self.log_transition[input_ids]  # (1, T, V)
        if logits_to_keep:
            logits = logits[:, -logits_to_keep:]
        return SimpleNamespace(logits=logits)


def random_transition(vocab: int, seed: int, concentration: float = 1.0) -> torch.Tensor:
    """A random row-stochastic matrix (rows ~ Dirichlet(concentration))."""
    generator = torch.Generator().manual_seed(seed)
    gamma_draws = torch._standard_gamma(
        torch.full((vocab, vocab), concentration, dtype=torch.float64), generator=generator
    )
    return gamma_draws / gamma_draws.sum(dim=1, keepdim=True)


def eos_heavy_pair() -> TinyPair:
    """A Markov pair whose draft gives end-of-sequence 0.15 from every state (the target 0.1)."""
    vocab = EOS_ID + 1

    def with_eos(seed: int, eos: float) -> torch.Tensor:
        transition = random_transition(vocab, seed=seed, concentration=0.05)
        transition[:, EOS_ID] = 0.0
        transition = transition / transition.sum(dim=1, keepdim=True) * (1.0 - eos)
        transition[:, EOS_ID] = eos
        return transition

    return TinyPair(
        MarkovLM(with_eos(21, 0.1)),
        MarkovLM(with_eos(21, 0.15)),
        ByteTokenizer(),
        frozenset({EOS_ID}),
    )
