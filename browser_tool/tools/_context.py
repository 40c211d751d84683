"""ToolContext: what one tool call may reach. Created per call with the conversation's slot fixed
inside, so a tool can only ever get its own conversation's browser: no tool input names a
session, a pid or a port. Bound to the slot, not the id: a call in flight when its conversation
is deleted can never bring the conversation back (a new browser, a recreated dir)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._settings import Settings
from ..browser import BrowserSession, SessionDirs

if TYPE_CHECKING:
    from .._manager import BrowserSessionManager, _Slot


@dataclass(frozen=True)
class ToolContext:
    conversation_id: str
    settings: Settings
    working_dir: Path
    _manager: BrowserSessionManager
    _slot: _Slot

    async def browser(self) -> BrowserSession:
        """This conversation's browser, launched on first use. Raises BrowserLaunchError, or
        SessionClosedError once the conversation was deleted."""
        return await self._manager._browser_for_call(self._slot)

    def existing_browser(self) -> BrowserSession | None:
        """This conversation's browser if one is running; never launches one."""
        session = self._slot.session
        return session if session is not None and session.alive else None

    def dirs(self) -> SessionDirs:
        """This conversation's dir (created if needed), without launching a browser. Raises
        SessionClosedError once the conversation was deleted."""
        return self._manager._dirs_for(self._slot)
