"""What a proxy in front of several instances tells an instance (see docs/deploy.md).

Conversations are pinned to instances by a consistent hash of their id. When the instance a
conversation hashes to cannot take a call (stopped, draining, unreachable), the reference nginx
configuration retries the call on another instance with `Browser-Tool-Moved` set. That
instance has never seen the conversation, so without the header its fresh browser would look
like a first call; with it, the result says the earlier browser state is gone. Only the proxy
sets the header (the reference configuration overwrites whatever a client sent); a client that
sends it anyway earns nothing but a spurious note.
"""

from __future__ import annotations

from ..conversations import BrowserSessionManager

MOVED_HEADER = b"browser-tool-moved"


def note_if_moved(manager: BrowserSessionManager, conversation_id: str, value: str | None) -> None:
    """Tell the manager the conversation moved here when the proxy's header says so."""
    if value and value.strip():
        manager.note_moved_here(conversation_id)
