"""Listings whose newest lines matter most: all of it inline when it fits, else the header and
the newest lines that fit, with how many were left out and the file that holds everything."""

from __future__ import annotations

from pathlib import Path

from ._output import spill_large_text

# Room kept for the "left out" line.
_NOTE_ROOM = 100


def newest_inline(
    header: str, lines: list[str], outputs_dir: Path, *, label: str, limit: int, noun: str
) -> str:
    """`header` then `lines` (oldest first), whole if it fits in `limit` bytes of UTF-8.

    Otherwise the whole text is saved under `outputs_dir` (see `spill_large_text`) and the
    result keeps the header, says how many of the oldest `noun` were left out, and ends with
    the newest lines that fit and the saved file's path. Raises ToolError when the file
    cannot be written.
    """
    text = "\n".join([header, *lines])
    if len(text.encode()) <= limit:
        return text
    # With nothing allowed inline, spill_large_text saves all of it and returns only the line
    # that names the file.
    saved = spill_large_text(text, outputs_dir, label=label, limit=0, preview=0).strip()
    budget = limit - len(header.encode()) - len(saved.encode()) - _NOTE_ROOM
    kept: list[str] = []
    for line in reversed(lines):
        budget -= len(line.encode()) + 1
        if budget < 0:
            break
        kept.append(line)
    kept.reverse()
    note = (
        f"({len(lines) - len(kept)} older {noun} left out here; all {len(lines)} are in the file)"
    )
    return "\n".join([header, note, *kept, saved])
