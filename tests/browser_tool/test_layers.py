"""The layer map in browser_tool's docstring holds for every import in the package.

Read from the source with `ast`, so imports under `if TYPE_CHECKING:` and inside functions
count like any other. Rules: every module belongs to a layer of the map; an import points to
its own layer or one below it; another subpackage is reached only through its `__init__`; no
module takes a `_private` name from another; and the module graph has no circle.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import browser_tool

PACKAGE = Path(browser_tool.__file__).parent
NAME = "browser_tool"


def layer_map() -> list[tuple[str, list[str]]]:
    """(layer, [module or 'subpackage/']) from the docstring, top layer first."""
    doc = browser_tool.__doc__ or ""
    block = doc.split("Layers, top to bottom")[1].split("\n\n")[1]
    rows: list[list[str]] = []
    for line in block.splitlines():
        if line.startswith(" " * 5) and rows:  # a long row's continuation, indented further
            rows[-1] += line.split()
        elif line.strip():
            rows.append(line.split())
    return [(row[0], row[1:]) for row in rows]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def layer_of(module: str) -> int:
    """The index of `module`'s layer in the map (0 = top); the package itself sits above all."""
    if module in (NAME, f"{NAME}.__main__"):
        return -1
    relative = module.removeprefix(NAME + ".")
    for index, (_, members) in enumerate(layer_map()):
        for member in members:
            if member.endswith("/"):
                if relative == member[:-1] or relative.startswith(member[:-1] + "."):
                    return index
            elif relative == member:
                return index
    raise AssertionError(f"{module} is in no layer of the map in browser_tool/__init__.py")


def imports_of(module: str) -> list[tuple[str, list[str], int]]:
    """(imported module, names, line) for every import of a browser_tool module in `module`."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, list[str], int]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names = [alias.name for alias in node.names]
            # `from . import x` and `from .pkg import mod` name modules, not attributes.
            for name in names:
                if f"{target}.{name}" in MODULES:
                    found.append((f"{target}.{name}", [], node.lineno))
            if target in MODULES:
                found.append((target, names, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
    return [(target, names, line) for target, names, line in found if target in MODULES]


def subpackage_of(module: str) -> str | None:
    """`browser_tool.cdp` for `browser_tool.cdp._connection`; None for top-level modules."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or MODULES[module].name == "__init__.py" else None


def test_the_map_names_every_module_once() -> None:
    for module in MODULES:
        layer_of(module)
    members = [member for _, row in layer_map() for member in row]
    assert len(members) == len(set(members))
    for member in members:
        target = PACKAGE / member if member.endswith("/") else PACKAGE / f"{member}.py"
        assert target.exists(), f"the map names {member}, which does not exist"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_map(module: str) -> None:
    here = layer_of(module)
    for target, _, line in imports_of(module):
        there = layer_of(target)
        assert there >= here, (
            f"{module}:{line} imports {target}, a layer above it "
            f"({layer_map()[there][0]} is above {layer_map()[here][0]})"
        )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_other_subpackages_are_reached_through_their_init(module: str) -> None:
    mine = subpackage_of(module)
    for target, _, line in imports_of(module):
        theirs = subpackage_of(target)
        if theirs is not None and theirs != mine:
            assert target == theirs, f"{module}:{line} reaches into {target}; import {theirs}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_name_is_taken_from_another_module(module: str) -> None:
    for target, names, line in imports_of(module):
        private = [name for name in names if re.match(r"_[^_]", name)]
        assert not private, f"{module}:{line} takes {private} from {target}"


def test_no_import_circle() -> None:
    graph = {module: {target for target, _, _ in imports_of(module)} for module in MODULES}
    # A package's __init__ re-exports its modules; importing the package runs it, so the edges
    # from a module to its own package's __init__ are real edges too.
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = "open"
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                circle = [*path[path.index(target) :], target]
                raise AssertionError("import circle: " + " -> ".join(circle))
            if target not in state:
                visit(target)
        path.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)


# The line count is a guide, not a gate: a module cuts where a concept ends, not at a count.
# Over GUIDE_LINES it is named in the test report (a prompt to look for a seam); over MAX_LINES
# the test fails (nothing that long is one concept).
GUIDE_LINES = 300
MAX_LINES = 500


def module_lengths() -> dict[str, int]:
    return {module_name(path): len(path.read_text().splitlines()) for path in PACKAGE.rglob("*.py")}


def test_the_top_level_stays_small() -> None:
    top = [path for path in PACKAGE.glob("*.py") if path.name not in ("__init__.py", "__main__.py")]
    assert len(top) <= 15, sorted(path.name for path in top)


def test_modules_stay_short(record_property: Callable[[str, object], None]) -> None:
    lengths = module_lengths()
    long = {module: n for module, n in sorted(lengths.items()) if n > GUIDE_LINES}
    if long:
        # Not a warning: the suite runs with filterwarnings=error. Shown with -rP and in the
        # junit report; a prompt to look for a concept to cut at, not a failure.
        print(f"modules over {GUIDE_LINES} lines (a guide): {long}")
        record_property("modules_over_guide", long)
    too_long = {module: n for module, n in long.items() if n > MAX_LINES}
    assert not too_long, f"modules over {MAX_LINES} lines: {too_long}"
