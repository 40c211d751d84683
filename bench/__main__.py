"""`make bench`: every benchmark, one after another, each in its own process (they parse their
own arguments and exit with their own status). Timing targets live here, never in tests."""

from __future__ import annotations

import subprocess
import sys

BENCHMARKS = ("bench.launch", "bench.tools", "bench.reap_20", "bench.http_overhead")

if __name__ == "__main__":
    failed = []
    for name in sys.argv[1:] or BENCHMARKS:
        print(f"== {name}", flush=True)
        if subprocess.run([sys.executable, "-m", name], check=False).returncode != 0:
            failed.append(name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")
