"""Paths a tool may read: under the conversation's dir or a root the operator configured, with
links and '..' resolved before the check (read_image, browser_file_upload)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from .._errors import ToolError


def real_roots(roots: Iterable[Path]) -> list[Path]:
    return [Path(os.path.realpath(r)) for r in roots]


def find_under_roots(
    raw: str, base: Path, roots: list[Path], *, refused: str, kind: Callable[[Path], bool]
) -> Path | None:
    """The real path of `raw` (relative to `base`) if it lies under one of `roots` (real paths)
    and passes `kind` (`Path.exists`, `Path.is_file`); None when it does not. Raises ToolError
    with `refused` (formatted with `raw` and `roots`) when it lies elsewhere, and a ToolError
    for a path the file system refuses (a name too long, a loop of links)."""
    try:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = base / path
        real = Path(os.path.realpath(path))
        if not any(real == root or root in real.parents for root in roots):
            listed = ", ".join(str(r) for r in roots)
            raise ToolError(refused.format(raw=raw, roots=listed))
        return real if kind(real) else None
    except OSError as exc:
        raise ToolError(f"Cannot read {raw}: {exc.strerror or exc}") from None
