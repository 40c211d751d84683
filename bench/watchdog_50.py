"""The watchdog's own cost (issue 22): CPU of one sampler pass over 50 conversations.

A pass is one walk of /proc summing CPU and RSS by process group (`group_usage`), plus, for a
group over the memory limit, its PSS (`group_pss_bytes`). Fifty browsers are stood in for by
fifty process groups of seven processes each (a headless shell's count), so the walk reads as
many /proc entries as it would with fifty Chromes, without 9 GiB of Chromes on a shared
machine. Prints a table: CPU per pass, and the share of one core at the default 5 s interval.

    python -m bench.watchdog_50 [--groups 50] [--passes 200]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable

from chrome_launcher import group_pss_bytes, group_usage

MEMBERS = 7  # processes of an idle headless shell 156
INTERVAL = 5.0  # BROWSER_TOOL_WATCHDOG_INTERVAL's default


def spawn_groups(count: int) -> list[subprocess.Popen[bytes]]:
    script = " ".join(["sleep 600 &"] * (MEMBERS - 1)) + " wait"
    return [subprocess.Popen(["sh", "-c", script], start_new_session=True) for _ in range(count)]


def cpu_ms(fn: Callable[[], object], passes: int) -> float:
    """CPU milliseconds of this thread per call of `fn`."""
    start = time.thread_time()
    for _ in range(passes):
        fn()
    return (time.thread_time() - start) * 1000 / passes


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--passes", type=int, default=200)
    args = parser.parse_args()
    groups = spawn_groups(args.groups)
    try:
        pgids = [g.pid for g in groups]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            usage = group_usage(pgids)
            if sum(len(u.members) for u in usage.values()) >= args.groups * MEMBERS:
                break
            time.sleep(0.05)
        members = sum(len(u.members) for u in usage.values())
        procs = len([name for name in os.listdir("/proc") if name.isdigit()])
        walk = cpu_ms(lambda: group_usage(pgids), args.passes)
        one = usage[pgids[0]].members
        pss = cpu_ms(lambda: group_pss_bytes(one), args.passes)
        print(f"{args.groups} groups, {members} members, {procs} processes in /proc")
        print("| step | CPU per pass | share of one core at a 5 s interval |")
        print("| --- | --- | --- |")
        print(f"| walk of /proc, every group | {walk:.2f} ms | {walk / INTERVAL / 10:.3f} % |")
        print(f"| PSS of one group over the limit | {pss:.3f} ms | {pss / INTERVAL / 10:.4f} % |")
    finally:
        for g in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(g.pid, signal.SIGKILL)
            g.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
