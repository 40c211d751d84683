"""`make bench` (`python -m bench`): ours side by side with Playwright for Python and a raw CDP
floor (see `_compare`), written to bench/results/latest.{json,md,png}; then the reaper's own
benchmark (20 real orphans). `python -m bench compare` or `python -m bench reap_20` runs one.
Timing targets live here, never in tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def compare() -> int:
    from . import _compare, _report

    results = _compare.main()
    _report.write(results, RESULTS)
    print((RESULTS / "latest.md").read_text())
    return 0


def reap_20() -> int:
    return subprocess.run([sys.executable, "-m", "bench.reap_20"], check=False).returncode


if __name__ == "__main__":
    chosen = sys.argv[1:] or ["compare", "reap_20"]
    status = 0
    for name in chosen:
        print(f"== {name}", flush=True)
        status |= {"compare": compare, "reap_20": reap_20}[name]()
    sys.exit(status)
