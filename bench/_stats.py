"""Small statistics helpers for the benchmarks."""

from __future__ import annotations

import statistics


def percentile(samples: list[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank."""
    ordered = sorted(samples)
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered)) - 1))
    return ordered[index]


def describe_ms(samples: list[float]) -> str:
    """'p50 1.23 ms, p99 4.56 ms, min .., max .. (n=...)' for samples in seconds."""
    ms = [s * 1000 for s in samples]
    return (
        f"median {statistics.median(ms):.2f} ms, p50 {percentile(ms, 50):.2f} ms, "
        f"p99 {percentile(ms, 99):.2f} ms, min {min(ms):.2f} ms, max {max(ms):.2f} ms "
        f"(n={len(ms)})"
    )
