"""The public surface of each package is its `__init__.__all__`, and nothing else leaks out:
every exported name exists, and every public attribute is exported (private `_modules`
aside). Packages use each other only through these names."""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path

import pytest

PACKAGES = ["browser_tool", "chrome_launcher", "orphan_reaper", "fixtures_site"]
# The layers of browser_tool are packages too: each has a public surface of its own.
SUBPACKAGES = [
    "browser_tool.browser",
    "browser_tool.cdp",
    "browser_tool.cli",
    "browser_tool.conversations",
    "browser_tool.server",
    "browser_tool.sources",
    "browser_tool.tools",
]
ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize("name", PACKAGES + SUBPACKAGES)
def test_all_is_the_whole_public_surface(name: str) -> None:
    package = importlib.import_module(name)
    exported = set(package.__all__)
    assert len(exported) == len(package.__all__), "duplicates in __all__"
    for item in exported:
        assert hasattr(package, item), item
    public = {
        attr
        for attr, value in vars(package).items()
        if not attr.startswith("_")
        and not isinstance(value, types.ModuleType)
        and attr != "annotations"
    }
    assert public == exported


@pytest.mark.parametrize("name", PACKAGES)
def test_packages_reach_each_other_only_through_init(name: str) -> None:
    pattern = re.compile(r"^\s*(?:from|import)\s+(\w+)\._\w+", re.M)
    for path in (ROOT / name).rglob("*.py"):
        for other in pattern.findall(path.read_text()):
            assert other == name, f"{path.name} reaches into {other}'s private modules"


def test_python_cdp_old_is_imported_in_exactly_one_module() -> None:
    importers = [
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if re.search(r"^\s*(from|import)\s+pycdp_old", path.read_text(), re.M)
    ]
    assert importers == ["browser_tool/cdp/_protocol.py"]


def test_every_package_is_installed() -> None:
    """pyproject's package list names every package in the tree: an editable install finds a
    missing one anyway, a wheel (`pip install .`) would ship without it."""
    text = (ROOT / "pyproject.toml").read_text()
    listed = set(
        re.findall(r'^\s+"([\w.]+)",$', text.split("packages = [", 1)[1].split("]")[0], re.M)
    )
    in_tree = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in PACKAGES
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert in_tree <= listed
    # The rest are data dirs shipped as packages (the fixture site's pages).
    assert all((ROOT / name.replace(".", "/")).is_dir() for name in listed - in_tree)
