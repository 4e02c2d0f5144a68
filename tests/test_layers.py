"""The house's layers: every import of ``src/neardup`` goes down (or across) the map in
CONTRIBUTING.md, and no two parts import each other, however indirectly.

A part is a top-level module or package of ``neardup`` (``sketch``, ``io``, ``params``, ...);
imports inside a part are free. Every import counts: at the top of a module, inside a function
(deferred for speed) or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
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
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] == "neardup" and _part(name) != source:
                    found[source].add((_part(name), str(path.relative_to(ROOT))))
    return found


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


def test_the_checks_catch_an_upward_import_and_a_loop() -> None:
    layers = _layers()
    assert layers["cli"] > layers["pipeline"] > layers["sketch"] > layers["pairs"]
    made_up = {"sketch": {("pipeline", "src/neardup/sketch/x.py")}}
    assert _upward(made_up, layers) == [
        f"src/neardup/sketch/x.py: sketch (layer {layers['sketch']}) imports pipeline "
        f"(layer {layers['pipeline']})"
    ]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})[0] == ["a", "b", "c", "a"]
