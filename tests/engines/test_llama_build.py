"""Finding and building llama-server: the CPU flags chosen, where a binary is looked for, and the
fallback from a build that does not run here to the next (the compile itself is stubbed: a real
build takes minutes and runs in `engines setup`, not in the tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specviz.engines import llama_build
from specviz.engines.llama_build import (
    LlamaBuildError,
    build_llama_server,
    cached_build,
    cmake_flag_sets,
    cpu_flags,
    find_llama_server,
)
from specviz.engines.llama_server import LlamaServerError

# /proc/cpuinfo of the Intel Xeon VM whose native llama.cpp build died of an illegal
# instruction (it reports AMX), cut to the line that matters.
XEON_AMX = (
    "flags\t\t: fpu sse2 avx avx2 fma f16c bmi2 avx512f avx512_vnni avx512_bf16 amx_tile amx_bf16\n"
)
ZEN2 = "flags\t\t: fpu sse2 avx avx2 fma f16c bmi2\n"
ARM = "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"


def _options(flag_set: list[str]) -> dict[str, str]:
    return dict(option.removeprefix("-D").split("=", 1) for option in flag_set)


def test_the_flags_name_every_vector_unit_the_cpu_reports_and_never_amx() -> None:
    sets = cmake_flag_sets(cpu_flags(XEON_AMX))
    assert [name for name, _ in sets] == ["explicit", "baseline"]
    explicit = _options(sets[0][1])
    assert explicit["GGML_NATIVE"] == "OFF"
    assert explicit["GGML_AVX512"] == explicit["GGML_AVX512_BF16"] == "ON"
    assert explicit["GGML_AVX512_VBMI"] == "OFF"  # not reported
    assert explicit["GGML_AMX_TILE"] == explicit["GGML_AMX_BF16"] == "OFF"
    baseline = _options(sets[1][1])
    assert baseline["GGML_AVX2"] == "ON" and baseline["GGML_AVX512"] == "OFF"
    assert _options(sets[0][1])["LLAMA_CURL"] == "OFF"


def test_native_comes_first_only_when_asked_and_an_avx2_cpu_needs_no_baseline() -> None:
    assert [name for name, _ in cmake_flag_sets(cpu_flags(XEON_AMX), native=True)] == [
        "native",
        "explicit",
        "baseline",
    ]
    assert [name for name, _ in cmake_flag_sets(cpu_flags(ZEN2))] == ["explicit"]
    assert [name for name, _ in cmake_flag_sets(cpu_flags(ARM))] == ["native"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SPECVIZ_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SPECVIZ_LLAMA_SERVER", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    return tmp_path


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_a_given_binary_wins_then_the_environment_then_the_build_then_path(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert find_llama_server() is None
    on_path = _executable(cache / "empty-path" / "llama-server")
    assert find_llama_server() is not None and find_llama_server().origin == "path"
    built = _executable(llama_build.llama_root() / "bin" / "llama-server")
    (llama_build.llama_root() / "build_info.json").write_text(
        json.dumps({"binary": str(built), "origin": "built", "flags": ["-DGGML_NATIVE=OFF"]})
    )
    assert find_llama_server().origin == "built"
    assert cached_build() is not None and cached_build().flags == ("-DGGML_NATIVE=OFF",)
    monkeypatch.setenv("SPECVIZ_LLAMA_SERVER", str(on_path))
    assert find_llama_server().origin == "given"
    given = _executable(cache / "mine" / "llama-server")
    assert find_llama_server(str(given)).binary == str(given)
    with pytest.raises(LlamaBuildError) as raised:
        find_llama_server(str(cache / "nowhere"))
    assert raised.value.key == "error.llama.not_a_binary"


def test_a_build_that_dies_of_an_illegal_instruction_falls_back_to_the_next_flags(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tried: list[str] = []
    monkeypatch.setattr(llama_build.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(llama_build, "cpu_flags", lambda: cpu_flags(XEON_AMX))
    monkeypatch.setattr(llama_build, "fetch_source", lambda work, progress: work)

    def compile_(tree: Path, build: Path, options: list[str], *rest: object) -> None:
        tried.append(build.name)
        _executable(build / "bin" / "llama-server")

    def check(binary: Path) -> None:
        if binary.parent.parent.name == "build-native":
            raise LlamaServerError("error.llama.illegal_instruction", code=-4, log="")

    monkeypatch.setattr(llama_build, "_build", compile_)
    info = build_llama_server(lambda *_: None, native=True, check=check)
    assert tried == ["build-native", "build-explicit"]
    assert info.flag_set == "explicit" and info.origin == "built"
    assert "-DGGML_AMX_TILE=OFF" in info.flags
    assert Path(info.binary).is_file()
    assert find_llama_server() == info  # cached with its build info


def test_when_no_build_runs_the_error_lists_every_try(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llama_build.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(llama_build, "cpu_flags", lambda: cpu_flags(XEON_AMX))
    monkeypatch.setattr(llama_build, "fetch_source", lambda work, progress: work)

    def compile_(*args: object) -> None:
        raise LlamaBuildError("error.llama.build", log="no compiler")

    monkeypatch.setattr(llama_build, "_build", compile_)
    with pytest.raises(LlamaBuildError) as raised:
        build_llama_server(lambda *_: None)
    assert raised.value.key == "error.llama.all_failed"
    assert "explicit:" in str(raised.value) and "baseline:" in str(raised.value)
    assert cached_build() is None


def test_without_cmake_the_user_is_told_what_to_install(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llama_build.shutil, "which", lambda name: None)
    with pytest.raises(LlamaBuildError) as raised:
        build_llama_server(lambda *_: None)
    assert raised.value.key == "error.llama.no_cmake"
