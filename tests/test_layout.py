"""The layout shows the architecture: layers import downwards only, and every piece stays small.

``worker/engine`` is the pure algorithm (no Kafka, Faust, RocksDB or wire records),
``topology`` declares what flows and imports nothing of the worker, and no module of either
package imports, through any chain, a module that imports it back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("worker", "topology")
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 450
ENGINE_FORBIDDEN = ("faust", "mode", "aiokafka", "kafka", "rocksdict", "topology", "worker.")
ENGINE_ALLOWED = ("worker.engine", "worker._native")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "native" in path.relative_to(ROOT).parts[1:-1]:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports, wherever in the file (lazy and type-checking imports count)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join(name.split(".")[: -node.level] + [node.module])
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    return out


def _internal(imported: set[str]) -> set[str]:
    return {m for m in imported if m in MODULES}


def test_the_tree_was_found() -> None:
    assert {"worker.engine.match", "worker.stream.worker", "worker.state.index", "worker.cli.main"} <= set(MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_and_functions_are_small(name: str) -> None:
    path = MODULES[name]
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE_LINES, f"{path} has {len(text.splitlines())} lines"
    long: list[str] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (child.end_lineno or child.lineno) - child.lineno + 1  # nested functions count here
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{child.name} ({lines} lines, line {child.lineno})")
            else:
                visit(child)

    visit(ast.parse(text))
    assert not long, f"{path}: functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_engine_does_no_io_and_knows_no_wire_format() -> None:
    offending = {
        name: sorted(
            m for m in _imports(name, path) if m.startswith(ENGINE_FORBIDDEN) and not m.startswith(ENGINE_ALLOWED)
        )
        for name, path in MODULES.items()
        if name.startswith("worker.engine")
    }
    assert {name: found for name, found in offending.items() if found} == {}


def test_topology_imports_nothing_of_the_worker() -> None:
    offending = {
        name: sorted(m for m in _imports(name, path) if m == "worker" or m.startswith("worker."))
        for name, path in MODULES.items()
        if name.startswith("topology")
    }
    assert {name: found for name, found in offending.items() if found} == {}


def test_state_knows_nothing_of_faust_or_the_stream() -> None:
    offending = {
        name: sorted(m for m in _imports(name, path) if m.startswith(("faust", "mode", "worker.stream", "worker.cli")))
        for name, path in MODULES.items()
        if name.startswith("worker.state")
    }
    assert {name: found for name, found in offending.items() if found} == {}


def test_no_import_cycles() -> None:
    graph = {name: _internal(_imports(name, path)) - {name} for name, path in MODULES.items()}
    # A package's __init__ is imported with any of its modules; none of ours holds code.
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for nxt in sorted(graph[name]):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []
