"""browser_recent_console_logs and browser_clear_console_logs: the tabs' console buffers.

Neither launches a browser: with none running, nothing was logged.

The log is written for a model: one line per entry, oldest first,

    #12 14:03:05.123 warn  slow response (https://site/app.js:40)
    #13 14:03:05.200 log   [service_worker https://site/sw.js] cache ready (https://site/sw.js:3)

and when it does not fit inline, the newest entries are the ones shown, with a count of what
was left out and the file that holds every entry. With more than one tab open, the entries of
every tab are listed together (their numbers order them) and each says its tab: `[tab 1]`; the
entries of the last closed tabs stay, as `[closed tab]` (a sign-in window's log outlives it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..browser import ConsoleEntry
from ._context import ToolContext
from ._output import ToolOutput, spill_lines

_URL_CHARS = 80  # a source or context URL longer than this is shown as its start and end


def format_entry(entry: ConsoleEntry, tab: str | None = None) -> str:
    """One entry on one line: #seq, UTC time of day, level, [tab] when given ('tab 1', 'closed
    tab'), [context] for a non-page context, the text (newlines shown as \\n), and the source
    in parentheses."""
    stamp = datetime.fromtimestamp(entry.time, UTC).strftime("%H:%M:%S.%f")[:-3]
    parts = [f"#{entry.seq}", stamp, f"{entry.level:<5}"]
    if tab is not None:
        parts.append(f"[{tab}]")
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


def format_log(
    entries: list[ConsoleEntry], dropped: int, tabs: list[str | None] | None = None
) -> tuple[str, list[str]]:
    """The header and the lines of `entries` (oldest first), each of tab `tabs[i]` if given."""
    first = datetime.fromtimestamp(entries[0].time, UTC).strftime("%Y-%m-%d")
    header = (
        f"{len(entries)} console entries #{entries[0].seq}-#{entries[-1].seq}, oldest first "
        f"(times UTC, {first})"
    )
    if dropped:
        header += f"; {dropped:,} older entries were dropped from the full buffer"
    tabs = tabs or [None] * len(entries)
    return header + ":", [format_entry(e, t) for e, t in zip(entries, tabs, strict=True)]


async def recent_console_logs(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = ctx.existing_browser()
    context = args.get("context")
    empty = f"No console log entries{f' of context {context}' if context else ''}."
    if session is None:
        return ToolOutput.ok(empty)
    limit = int(args.get("limit", 100))
    consoles = session.tabs.consoles()
    tagged = sorted(
        (
            (entry, tag or None)
            for tag, console in consoles
            for entry in console.recent(limit, context)
        ),
        key=lambda pair: pair[0].seq,
    )[-limit:]
    if not tagged:
        return ToolOutput.ok(empty)
    dropped = sum(console.dropped for _, console in consoles)
    header, lines = format_log([e for e, _ in tagged], dropped, [t for _, t in tagged])
    outputs = ctx.dirs().outputs
    inline = ctx.settings.inline_text_limit
    text = spill_lines(header, lines, outputs, label="console", limit=inline, noun="entries")
    return ToolOutput.ok(text)


async def clear_console_logs(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = ctx.existing_browser()
    count = session.tabs.clear_consoles() if session else 0
    return ToolOutput.ok(f"Cleared {count} console log entries.")
