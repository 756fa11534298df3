"""The package's layers: arktos.core, then arktos.numpy, then arktos.pandas, with no import cycle.

The import graph comes from each module's source (ast): its module-level
imports, without the ``if TYPE_CHECKING:`` blocks, which never run. It must
be acyclic, a layer may import only the layers below it (typing-only imports
included), no function imports an arktos module, and each module imports
alone in a fresh interpreter (the packages above it stubbed, so that only
its own imports run) in dependency order.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "arktos"
LAYERS = ["arktos.core", "arktos.numpy", "arktos.pandas"]


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> list[str]:
    """The arktos modules an ``from ... import ...`` names: the module, or
    its submodules where the names are submodules."""
    if node.level:
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        base = package.split(".")
        if node.level > 1:
            base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target != "arktos" and not target.startswith("arktos."):
        return []
    named = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
    return named or [target]


def _imports(module: str, path: Path) -> tuple[set[str], set[str], list[int]]:
    """(run-time imports, typing-only imports, lines of imports inside functions)."""
    tree = ast.parse(path.read_text(), str(path))
    runtime: set[str] = set()
    typing: set[str] = set()
    local: list[int] = []

    def visit(body: list[ast.stmt], into: set[str]) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom):
                into.update(_resolve(module, path, node))
            elif isinstance(node, ast.Import):
                into.update(a.name for a in node.names if a.name == "arktos" or a.name.startswith("arktos."))
            elif isinstance(node, ast.If):
                visit(node.body, typing if _is_type_checking(node) else into)
                visit(node.orelse, into)
            elif isinstance(node, ast.Try):
                for part in (node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                    visit(part, into)

    visit(tree.body, runtime)
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("arktos")):
                    local.append(node.lineno)
                elif isinstance(node, ast.Import) and any(a.name.startswith("arktos") for a in node.names):
                    local.append(node.lineno)
    runtime.discard(module)
    return runtime, typing - runtime, local


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _layer(module: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        if module == layer or module.startswith(layer + "."):
            return i
    return None


def test_every_layer_exists() -> None:
    assert set(LAYERS) <= MODULES.keys()
    assert all(_layer(m) is not None for m in MODULES if m != "arktos"), "modules outside the layers"


def test_import_graph_is_acyclic() -> None:
    try:
        order = list(TopologicalSorter({m: deps for m, (deps, _, _) in GRAPH.items()}).static_order())
    except CycleError as err:
        pytest.fail(f"import cycle: {' -> '.join(err.args[1])}")
    assert set(order) >= MODULES.keys()


def test_lower_layers_never_import_higher_ones() -> None:
    wrong = []
    for module, (runtime, typing, _) in GRAPH.items():
        mine = _layer(module)
        if mine is None:
            continue  # the top-level arktos re-exports every layer
        for dep in runtime | typing:
            theirs = _layer(dep)
            if theirs is None or theirs > mine:
                wrong.append(f"{module} imports {dep}")
    assert not wrong


def test_no_function_imports_an_arktos_module() -> None:
    local = {m: lines for m, (_, _, lines) in GRAPH.items() if lines}
    assert not local, f"function-local imports (lines): {local}"


def test_every_module_says_what_it_is_for() -> None:
    for module, path in MODULES.items():
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc, f"{module} has no docstring"
        first = doc.split("\n\n")[0]
        assert first.rstrip().endswith("."), f"{module}: the docstring opens with one sentence"
        if module in LAYERS[:2]:
            assert "never import" in first, f"{module}: say what it must never import"


# Import `module` with the packages above it as bare stubs, so that only the
# module's own imports run; then report which arktos modules came in.
_ALONE = """
import importlib, sys, types
from pathlib import Path
src = Path(sys.argv[1])
for pkg in ("arktos", "arktos.core", "arktos.numpy", "arktos.pandas"):
    stub = types.ModuleType(pkg)
    stub.__path__ = [str(src.joinpath(*pkg.split(".")))]
    sys.modules[pkg] = stub
importlib.import_module(sys.argv[2])
print(" ".join(sorted(m for m in sys.modules if m.startswith("arktos."))))
"""


def _in_order() -> list[str]:
    graph = {m: deps for m, (deps, _, _) in GRAPH.items() if _layer(m) is not None and m not in LAYERS}
    return [m for m in TopologicalSorter(graph).static_order() if m in graph]


@pytest.mark.parametrize("module", _in_order())
def test_module_imports_alone(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", _ALONE, str(SRC), module], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = [m for m in done.stdout.split() if m not in LAYERS]  # (the stubs)
    mine = _layer(module)
    assert mine is not None
    above = [m for m in loaded if (_layer(m) or 0) > mine]
    assert not above, f"{module} loaded {above}"


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_package_imports_alone(layer: str) -> None:
    """`import arktos.core` loads no numpy or pandas layer (arktos itself stubbed)."""
    code = _ALONE.replace('("arktos", "arktos.core", "arktos.numpy", "arktos.pandas")', '("arktos",)')
    done = subprocess.run([sys.executable, "-c", code, str(SRC), layer], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    mine = LAYERS.index(layer)
    assert not [m for m in done.stdout.split() if (_layer(m) or 0) > mine]
