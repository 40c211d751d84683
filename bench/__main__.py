"""`make bench`: every benchmark, one after another. Timing targets live here, never in tests."""

from __future__ import annotations

import runpy
import sys

BENCHMARKS = ("bench.launch", "bench.tools", "bench.reap_20", "bench.http_overhead")

if __name__ == "__main__":
    for name in sys.argv[1:] or BENCHMARKS:
        print(f"== {name}", flush=True)
        runpy.run_module(name, run_name="__main__")
