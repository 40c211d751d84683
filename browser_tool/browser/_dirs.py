"""SessionDirs: a conversation's directory and what lives in it.

The profile goes with the browser (it is inside chrome-<token>/); downloads, screenshots and
outputs go with the conversation. Deleting a tree with thousands of files takes long enough
(~150 ms for a profile) to stall every conversation if done on the trio thread, so removal
runs in a worker thread.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import trio

from orphan_reaper import write_session_owner


@dataclass(frozen=True)
class SessionDirs:
    root: Path

    @property
    def downloads(self) -> Path:
        return self.root / "downloads"

    @property
    def screenshots(self) -> Path:
        return self.root / "screenshots"

    @property
    def outputs(self) -> Path:
        return self.root / "outputs"

    def create(self, instance_id: str) -> SessionDirs:
        for path in (self.root, self.downloads, self.screenshots, self.outputs):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        # The reaper removes session dirs whose owner instance is dead; this says who owns it.
        write_session_owner(self.root, instance_id)
        return self

    async def remove(self) -> str | None:
        """Delete the whole dir in a worker thread; return an error text instead of raising.
        Shielded: a cancelled caller still leaves no half-deleted dir behind it."""
        with trio.CancelScope(shield=True):
            error = await trio.to_thread.run_sync(_remove_tree, self.root)
        return error

    async def clear_downloads(self) -> None:
        """Empty `downloads/` (in a worker thread) and leave it in place."""
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(_remove_tree, self.downloads)
        self.downloads.mkdir(mode=0o700, exist_ok=True)


def _remove_tree(root: Path) -> str | None:
    try:
        shutil.rmtree(root)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"could not delete {str(root)!r}: {exc}"
    return None
