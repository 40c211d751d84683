"""How long does one sweep take to kill 20 real orphans? `python -m bench.reap_20`

Plants 20 headless-shell orphans in a fresh state root (a helper launches them with the death
link off and is SIGKILLed), times `reap_orphans` over them, checks every group is gone, and
prints the figure. Needs Debian's chromium-headless-shell.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

from chrome_launcher import HEADLESS_SHELL, live_group_members
from orphan_reaper import reap_orphans
from tests.support.plant_orphans import killed_after, plant

COUNT = 20


async def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="bt-bench-", dir="/tmp"))
    try:
        state_dir = root / "state"
        planted = await plant(state_dir, "bench-dead", COUNT, str(HEADLESS_SHELL))
        async with killed_after(list(planted.pids)):
            started = time.monotonic()
            report = await reap_orphans(state_dir)
            elapsed = time.monotonic() - started
            left = [pid for pid in planted.pids if live_group_members(pid)]
        ladders = [float(k.summary.split(" in ")[1].split()[0]) for k in report.killed]
        print(
            f"reap_orphans killed {len(report.killed)}/{COUNT} orphans in {elapsed:.2f}s"
            f" (ladders: median {statistics.median(ladders):.0f} ms, max {max(ladders):.0f} ms;"
            f" {len(report.removed)} paths removed; {len(left)} groups left)"
        )
        return 0 if not left and report.exit_code == 0 else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(trio.run(main))
