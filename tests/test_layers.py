"""The package's layers import strictly downward, and nothing imports in a cycle.

Read from the source with ast (nothing is imported), so a lazy import inside a function counts
as much as one at the top of a module. The order is docs/design.md's diagram.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "specviz"

# Lower imports nothing higher; equal ranks may import each other but not both ways (below).
# text (the user-facing catalogue) sits under everything: any layer may use it.
LAYER_RANK: dict[str, int] = {
    "text": 0,
    "core": 1,
    "drafters": 2,
    "models": 2,
    "measure": 3,
    "production": 3,
    "engines": 3,  # serving engines over HTTP (watch): text and plain records only
    "views": 4,
    "labs": 5,
    "export": 5,
    "app": 6,
    "cli": 6,
    "__main__": 7,
}


def module_name(path: Path) -> str:
    """specviz/labs/speedup/charts.py -> specviz.labs.speedup.charts (a package: its folder)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The specviz modules path imports, anywhere in it (`from a import b` counts a.b if a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; write the absolute name"
            base = node.module or ""
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in known else base)
    return {name for name in found if name == "specviz" or name.startswith("specviz.")}


def layer_of(module: str) -> str:
    """The layer a dotted module name sits in: its first component under specviz."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def import_graph() -> dict[str, set[str]]:
    """Module -> the specviz modules it imports."""
    modules = package_modules()
    known = set(modules)
    return {name: imported_modules(path, known) - {name} for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of graph as a path that returns to its start, or None if there is none."""
    state: dict[str, str] = {}  # "open" while on the stack, "done" after
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return [*stack[stack.index(target) :], target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def test_every_layer_is_ranked() -> None:
    layers = {layer_of(name) for name in package_modules()} - {"__init__"}
    assert layers <= set(LAYER_RANK), f"rank the new layer(s) {layers - set(LAYER_RANK)}"


def test_layers_import_only_downward() -> None:
    upward = [
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        for target in sorted(targets)
        if layer_of(module) in LAYER_RANK
        and layer_of(target) in LAYER_RANK
        and LAYER_RANK[layer_of(target)] > LAYER_RANK[layer_of(module)]
    ]
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_no_module_imports_in_a_cycle() -> None:
    assert find_cycle(import_graph()) is None, " -> ".join(find_cycle(import_graph()) or [])


def test_no_two_layers_import_each_other() -> None:
    layer_graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        layer_graph.setdefault(layer_of(module), set()).update(
            layer_of(target) for target in targets if layer_of(target) != layer_of(module)
        )
    assert find_cycle(layer_graph) is None, " -> ".join(find_cycle(layer_graph) or [])


@pytest.mark.parametrize(
    ("graph", "has_cycle"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, False),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, True),
        ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, False),
    ],
)
def test_the_cycle_finder_finds_cycles_and_only_cycles(
    graph: dict[str, set[str]], has_cycle: bool
) -> None:
    assert (find_cycle(graph) is not None) is has_cycle


def test_the_scan_sees_the_engines_imports() -> None:
    # The negative control: the scan reads real imports, so an empty graph cannot pass the checks.
    engine = import_graph()["specviz.core.engine"]
    assert "specviz.core.sampling" in engine and "specviz.core.proposal" in engine


# Views draw records, text words them and engines talk HTTP: none needs torch or transformers,
# and importing them must not load either (the UI never reaches into torch), nor must the events
# they draw. The records views import from other layers (measure.race_records) are checked
# through the views.
TORCH_FREE_LAYERS = ("views", "text", "engines")
TORCH_FREE_MODULES = ("specviz.core.events", "specviz.core.machine")
HEAVY = ("torch", "transformers")

_IMPORT_EACH = """
import importlib, json, sys
heavy = {heavy!r}
found = {{}}
for name in {modules!r}:
    before = {{h for h in heavy if h in sys.modules}}
    importlib.import_module(name)
    found[name] = sorted({{h for h in heavy if h in sys.modules}} - before)
print(json.dumps(found))
"""


def heavy_imports(modules: list[str]) -> dict[str, list[str]]:
    """Import modules in order in one fresh interpreter; for each, the HEAVY packages it loaded
    that were not loaded before it (so an offender is named, the modules after it show none)."""
    script = _IMPORT_EACH.format(heavy=HEAVY, modules=modules)
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=PACKAGE.parent, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, list[str]] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_views_text_and_events_load_no_torch() -> None:
    modules = sorted(
        name for name in package_modules() if layer_of(name) in TORCH_FREE_LAYERS
    ) + list(TORCH_FREE_MODULES)
    loaded = {name: heavy for name, heavy in heavy_imports(modules).items() if heavy}
    assert not loaded, "\n".join(f"{name} loads {', '.join(h)}" for name, h in loaded.items())


def test_the_torch_check_sees_torch() -> None:
    # The negative control: a module that does import torch is reported.
    assert heavy_imports(["specviz.core.sampling"]) == {"specviz.core.sampling": ["torch"]}
