"""The single-tab model: a window the page opens is closed at once and the agent told."""

from __future__ import annotations

from typing import Any

from ..cdp import CdpConnection
from ._notes import Notes


async def close_popup(
    conn: CdpConnection, notes: Notes, info: dict[str, Any], *, timeout: float
) -> None:
    """Close the page target `info` (a `Target.targetCreated` event's) and note it."""
    url = info.get("url") or "about:blank"
    await conn.send("Target.closeTarget", {"targetId": info["targetId"]}, timeout=timeout)
    notes.add(
        "popup",
        f"The page opened a new window ({url}); it was closed, since this tool keeps one tab. "
        "Navigate to the URL instead if you need it.",
    )
