"""Helper process: launch one Chrome through chrome_launcher, print its pid, then wait forever.

Usage: python launch_and_wait.py STATE_DIR INSTANCE_ID DEATH_LINK(0|1) [CHROME_PATH]
Tests kill this process with SIGKILL to check what happens to its Chrome.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import trio

from chrome_launcher import InstanceLock, LaunchOptions, StateLayout, launch_chrome


async def main(
    state_dir: Path, instance_id: str, death_link: bool, chrome_path: str | None
) -> None:
    lock = InstanceLock.acquire(StateLayout(state_dir), instance_id)
    async with trio.open_nursery() as nursery:
        chrome = await launch_chrome(
            LaunchOptions(
                state_dir=state_dir,
                instance_id=lock.instance_id,
                session_dir=state_dir / "sessions" / "helper",
                chrome_path=chrome_path,
                death_link=death_link,
            ),
            nursery,
        )
        print(json.dumps({"pid": chrome.pid, "record": str(chrome.record_path)}), flush=True)
        await trio.sleep_forever()


if __name__ == "__main__":
    args = sys.argv[1:]
    trio.run(main, Path(args[0]), args[1], args[2] == "1", args[3] if len(args) > 3 else None)
