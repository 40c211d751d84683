"""A JavaScript dialog is answered the moment it opens, so that no call ever blocks on one; the
console and the caller's next result say what it was and how it was answered."""

from __future__ import annotations

from typing import Any

from .._settings import Settings
from ..cdp import CdpSession
from ._console import ConsoleBuffer
from ._notes import Notes

_SHOWN_CHARS = 200


async def answer_dialog(
    session: CdpSession,
    settings: Settings,
    console: ConsoleBuffer,
    notes: Notes,
    p: dict[str, Any],
    *,
    timeout: float,
) -> None:
    """Answer the dialog of a `Page.javascriptDialogOpening` event as the settings say."""
    kind = str(p.get("type", "alert"))
    message = str(p.get("message", ""))
    accept = settings.dialog_accepts(kind)
    params: dict[str, Any] = {"accept": accept}
    if accept and kind == "prompt":
        params["promptText"] = str(p.get("defaultPrompt", ""))
    # Recorded before the answer goes out: the script the dialog blocks, and the call that
    # waits for it, may finish before our command's own answer arrives.
    verdict = "accepted" if accept else "dismissed"
    console.add("dialog", f"{kind}: {message} ({verdict})", str(p.get("url", "")))
    shown = message if len(message) <= _SHOWN_CHARS else message[:_SHOWN_CHARS] + "..."
    notes.add("dialog", f"A JavaScript {kind} dialog appeared ({shown!r}) and was {verdict}.")
    await session.send("Page.handleJavaScriptDialog", params, timeout=timeout)
