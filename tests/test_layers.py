"""The house's layers: every import of ``src/neardup`` goes down (or across) the map in
CONTRIBUTING.md, and no two parts import each other, however indirectly.

A part is a top-level module or package of ``neardup`` (``sketch``, ``io``, ``params``, ...);
imports inside a part are free. Every import counts: at the top of a module, inside a function
(deferred for speed) or under ``TYPE_CHECKING``, absolute or relative. The registry of kinds
names implementations as ``"module:attribute"`` strings, imported on first use: each must name
a real attribute.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "neardup"
ENTRY_POINTS = frozenset({"__init__", "__main__"})
"""The public face (``import neardup``) and ``python -m neardup``: above every layer."""


def _layers() -> dict[str, int]:
    """Each part's layer, from the ``layers`` block of CONTRIBUTING.md (first line: the top)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block is not None, "CONTRIBUTING.md has no ```layers block"
    rows = [line.split() for line in block.group(1).splitlines() if line.strip()]
    return {part: len(rows) - i for i, row in enumerate(rows) for part in row}


def _part(module: str) -> str:
    """``neardup.sketch.oph`` -> ``sketch``; ``neardup`` itself -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports() -> dict[str, set[tuple[str, str]]]:
    """For each part, the parts it imports, with the file that does."""
    found: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        source = _part(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [_absolute(node, module, is_package=path.name == "__init__.py")]
            for name in names:
                if name.split(".")[0] == "neardup" and _part(name) != source:
                    found[source].add((_part(name), str(path.relative_to(ROOT))))
    return found


def _absolute(node: ast.ImportFrom, module: str, *, is_package: bool) -> str:
    """The module a ``from ... import`` reads, relative ones (``from ..io import x``) resolved."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _registry_names() -> set[str]:
    """Every ``"neardup.module:attribute"`` string in the package's source."""
    pattern = re.compile(r"[\"'](neardup(?:\.\w+)+:\w+)[\"']")
    return {m for p in PACKAGE.rglob("*.py") for m in pattern.findall(p.read_text("utf-8"))}


def _upward(imports: dict[str, set[tuple[str, str]]], layers: dict[str, int]) -> list[str]:
    """Every import from a part to a part of a higher layer, as a line saying where."""
    return sorted(
        f"{where}: {source} (layer {layers[source]}) imports {target} (layer {layers[target]})"
        for source, targets in imports.items()
        if source not in ENTRY_POINTS  # they hand on names from every layer, or start the CLI
        for target, where in targets
        if layers[target] > layers[source]
    )


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every loop of parts importing each other (each found from each of its parts)."""
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                cycles.append([*path[path.index(nxt) :], nxt])
            else:
                visit(nxt, [*path, nxt])

    for start in sorted(graph):
        visit(start, [start])
    return cycles


def test_every_part_has_a_layer() -> None:
    parts = {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" or p.is_dir()}
    parts -= {*ENTRY_POINTS, "__pycache__"}  # data files (py.typed, the schema) are no parts
    assert parts <= set(_layers()), sorted(parts - set(_layers()))


def test_imports_go_down_the_layers() -> None:
    upward = _upward(_imports(), _layers())
    assert not upward, "\n".join(upward)


def test_no_two_parts_import_each_other() -> None:
    graph = {source: {t for t, _ in targets} for source, targets in _imports().items()}
    for entry in ENTRY_POINTS:
        graph.pop(entry, None)
    cycles = _cycles(graph)
    assert not cycles, cycles[:5]


def test_every_registry_name_is_a_real_attribute() -> None:
    names = _registry_names()
    assert len(names) > 20  # the kinds' makers, estimators and families at least
    missing = []
    for name in sorted(names):
        module, attribute = name.split(":")
        if not hasattr(importlib.import_module(module), attribute):
            missing.append(name)
    assert not missing, missing


def test_relative_imports_are_resolved() -> None:
    tree = ast.parse("from ..io.spill import PairRuns\nfrom . import kernels\nfrom .x import y")
    nodes = [n for n in tree.body if isinstance(n, ast.ImportFrom)]
    resolved = [_absolute(n, "neardup.sketch.oph", is_package=False) for n in nodes]
    assert resolved == ["neardup.io.spill", "neardup.sketch", "neardup.sketch.x"]
    in_package = _absolute(nodes[1], "neardup.sketch", is_package=True)
    assert in_package == "neardup.sketch"


def test_the_checks_catch_an_upward_import_and_a_loop() -> None:
    layers = _layers()
    assert layers["cli"] > layers["pipeline"] > layers["sketch"] > layers["pairs"]
    made_up = {"sketch": {("pipeline", "src/neardup/sketch/x.py")}}
    assert _upward(made_up, layers) == [
        f"src/neardup/sketch/x.py: sketch (layer {layers['sketch']}) imports pipeline "
        f"(layer {layers['pipeline']})"
    ]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})[0] == ["a", "b", "c", "a"]
