"""The machine this process runs on, read in one place: the CPU (model name, family and model
numbers, feature flags), its cores, load and memory, and the C allocator's setting.

Step costs key their cache by the CPU, a trace and the bench say where their speeds were measured,
and the loader picks a dtype and checks memory from the same facts. Linux's /proc says most of
them; elsewhere platform's words name the CPU and what cannot be known is None. Torch-free: the
GPU is torch's to name (specviz.export.machine).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PROC",
    "Machine",
    "allocator_setting",
    "machine_busy_seconds",
    "parse_cpuinfo",
    "parse_loadavg",
    "parse_meminfo",
    "read_machine",
    "vector_flags",
]

PROC = Path("/proc")

# The /proc/cpuinfo flags that decide which matrix kernels run: x86's vector and matrix units,
# Arm's SIMD and SVE.
_VECTOR_FLAG_PREFIXES = ("avx", "amx", "fma", "f16c", "asimd", "sve", "bf16", "i8mm")
# Libraries that replace the C allocator when preloaded (jemalloc, tcmalloc, mimalloc).
_ALLOCATOR_LIBRARIES = ("malloc",)


@dataclass(frozen=True)
class Machine:
    """What the machine is and how busy it is, at the moment it was read."""

    cpu_name: str  # /proc/cpuinfo's "model name"; platform's words where it has none (Arm)
    cpu_family: int | None  # x86's "cpu family" number; None where cpuinfo does not say
    cpu_model_number: int | None  # x86's "model" number within the family
    # Every feature flag as cpuinfo lists it (x86 "flags", Arm "Features"): the step costs' cache
    # key hashes them all; vector_flags picks the ones that choose kernels.
    cpu_flags: tuple[str, ...]
    cores: int | None  # logical CPUs (os.cpu_count)
    # Runnable tasks averaged over 1, 5 and 15 minutes; above `cores`, work waits for a CPU.
    load_average: tuple[float, float, float] | None
    memory_total_bytes: int | None  # MemTotal
    memory_available_bytes: int | None  # MemAvailable: what can be taken without swapping
    # The allocator as the environment sets it: GLIBC_TUNABLES' glibc.malloc.* entries and a
    # preloaded malloc library, space-separated; "" for none. (steady_allocator's mallopt calls,
    # made by a server at start-up, are not environment and not seen here.)
    allocator: str
    system: str  # "Linux x86_64"

    @property
    def native_bf16(self) -> bool:
        """The CPU computes bfloat16 products itself (AVX512-BF16 or AMX), rather than emulating."""
        return not {"avx512_bf16", "amx_bf16"}.isdisjoint(self.cpu_flags)


def read_machine(proc: Path = PROC, environ: Mapping[str, str] | None = None) -> Machine:
    """The machine now, from the cpuinfo, meminfo and loadavg files under *proc* and the allocator
    from *environ* (this process's environment unless given); a file that cannot be read leaves
    its facts None."""
    cpu = parse_cpuinfo(_read(proc / "cpuinfo"))
    memory = parse_meminfo(_read(proc / "meminfo"))
    return Machine(
        cpu_name=cpu.name or platform.processor() or platform.machine(),
        cpu_family=cpu.family,
        cpu_model_number=cpu.model_number,
        cpu_flags=cpu.flags,
        cores=os.cpu_count(),
        load_average=parse_loadavg(_read(proc / "loadavg")),
        memory_total_bytes=memory.get("MemTotal"),
        memory_available_bytes=memory.get("MemAvailable"),
        allocator=allocator_setting(os.environ if environ is None else environ),
        system=f"{platform.system()} {platform.machine()}",
    )


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@dataclass(frozen=True)
class CpuInfo:
    """What /proc/cpuinfo says of the CPU (the first processor's lines: they are all alike)."""

    name: str | None
    family: int | None
    model_number: int | None
    flags: tuple[str, ...]


def parse_cpuinfo(text: str) -> CpuInfo:
    """The CPU's model name, family and model numbers and feature flags in cpuinfo *text*."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = (part.strip() for part in line.partition(":"))
        if value and key not in values:
            values[key] = value
    flags = values.get("flags") or values.get("Features") or ""
    return CpuInfo(
        name=values.get("model name"),
        family=_whole(values.get("cpu family")),
        model_number=_whole(values.get("model")),
        flags=tuple(flags.split()),
    )


def _whole(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def parse_meminfo(text: str) -> dict[str, int]:
    """meminfo *text*'s sizes in bytes by name ("MemTotal", "MemAvailable", ...); the kernel
    writes them in kB (KiB)."""
    sizes: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        number, _, unit = value.strip().partition(" ")
        if number.isdigit():
            sizes[name.strip()] = int(number) * (1024 if unit == "kB" else 1)
    return sizes


def parse_loadavg(text: str) -> tuple[float, float, float] | None:
    """The 1, 5 and 15 minute load averages at the start of loadavg *text*; None if absent."""
    fields = text.split()[:3]
    try:
        one, five, fifteen = (float(field) for field in fields)
    except ValueError:  # fewer than three, or not numbers
        return None
    return one, five, fifteen


def allocator_setting(environ: Mapping[str, str]) -> str:
    """The C allocator's setting in *environ*: glibc's malloc tunables and a preloaded malloc
    library ("glibc.malloc.arena_max=2 libjemalloc.so.2"); "" when it sets neither."""
    tunables = environ.get("GLIBC_TUNABLES", "").split(":")
    preloaded = environ.get("LD_PRELOAD", "").replace(":", " ").split()
    settings = [tunable for tunable in tunables if tunable.startswith("glibc.malloc.")]
    settings += [
        Path(library).name
        for library in preloaded
        if any(word in Path(library).name for word in _ALLOCATOR_LIBRARIES)
    ]
    return " ".join(settings)


def vector_flags(flags: Iterable[str]) -> list[str]:
    """The flags among *flags* that name vector or matrix units (avx2, avx512_bf16, amx_tile...),
    sorted."""
    return sorted({flag for flag in flags if flag.startswith(_VECTOR_FLAG_PREFIXES)})


def machine_busy_seconds(stat: Path = PROC / "stat") -> tuple[float, int] | None:
    """(busy CPU seconds of the whole machine since boot, number of CPUs) from the /proc/stat
    file *stat*, None if unknown."""
    lines = _read(stat).splitlines()
    fields = lines[0].split() if lines else []
    cpus = sum(line.startswith("cpu") and line[3:4].isdigit() for line in lines)
    if len(fields) < 9 or fields[0] != "cpu" or cpus == 0:
        return None
    # user nice system idle iowait irq softirq steal: all but idle and iowait kept a CPU busy.
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[1:9])
    ticks = user + nice + system + irq + softirq + steal
    return ticks / os.sysconf("SC_CLK_TCK"), cpus
