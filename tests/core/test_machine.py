"""The machine's facts (specviz.core.machine), read from hand-written /proc files: nothing here
depends on the machine the tests run on, but for the platform's words where a file is missing."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from specviz.core.machine import (
    Machine,
    allocator_setting,
    parse_cpuinfo,
    parse_loadavg,
    parse_meminfo,
    read_machine,
    vector_flags,
)

X86_FLAGS = "fpu sse2 avx f16c fma avx2 avx512f avx512bw avx512_bf16 amx_tile amx_bf16"
# Two processors of an x86 machine, as the kernel writes them (tabs before the colons).
X86_CPUINFO = "".join(
    f"""processor\t: {n}
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
model name\t: Intel(R) Xeon(R) Platinum 8480+
stepping\t: 8
flags\t\t: {X86_FLAGS}
bugs\t\t: spectre_v1
power management:

"""
    for n in range(2)
)
# An Arm machine's: no model name, its flags under "Features".
ARM_CPUINFO = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes sha2 crc32 atomics fphp asimdhp sve i8mm bf16
CPU implementer\t: 0x41
CPU part\t: 0xd40

"""
MEMINFO = """MemTotal:       24683784 kB
MemFree:        14959916 kB
MemAvailable:   22696832 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
"""
LOADAVG = "1.73 1.08 0.20 5/148 25386\n"


def proc_folder(tmp_path: Path, cpuinfo: str = X86_CPUINFO) -> Path:
    """A folder holding the three /proc files read_machine reads."""
    for name, text in (("cpuinfo", cpuinfo), ("meminfo", MEMINFO), ("loadavg", LOADAVG)):
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_machine_is_read_from_the_proc_files(tmp_path: Path) -> None:
    environ = {"GLIBC_TUNABLES": "glibc.malloc.arena_max=2", "PATH": "/bin"}
    machine = read_machine(proc_folder(tmp_path), environ)
    assert machine == Machine(
        cpu_name="Intel(R) Xeon(R) Platinum 8480+",
        cpu_family=6,
        cpu_model_number=143,
        cpu_flags=tuple(X86_FLAGS.split()),
        cores=os.cpu_count(),
        load_average=(1.73, 1.08, 0.20),
        memory_total_bytes=24683784 * 1024,
        memory_available_bytes=22696832 * 1024,
        allocator="glibc.malloc.arena_max=2",
        system=f"{platform.system()} {platform.machine()}",
    )
    assert machine.native_bf16
    assert vector_flags(machine.cpu_flags) == [
        "amx_bf16", "amx_tile", "avx", "avx2", "avx512_bf16", "avx512bw", "avx512f", "f16c", "fma"
    ]  # fmt: skip


def test_an_arm_cpu_has_features_but_no_model_name() -> None:
    cpu = parse_cpuinfo(ARM_CPUINFO)
    assert cpu.name is None and cpu.family is None and cpu.model_number is None
    assert "sve" in cpu.flags and vector_flags(cpu.flags) == [
        "asimd",
        "asimdhp",
        "bf16",
        "i8mm",
        "sve",
    ]


def test_without_the_proc_files_nothing_is_known_but_the_platforms_words(tmp_path: Path) -> None:
    machine = read_machine(tmp_path / "missing", environ={})
    assert machine.cpu_name == (platform.processor() or platform.machine())
    assert machine.cpu_flags == () and not machine.native_bf16
    assert (machine.cpu_family, machine.cpu_model_number) == (None, None)
    assert machine.load_average is None
    assert (machine.memory_total_bytes, machine.memory_available_bytes) == (None, None)
    assert machine.allocator == ""


def test_a_cpu_without_bf16_units_emulates_bfloat16(tmp_path: Path) -> None:
    avx2_only = X86_CPUINFO.replace(X86_FLAGS, "fpu sse2 avx fma avx2")
    assert not read_machine(proc_folder(tmp_path, avx2_only), environ={}).native_bf16


def test_meminfo_sizes_are_in_bytes() -> None:
    sizes = parse_meminfo(MEMINFO)
    assert sizes["MemAvailable"] == 22696832 * 1024
    assert sizes["HugePages_Total"] == 0  # a count, not a size: no unit
    assert parse_meminfo("") == {} and parse_meminfo("MemTotal: lots\n") == {}


@pytest.mark.parametrize("text", ["", "1.0 2.0\n", "a b c 1/2 3\n"])
def test_a_short_or_foreign_loadavg_is_unknown(text: str) -> None:
    assert parse_loadavg(text) is None


@pytest.mark.parametrize(
    ("environ", "setting"),
    [
        ({}, ""),
        ({"GLIBC_TUNABLES": "glibc.rtld.nns=2"}, ""),
        (
            {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=1048576:glibc.rtld.nns=2"},
            "glibc.malloc.mmap_threshold=1048576",
        ),
        ({"LD_PRELOAD": "/usr/lib/libjemalloc.so.2"}, "libjemalloc.so.2"),
        (
            {"LD_PRELOAD": "/lib/libfoo.so /lib/libtcmalloc_minimal.so.4"},
            "libtcmalloc_minimal.so.4",
        ),
        (
            {"GLIBC_TUNABLES": "glibc.malloc.arena_max=2", "LD_PRELOAD": "libmimalloc.so"},
            "glibc.malloc.arena_max=2 libmimalloc.so",
        ),
    ],
)
def test_the_allocator_setting_is_what_the_environment_sets(
    environ: dict[str, str], setting: str
) -> None:
    assert allocator_setting(environ) == setting
