"""The console buffer of one session: bounded, numbered, kept across navigations.

Bounded twice: at most `capacity` entries (older ones are dropped and counted), and at most
`MAX_ENTRY_CHARS` characters of text per entry (a page logging a 50 MB string keeps a few KiB
of it and the count of what was cut), so a flood costs a fixed amount of memory.
"""

from __future__ import annotations

import collections
import json
import time
from dataclasses import asdict, dataclass
from typing import Any

MAX_ENTRY_CHARS = 4096
_LEVELS = {"warning": "warn", "verbose": "debug", "assert": "error", "trace": "log"}


@dataclass(frozen=True)
class ConsoleEntry:
    seq: int
    level: str  # log, info, warn, error, debug, exception, dialog, ...
    text: str
    source: str  # "url:line", or "" when Chrome gave none
    time: float  # seconds since the epoch
    # Where it was logged: "page", or another execution context ("service_worker", "worker")
    # with that context's script URL. New fields get defaults, so older callers keep working.
    context: str = "page"
    context_url: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class ConsoleBuffer:
    """The last `capacity` console entries; older ones are dropped and counted."""

    def __init__(self, capacity: int) -> None:
        self._entries: collections.deque[ConsoleEntry] = collections.deque(maxlen=capacity)
        self._next_seq = 1
        self.dropped = 0

    def add(self, level: str, text: str, source: str = "", when: float | None = None) -> None:
        if len(self._entries) == self._entries.maxlen:
            self.dropped += 1
        if len(text) > MAX_ENTRY_CHARS:
            text = f"{text[:MAX_ENTRY_CHARS]}... [{len(text) - MAX_ENTRY_CHARS:,} more characters]"
        self._entries.append(
            ConsoleEntry(self._next_seq, level, text, source, time.time() if when is None else when)
        )
        self._next_seq += 1

    def add_event(self, method: str, p: dict[str, Any]) -> None:
        """Add what a console, exception or log event of the page says."""
        if method == "Runtime.consoleAPICalled":
            frames = (p.get("stackTrace") or {}).get("callFrames") or [{}]
            level = str(p.get("type", "log"))
            self.add(
                _LEVELS.get(level, level),
                format_remote_args(p.get("args", [])),
                source_of(frames[0].get("url"), frames[0].get("lineNumber")),
                p["timestamp"] / 1000 if "timestamp" in p else None,
            )
        elif method == "Runtime.exceptionThrown":
            details = p.get("exceptionDetails", {})
            self.add(
                "exception",
                exception_text(details),
                source_of(details.get("url"), details.get("lineNumber")),
            )
        elif method == "Log.entryAdded":
            entry = p.get("entry", {})
            level = str(entry.get("level", "info"))
            self.add(
                _LEVELS.get(level, level),
                str(entry.get("text", "")),
                source_of(entry.get("url"), entry.get("lineNumber")),
            )

    def recent(self, limit: int) -> list[ConsoleEntry]:
        if limit <= 0:
            return []
        count = len(self._entries)
        return [self._entries[i] for i in range(max(0, count - limit), count)]

    @property
    def total(self) -> int:
        """Entries ever added (cleared and dropped ones included)."""
        return self._next_seq - 1

    def clear(self) -> int:
        count = len(self._entries)
        self._entries.clear()
        self.dropped = 0
        return count

    def __len__(self) -> int:
        return len(self._entries)


def format_remote_args(args: list[dict[str, Any]]) -> str:
    """Render Runtime.consoleAPICalled args as the console would show them."""
    parts = []
    for arg in args:
        if "value" in arg:
            value = arg["value"]
            parts.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        elif "unserializableValue" in arg:
            parts.append(str(arg["unserializableValue"]))
        elif "description" in arg:
            parts.append(str(arg["description"]))
        else:
            parts.append(str(arg.get("type", "")))
    return " ".join(parts)


def source_of(url: str | None, line: int | None) -> str:
    """'url:line' (1-based line), or what is known of it."""
    if not url:
        return ""
    return f"{url}:{line + 1}" if line is not None else url


def exception_text(details: dict[str, Any]) -> str:
    """'ReferenceError: foo is not defined' from Runtime exceptionDetails (first line only)."""
    exception = details.get("exception") or {}
    text = exception.get("description")
    if not text and "value" in exception:
        text = f"Uncaught {exception['value']!r}"
    if not text:
        text = str(details.get("text", "Uncaught exception"))
    return str(text).splitlines()[0] if text else "Uncaught exception"
