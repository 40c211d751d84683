"""browser_get_network_sources: the tabs' recent responses and where each came from.

Never launches a browser: with none running, nothing was loaded. With more than one tab open,
the responses of every tab are listed together, oldest first, each saying its tab: `[tab 1]`.
"""

from __future__ import annotations

from typing import Any

from ..browser import NETWORK_SOURCES
from ._context import ToolContext
from ._output import ToolOutput, spill_lines


async def network_sources(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = ctx.existing_browser()
    if session is None:
        return ToolOutput.ok("No responses recorded: no browser is running in this conversation.")
    pages = session.tabs.pages()
    for page in pages:
        await page.workers.caught_up()
    logs = [page.workers.network for page in pages]
    limit = int(args.get("limit", 50))
    records = sorted(
        ((record, tab) for tab, log in enumerate(logs) for record in log.recent(limit)),
        key=lambda pair: (pair[0].time, pair[0].seq),
    )[-limit:]
    total, dropped = sum(len(log) for log in logs), sum(log.dropped for log in logs)
    counts = {source: sum(log.counts()[source] for log in logs) for source in NETWORK_SOURCES}
    cleared = ""
    if args.get("clear") and sum(log.clear() for log in logs):
        cleared = " The log was cleared."
    network = logs[0]
    if not records:
        return ToolOutput.ok(
            "No responses recorded since the session started or the log was cleared."
        )
    by_source = ", ".join(f"{source} {count}" for source, count in counts.items())
    header = f"{total} responses recorded; by source: {by_source}."
    if dropped:
        header += f" {dropped} older ones were dropped (the log keeps {network.capacity})."
    shown = "oldest first" if len(records) == total else f"the newest {len(records)}, oldest first"
    header += f"{cleared} Listed {shown}:"
    text = spill_lines(
        header,
        [
            f"[tab {tab}] {record.describe()}" if len(logs) > 1 else record.describe()
            for record, tab in records
        ],
        ctx.dirs().outputs,
        label="network-sources",
        limit=ctx.settings.inline_text_limit,
        noun="responses",
    )
    return ToolOutput.ok(text)
