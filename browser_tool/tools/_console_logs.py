"""browser_recent_console_logs and browser_clear_console_logs: the page's console buffer.

Neither launches a browser: with none running, nothing was logged.

The log is written for a model: one line per entry, oldest first,

    #12 14:03:05.123 warn  slow response (https://site/app.js:40)
    #13 14:03:05.200 log   [service_worker https://site/sw.js] cache ready (https://site/sw.js:3)

and when it does not fit inline, the newest entries are the ones shown, with a count of what
was left out and the file that holds every entry.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..browser import ConsoleEntry
from ._context import ToolContext
from ._output import ToolOutput, spill_lines

_URL_CHARS = 80  # a source or context URL longer than this is shown as its start and end


def format_entry(entry: ConsoleEntry) -> str:
    """One entry on one line: #seq, UTC time of day, level, [context] for a non-page context,
    the text (newlines shown as \\n), and the source in parentheses."""
    stamp = datetime.fromtimestamp(entry.time, UTC).strftime("%H:%M:%S.%f")[:-3]
    parts = [f"#{entry.seq}", stamp, f"{entry.level:<5}"]
    if entry.context != "page":
        parts.append(f"[{' '.join(filter(None, (entry.context, shorten(entry.context_url))))}]")
    parts.append(entry.text.replace("\r", "").replace("\n", "\\n"))
    if entry.source:
        parts.append(f"({shorten(entry.source)})")
    return " ".join(parts)


def shorten(url: str, limit: int = _URL_CHARS) -> str:
    """A long URL (a data: URL, a query string) as its start and its end (the :line)."""
    if len(url) <= limit:
        return url
    tail = limit // 3
    return f"{url[: limit - tail - 3]}...{url[-tail:]}"


def format_log(entries: list[ConsoleEntry], dropped: int) -> tuple[str, list[str]]:
    """The header and the lines of `entries` (oldest first)."""
    first = datetime.fromtimestamp(entries[0].time, UTC).strftime("%Y-%m-%d")
    header = (
        f"{len(entries)} console entries #{entries[0].seq}-#{entries[-1].seq}, oldest first "
        f"(times UTC, {first})"
    )
    if dropped:
        header += f"; {dropped:,} older entries were dropped from the full buffer"
    return header + ":", [format_entry(e) for e in entries]


async def recent_console_logs(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = ctx.existing_browser()
    context = args.get("context")
    empty = f"No console log entries{f' of context {context}' if context else ''}."
    if session is None:
        return ToolOutput.ok(empty)
    console = session.page.console
    entries = console.recent(int(args.get("limit", 100)), context)
    if not entries:
        return ToolOutput.ok(empty)
    header, lines = format_log(entries, console.dropped)
    outputs = ctx.dirs().outputs
    limit = ctx.settings.inline_text_limit
    text = spill_lines(header, lines, outputs, label="console", limit=limit, noun="entries")
    return ToolOutput.ok(text)


async def clear_console_logs(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = ctx.existing_browser()
    count = session.page.console.clear() if session else 0
    return ToolOutput.ok(f"Cleared {count} console log entries.")
