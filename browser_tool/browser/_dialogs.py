"""A JavaScript dialog is answered the moment it opens, so that no call ever blocks on one; the
console and the caller's next result say what it was and how it was answered.

The console entry is written by the console's own listener (`dialog_entry`), so that it keeps
its place among the page's console messages (the wire's order); the note and the answer come
from the page's event pump (`answer_dialog`)."""

from __future__ import annotations

from typing import Any

from .._settings import Settings
from ..cdp import CdpSession
from ._console import ConsoleBuffer
from ._notes import Notes

_SHOWN_CHARS = 200


def verdict_of(settings: Settings, p: dict[str, Any]) -> tuple[str, bool]:
    """(dialog type, whether it is accepted) of a `Page.javascriptDialogOpening` event."""
    kind = str(p.get("type", "alert"))
    return kind, settings.dialog_accepts(kind)


def dialog_entry(settings: Settings, console: ConsoleBuffer, p: dict[str, Any]) -> None:
    """The console entry of a dialog: `alert: text (accepted)`."""
    kind, accept = verdict_of(settings, p)
    verdict = "accepted" if accept else "dismissed"
    console.add("dialog", f"{kind}: {p.get('message', '')} ({verdict})", str(p.get("url", "")))


async def answer_dialog(
    session: CdpSession, settings: Settings, notes: Notes, p: dict[str, Any], *, timeout: float
) -> None:
    """Answer the dialog of a `Page.javascriptDialogOpening` event as the settings say."""
    kind, accept = verdict_of(settings, p)
    message = str(p.get("message", ""))
    params: dict[str, Any] = {"accept": accept}
    if accept and kind == "prompt":
        params["promptText"] = str(p.get("defaultPrompt", ""))
    # Noted before the answer goes out: the script the dialog blocks, and the call that waits
    # for it, may finish before our command's own answer arrives.
    verdict = "accepted" if accept else "dismissed"
    shown = message if len(message) <= _SHOWN_CHARS else message[:_SHOWN_CHARS] + "..."
    notes.add("dialog", f"A JavaScript {kind} dialog appeared ({shown!r}) and was {verdict}.")
    await session.send("Page.handleJavaScriptDialog", params, timeout=timeout)
