"""What the next tool result should tell the model about what the page did meanwhile, and the
one wording of each crash.

Notes are bounded: a page that raises a thousand dialogs or opens a thousand windows yields
the first few notes of each kind and one line counting the rest, never a thousand lines (and
never unbounded memory between two calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The two crashes a call can meet, each said one way everywhere (tool errors, notes, the
# console buffer), so a result never holds two stories that contradict each other.
PAGE_CRASH_FACTS = (
    "its renderer process died (for example, it ran out of memory), so the page was replaced "
    "by a blank one (about:blank): its DOM, scripts and form input are lost; cookies and "
    "storage were kept. Navigate again to continue."
)
PAGE_NOT_REPLACED = (
    "The page crashed and no new page could be opened in its browser, so the browser is being "
    "closed; the next call starts a fresh browser."
)
PAGE_CRASHED_DURING_CALL = f"The page crashed during the call: {PAGE_CRASH_FACTS}"
PAGE_CRASHED_BETWEEN_CALLS = f"Note: the page crashed since the previous call: {PAGE_CRASH_FACTS}"
TAB_CLOSED_DURING_CALL = (
    "The tab closed during the call (its page closed its own window), so the call was cut "
    "short and what it did is unknown."
)
BROWSER_CRASHED_DURING_CALL = (
    "The browser crashed during the call (its process exited or its connection dropped); the "
    "call was stopped and the browser's state (pages, cookies, storage) is lost. The next call "
    "starts a fresh browser."
)


@dataclass
class _Kind:
    shown: list[str] = field(default_factory=list)
    more: int = 0


class Notes:
    """Notes queued for the next result: at most `limits[kind]` (else `per_kind`) of each
    kind; more are counted."""

    def __init__(self, per_kind: int = 5, limits: dict[str, int] | None = None) -> None:
        self.per_kind = per_kind
        self.limits = dict(limits or {})
        self._kinds: dict[str, _Kind] = {}

    def add(self, kind: str, text: str) -> None:
        entry = self._kinds.setdefault(kind, _Kind())
        if len(entry.shown) < max(1, self.limits.get(kind, self.per_kind)):
            entry.shown.append(text)
        else:
            entry.more += 1

    def drop(self, kind: str) -> None:
        """Forget the notes of `kind` (the call's own result already says it)."""
        self._kinds.pop(kind, None)

    def take(self) -> list[str]:
        """The queued notes, oldest kind first, and empty the queue."""
        notes: list[str] = []
        for kind, entry in self._kinds.items():
            notes += entry.shown
            if entry.more:
                notes.append(
                    f"... and {entry.more} more {kind} event(s) like these "
                    "(browser_recent_console_logs lists them)."
                )
        self._kinds.clear()
        return notes

    def __len__(self) -> int:
        return sum(len(k.shown) + k.more for k in self._kinds.values())
