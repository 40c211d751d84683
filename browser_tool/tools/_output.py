"""What a tool call returns to the agent, and where text too long to return inline goes."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._errors import ToolError

__all__ = [
    "ToolImage",
    "ToolOutput",
    "save_text",
    "spill_large_text",
    "spill_lines",
    "spill_top_lines",
]


@dataclass(frozen=True)
class ToolImage:
    """An image in a tool result: its encoded bytes and the file it was saved to."""

    media_type: str
    data: bytes
    path: str


@dataclass(frozen=True)
class ToolOutput:
    """The result of one tool call: text for the model, whether it failed, and images."""

    output: str
    is_error: bool = False
    images: tuple[ToolImage, ...] = ()

    @classmethod
    def ok(cls, text: str, *, images: tuple[ToolImage, ...] = ()) -> ToolOutput:
        """A successful result."""
        return cls(text, False, images)

    @classmethod
    def error(cls, text: str) -> ToolOutput:
        """A failed result; `text` says what failed and why, for the model to read."""
        return cls(text, True)

    def with_notes(self, notes: list[str]) -> ToolOutput:
        """This output with `notes` (things the model should know) appended."""
        if not notes:
            return self
        return ToolOutput("\n\n".join([self.output, *notes]), self.is_error, self.images)

    def to_json(self, include_image_data: bool = True) -> dict[str, Any]:
        """The wire shape: {"output", "is_error", "images": [{"media_type", "data", "path"}]}.

        `data` is base64 text, left out when `include_image_data` is false (for logs).
        """
        images: list[dict[str, str]] = []
        for image in self.images:
            entry = {"media_type": image.media_type}
            if include_image_data:
                entry["data"] = base64.b64encode(image.data).decode("ascii")
            entry["path"] = image.path
            images.append(entry)
        return {"output": self.output, "is_error": self.is_error, "images": images}


_UNSAFE_LABEL = re.compile(r"[^A-Za-z0-9_.-]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def spill_large_text(
    text: str, outputs_dir: Path, *, label: str, limit: int = 1024, preview: int = 512
) -> str:
    """Return `text` if it is at most `limit` bytes as UTF-8; else save it and return a preview.

    The full text goes to `outputs_dir/<label>-<UTC timestamp>-<short sha256>.txt`, written
    atomically (temp file, then rename) with mode 0600; `outputs_dir` is created with mode
    0700 if missing. The returned text starts with the first `preview` characters of `text`,
    followed by a line giving the file's path, its size in bytes and its full SHA-256.
    Raises `ToolError` (never a bare `OSError`) when the file cannot be written.
    """
    original = text
    try:
        encoded = text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (a JS string cut in half) has no UTF-8 form: save it as U+FFFD.
        text = _SURROGATE.sub("\ufffd", text)
        encoded = text.encode()
    if len(encoded) <= limit:
        return original
    path, digest = _save(encoded, outputs_dir, label)
    head = text[:preview]
    separator = "" if head.endswith("\n") else "\n"
    return (
        f"{head}{separator}[output truncated: {len(encoded):,} bytes total; "
        f"full text saved to {path} (sha256 {digest})]"
    )


def save_text(text: str, outputs_dir: Path, *, label: str) -> Path:
    """Save `text` as `spill_large_text` would and return the file's path. Raises ToolError."""
    return _save(_SURROGATE.sub("\ufffd", text).encode(), outputs_dir, label)[0]


def spill_lines(
    header: str,
    lines: list[str],
    outputs_dir: Path,
    *,
    label: str,
    limit: int = 1024,
    noun: str = "lines",
) -> str:
    """`header` and `lines` as one text if it fits in `limit` bytes; else the header, the
    *last* lines that fit (the newest, for a log), and a line saying how many earlier lines
    were left out and which file holds the header and every line.

    For output whose end matters most (logs, events). A single line longer than the room
    left is cut, with a mark. Raises ToolError when the file cannot be written.
    """
    whole = "\n".join([header, *lines])
    if len(whole.encode(errors="replace")) <= limit:
        return whole
    path = save_text(whole, outputs_dir, label=label)
    total = len(whole.encode(errors="replace"))
    # The footer names the file; it is sized for the worst case of the count it carries.
    footer = _footer(len(lines), len(lines), total, path, noun)
    room = limit - len(header.encode(errors="replace")) - len(footer.encode()) - 2
    kept: list[str] = []
    for line in reversed(lines):
        size = len(line.encode(errors="replace")) + 1
        if size > room:
            if not kept and room > 40:  # the newest line alone is too long: show its start
                kept.append(_cut(line, room - 1))
            break
        kept.append(line)
        room -= size
    kept.reverse()
    left_out = len(lines) - len(kept)
    return "\n".join([header, _footer(left_out, len(lines), total, path, noun), *kept])


def spill_top_lines(
    header: str, lines: list[str], outputs_dir: Path, *, label: str, limit: int, noun: str
) -> str:
    """`header` and `lines` as one text if it has at most `limit` characters; else the header,
    the *first* lines that fit (the top of a tree) and a line saying how many later lines were
    left out and which file holds them all. Raises ToolError when the file cannot be written."""
    whole = "\n".join([header, *lines])
    if len(whole) <= limit:
        return whole
    path = save_text(whole, outputs_dir, label=label)
    room = limit - len(header) - 200 - len(str(path))
    kept = 0
    for line in lines:
        room -= len(line) + 1
        if room < 0:
            break
        kept += 1
    note = (
        f"[{len(lines) - kept:,} later {noun} left out here; all {len(lines):,} {noun} "
        f"({len(whole):,} characters) are in {path}]"
    )
    return "\n".join([header, *lines[:kept], note])


def _footer(left_out: int, count: int, size: int, path: Path, noun: str) -> str:
    return (
        f"[{left_out:,} earlier {noun} left out here; all {count:,} {noun} "
        f"({size:,} bytes) are in {path}]"
    )


def _cut(line: str, size: int) -> str:
    mark = " [line cut; the file has all of it]"
    budget = max(0, size - len(mark.encode()))
    head = line.encode(errors="replace")[:budget].decode(errors="ignore")
    return head + mark


def _save(encoded: bytes, outputs_dir: Path, label: str) -> tuple[Path, str]:
    digest = hashlib.sha256(encoded).hexdigest()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    safe_label = _UNSAFE_LABEL.sub("-", label).strip(".-") or "output"
    path = outputs_dir / f"{safe_label}-{stamp}-{digest[:12]}.txt"
    try:
        _write_atomically(path, encoded)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ToolError(f"Could not save the full output to {path}: {reason}") from None
    return path, digest


def _write_atomically(path: Path, data: bytes) -> None:
    directory = path.parent
    try:
        directory.mkdir(mode=0o700, parents=True)
        # mkdir's mode is filtered by the umask; the outputs may hold page secrets.
        directory.chmod(0o700)
    except FileExistsError:
        pass
    # mkstemp creates the file with mode 0600. No fsync: the directory is scratch space that
    # dies with the conversation; the rename is there so a reader never sees half a file.
    fd, temp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):  # the original error is the one worth reporting
            os.unlink(temp_name)
        raise
