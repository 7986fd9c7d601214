"""The import graph of the packages under a source folder, and its cycles (tools/ci/test/python-sdk.spec.ts).

Usage: ``python3 import_cycles.py <src>``; prints JSON ``{"modules": [...],
"edges": [[from, to], ...], "cycles": [[module, ...], ...]}``. Only imports
between modules under ``<src>`` count, wherever they are written (in a
function, under ``if TYPE_CHECKING:``): the strictest reading.

An edge is what running the import runs first: ``from .x import y`` runs
module ``x`` (or ``x.y`` when that is a module), and before it every package
``__init__`` on its way that the importing module's own ancestors do not
already cover (``from ..skills.notices import N`` in ``pkg.context`` runs
``pkg/skills/__init__.py``; a module never waits on its own parent package,
which Python has begun before it, unless it names that package itself). A cycle is a strongly connected set of more
than one module.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path


def modules_under(src: Path) -> dict[str, Path]:
    """Every module under ``src`` by dotted name (a package by its ``__init__.py``)."""
    found: dict[str, Path] = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(part.isidentifier() for part in parts):
            found[".".join(parts)] = path
    return found


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _imported(tree: ast.AST, module: str, is_package: bool, known: dict[str, Path]) -> set[str]:
    """The modules under src that the module's imports name (without the packages on the way)."""
    package = module if is_package else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".") if package else []
                if node.level - 1 > len(base_parts):
                    continue  # beyond the top package: not ours
                base = ".".join(base_parts[: len(base_parts) - (node.level - 1)])
                source = ".".join(part for part in (base, node.module or "") if part)
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}" if source else alias.name
                targets.add(submodule if submodule in known else source)
    resolved: set[str] = set()
    for target in targets:
        # `import a.b.c` where c is a name in a.b: the nearest module that exists.
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target:
            resolved.add(target)
    return resolved


def import_graph(src: Path) -> tuple[list[str], set[tuple[str, str]]]:
    known = modules_under(src)
    edges: set[tuple[str, str]] = set()
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        own = set(_ancestors(module)) | {module}
        for target in _imported(tree, module, path.name == "__init__.py", known):
            if target != module:
                edges.add((module, target))  # named: even an ancestor, whose names may not be defined yet
            edges.update((module, runs) for runs in _ancestors(target) if runs in known and runs not in own)
    return sorted(known), edges


def cycles(modules: list[str], edges: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan's algorithm)."""
    after: dict[str, list[str]] = {m: sorted(t for f, t in edges if f == m) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in after[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return sorted(found)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not Path(argv[1]).is_dir():
        print("usage: import_cycles.py <src folder>", file=sys.stderr)
        return 2
    modules, edges = import_graph(Path(argv[1]))
    print(json.dumps({"modules": modules, "edges": sorted(edges), "cycles": cycles(modules, edges)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
