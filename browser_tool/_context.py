"""ToolContext: what one tool call may reach. Created per call with the conversation id fixed
inside, so a tool can only ever get its own conversation's browser: no tool input names a
session, a pid or a port."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ._session import BrowserSession, SessionDirs
from ._settings import Settings

if TYPE_CHECKING:
    from ._manager import BrowserSessionManager


@dataclass(frozen=True)
class ToolContext:
    conversation_id: str
    settings: Settings
    working_dir: Path
    _manager: BrowserSessionManager

    async def browser(self) -> BrowserSession:
        """This conversation's browser, launched on first use. Raises BrowserLaunchError."""
        return await self._manager._browser_for_call(self.conversation_id)

    def existing_browser(self) -> BrowserSession | None:
        """This conversation's browser if one is running; never launches one."""
        return self._manager._existing_browser(self.conversation_id)

    def dirs(self) -> SessionDirs:
        """This conversation's dir (created if needed), without launching a browser."""
        return self._manager._dirs_for(self.conversation_id)
