"""The console buffer of one tab: bounded, numbered, kept across navigations. Each entry
names the context that logged it (the page, a service worker, another worker) and its URL.
The tabs of a session number their entries from one `Numbering`, so an entry's number is
unique in the conversation and orders the entries of every tab.

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
#: The contexts an entry can come from: the page itself, a service worker, any other worker.
CONSOLE_CONTEXTS = ("page", "service_worker", "worker")


@dataclass(frozen=True)
class ConsoleEntry:
    seq: int
    level: str  # log, info, warn, error, debug, exception, dialog, ...
    text: str
    source: str  # "url:line", or "" when Chrome gave none
    time: float  # seconds since the epoch
    context: str = "page"  # one of CONSOLE_CONTEXTS
    context_url: str = ""  # the page's URL, or the worker's script URL

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Numbering:
    """The entry numbers of a session's console buffers: 1, 2, 3, ... across all of them."""

    def __init__(self) -> None:
        self.last = 0

    def next(self) -> int:
        self.last += 1
        return self.last


class ConsoleBuffer:
    """The last `capacity` console entries; older ones are dropped and counted. Entries are
    numbered from `numbering` (shared by the tabs of a session), else from 1."""

    def __init__(self, capacity: int, numbering: Numbering | None = None) -> None:
        self._entries: collections.deque[ConsoleEntry] = collections.deque(maxlen=capacity)
        self._numbering = numbering if numbering is not None else Numbering()
        self.dropped = 0
        # The page's current URL, which page entries are tagged with (kept by the page).
        self.page_url = ""

    def add(
        self,
        level: str,
        text: str,
        source: str = "",
        when: float | None = None,
        *,
        context: str = "page",
        context_url: str | None = None,
    ) -> None:
        if len(self._entries) == self._entries.maxlen:
            self.dropped += 1
        if len(text) > MAX_ENTRY_CHARS:
            text = f"{text[:MAX_ENTRY_CHARS]}... [{len(text) - MAX_ENTRY_CHARS:,} more characters]"
        if context_url is None:
            context_url = self.page_url if context == "page" else ""
        when = time.time() if when is None else when
        seq = self._numbering.next()
        self._entries.append(ConsoleEntry(seq, level, text, source, when, context, context_url))

    def add_event(
        self,
        method: str,
        p: dict[str, Any],
        *,
        context: str = "page",
        context_url: str | None = None,
    ) -> None:
        """Add what a console, exception or log event of a context says."""
        when = None
        if method == "Runtime.consoleAPICalled":
            frames = (p.get("stackTrace") or {}).get("callFrames") or [{}]
            level = console_level(str(p.get("type", "log")))
            text = format_remote_args(p.get("args", []))
            source = source_of(frames[0].get("url"), frames[0].get("lineNumber"))
            when = p["timestamp"] / 1000 if "timestamp" in p else None
        elif method == "Runtime.exceptionThrown":
            details = p.get("exceptionDetails", {})
            level, text = "exception", exception_text(details)
            source = source_of(details.get("url"), details.get("lineNumber"))
        elif method == "Log.entryAdded":
            entry = p.get("entry", {})
            level = console_level(str(entry.get("level", "info")))
            text = str(entry.get("text", ""))
            source = source_of(entry.get("url"), entry.get("lineNumber"))
        else:
            return
        self.add(level, text, source, when, context=context, context_url=context_url)

    def recent(self, limit: int, context: str | None = None) -> list[ConsoleEntry]:
        """The newest `limit` entries, oldest first; only those of `context` when given."""
        if limit <= 0:
            return []
        if context is None:
            count = len(self._entries)
            return [self._entries[i] for i in range(max(0, count - limit), count)]
        return [entry for entry in self._entries if entry.context == context][-limit:]

    @property
    def total(self) -> int:
        """The number of the newest entry ever numbered (by any buffer sharing the numbering):
        entries numbered above it are newer."""
        return self._numbering.last

    def clear(self) -> int:
        count = len(self._entries)
        self._entries.clear()
        self.dropped = 0
        return count

    def __len__(self) -> int:
        return len(self._entries)


def console_level(kind: str) -> str:
    """Our level name for a console call type or a Log entry level ("warning" -> "warn")."""
    return _LEVELS.get(kind, kind)


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
