"""The console buffer of one session: bounded, numbered, kept across navigations."""

from __future__ import annotations

import collections
import time
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class ConsoleEntry:
    seq: int
    level: str  # log, info, warn, error, debug, exception, dialog, ...
    text: str
    source: str  # "url:line", or "" when Chrome gave none
    time: float  # seconds since the epoch

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
        self._entries.append(
            ConsoleEntry(self._next_seq, level, text, source, time.time() if when is None else when)
        )
        self._next_seq += 1

    def recent(self, limit: int) -> list[ConsoleEntry]:
        return list(self._entries)[-limit:] if limit > 0 else []

    def clear(self) -> int:
        count = len(self._entries)
        self._entries.clear()
        return count

    def __len__(self) -> int:
        return len(self._entries)


def format_remote_args(args: list[dict[str, Any]]) -> str:
    """Render Runtime.consoleAPICalled args as the console would show them."""
    parts = []
    for arg in args:
        if "value" in arg:
            value = arg["value"]
            parts.append(value if isinstance(value, str) else _json(value))
        elif "unserializableValue" in arg:
            parts.append(str(arg["unserializableValue"]))
        elif "description" in arg:
            parts.append(str(arg["description"]))
        else:
            parts.append(str(arg.get("type", "")))
    return " ".join(parts)


def _json(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def source_of(url: str | None, line: int | None) -> str:
    """'url:line' (1-based line), or what is known of it."""
    if not url:
        return ""
    return f"{url}:{line + 1}" if line is not None else url
