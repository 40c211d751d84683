"""A service with a pre-warmed pool, run in a helper process that a test then SIGKILLs: it
opens a session manager (pool of COUNT, the death link on or off), waits until the pool is
full, prints one JSON line {"pids": [...]} with the pooled Chromes' pids, and waits forever.

As a script: python pool_service.py STATE_DIR COUNT DEATH_LINK(0|1)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import trio

from browser_tool import Browser, Metrics, PoolSource, Settings, open_session_manager


async def started_pool(state_dir: Path, count: int, *, death_link: bool) -> list[int]:
    """Start the helper, read its line, SIGKILL it (no cleanup of any kind runs in it), and
    return the pids of its pooled Chromes. Raises AssertionError when it exits early."""
    argv = [sys.executable, __file__, str(state_dir), str(count), "1" if death_link else "0"]
    helper = await trio.lowlevel.open_process(argv, stdout=-1)
    assert helper.stdout is not None
    try:
        line = b""
        with trio.fail_after(30 + count * 5):
            while not line.endswith(b"\n"):
                chunk = await helper.stdout.receive_some()
                assert chunk, f"pool_service exited early with status {helper.poll()}"
                line += chunk
    finally:
        helper.kill()
        with trio.CancelScope(shield=True):
            await helper.wait()
            await helper.stdout.aclose()
    pids: list[int] = json.loads(line)["pids"]
    return pids


async def _serve(state_dir: Path, count: int, death_link: bool) -> None:
    settings = Settings(
        state_dir=state_dir, pool_size=count, death_link=death_link, reap_on_start=False
    )
    pools: list[PoolSource] = []

    def pooling(
        settings: Settings,
        instance_id: str,
        nursery: trio.Nursery,
        on_closed: Callable[[Browser], None],
        metrics: Metrics,
    ) -> PoolSource:  # run as a script, this cannot import tests.support.sources
        pools.append(PoolSource(settings, instance_id, nursery, on_closed, metrics))
        return pools[-1]

    async with open_session_manager(settings, source_factory=pooling) as manager:
        await pools[0].wait_filled()
        pids = [info.pid for info in manager.list_sessions()]
        print(json.dumps({"pids": pids}), flush=True)
        await trio.sleep_forever()


if __name__ == "__main__":
    args = sys.argv[1:]
    trio.run(_serve, Path(args[0]), int(args[1]), args[2] == "1")
