"""SessionDirs: a conversation's directory. Deleting one must not stall the event loop: a big
profile takes long enough to freeze every other conversation if removed on the trio thread."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
import trio

from browser_tool import SessionDirs


@pytest.fixture
def slow_rmtree(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """rmtree that blocks until the event is set, as a large tree on a slow disk would."""
    proceed = threading.Event()
    real = shutil.rmtree

    def rmtree(path: Path) -> None:
        # If this ran on the trio thread, the task that sets `proceed` could never run.
        assert proceed.wait(timeout=10), "rmtree blocked the event loop"
        real(path)

    monkeypatch.setattr(shutil, "rmtree", rmtree)
    return proceed


@pytest.mark.parametrize("step", ["remove", "clear_downloads"])
async def test_removal_runs_off_the_event_loop(
    tmp_path: Path, slow_rmtree: threading.Event, step: str
) -> None:
    dirs = SessionDirs(tmp_path / "conv").create("instance-1")
    (dirs.downloads / "file.bin").write_bytes(b"x" * 1000)
    progressed = []

    async def other_conversation() -> None:
        progressed.append(True)
        slow_rmtree.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(getattr(dirs, step))
        nursery.start_soon(other_conversation)
    assert progressed == [True]
    assert not (dirs.downloads / "file.bin").exists()
    if step == "remove":
        assert not dirs.root.exists()
    else:
        assert dirs.downloads.is_dir()


async def test_removing_a_dir_that_is_gone_already_is_no_error(tmp_path: Path) -> None:
    assert await SessionDirs(tmp_path / "never-made").remove() is None
