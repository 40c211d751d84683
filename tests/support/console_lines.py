"""Reading `browser_recent_console_logs` output back, for tests: one entry per line."""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE = re.compile(
    r"^#(?P<seq>\d+) (?P<time>\d\d:\d\d:\d\d\.\d{3}) (?P<level>\S+) +"
    r"(?:\[(?P<context>[a-z_]+)(?: (?P<context_url>\S+))?\] )?"
    r"(?P<text>.*?)(?: \((?P<source>[^()]*)\))?$"
)


@dataclass(frozen=True)
class Line:
    seq: int
    level: str
    text: str
    source: str
    context: str


def console_lines(output: str) -> list[Line]:
    """The entries shown inline (header and footer lines skipped)."""
    found = []
    for raw in output.splitlines():
        match = LINE.match(raw)
        if match:
            found.append(
                Line(
                    int(match["seq"]),
                    match["level"],
                    match["text"],
                    match["source"] or "",
                    match["context"] or "page",
                )
            )
    return found
