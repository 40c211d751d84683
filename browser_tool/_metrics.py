"""Counters and a latency histogram, rendered in Prometheus text format by the HTTP front end.

Plain in-process numbers: no dependency, no locks (trio runs one task at a time).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

Labels = tuple[tuple[str, str], ...]


@dataclass
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    total: float = 0.0
    n: int = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(LATENCY_BUCKETS, value)] += 1
        self.total += value
        self.n += 1


_HELP = {
    "browser_tool_launches_total": "Chrome launches for conversations and the pool, by outcome",
    "browser_tool_handovers_total": "Browsers handed to a conversation without a launch, by source",
    "browser_tool_kills_total": "Sessions ended, by reason",
    # issue 21
    "browser_tool_human_handoffs_total": "Hand-overs to a person: offered, opened, ends by cause",
    "browser_tool_tool_calls_total": "Tool calls, by tool",
    "browser_tool_tool_errors_total": "Tool calls that returned is_error, by tool",
    "browser_tool_reaper_total": "Orphan reaper decisions at start-up, by outcome",
    "browser_tool_tool_call_seconds": "Tool call latency, by tool",
    "browser_tool_shared_browser_launches_total": "Shared Chrome launches, by outcome",
    "browser_tool_shared_browser_ends_total": "Shared Chromes ended, by reason",
    "browser_tool_pages_paused_total": "Pages paused between calls for their CPU use (issue 22)",
    "browser_tool_probes_total": "Browsers probed after a timed-out call, by outcome (issue 22)",
}


class Metrics:
    def __init__(self) -> None:
        self._counters: dict[str, dict[Labels, float]] = defaultdict(lambda: defaultdict(float))
        self._histograms: dict[str, dict[Labels, _Histogram]] = defaultdict(
            lambda: defaultdict(_Histogram)
        )
        self._gauges: dict[str, dict[Labels, float]] = defaultdict(dict)

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None:
        self._counters[name][tuple(sorted(labels.items()))] += amount

    def observe(self, name: str, value: float, **labels: str) -> None:
        self._histograms[name][tuple(sorted(labels.items()))].observe(value)

    def set_gauge(self, name: str, value: float, **labels: str) -> None:
        """A value that goes up and down, kept until set again (rendered with scraped ones)."""
        self._gauges[name][tuple(sorted(labels.items()))] = value

    def counter(self, name: str, **labels: str) -> float:
        return self._counters.get(name, {}).get(tuple(sorted(labels.items())), 0.0)

    def render(self, gauges: dict[str, dict[Labels, float]] | None = None) -> str:
        """Prometheus text exposition format (version 0.0.4)."""
        lines: list[str] = []
        for name, series in sorted({**self._gauges, **(gauges or {})}.items()):
            lines += [f"# TYPE {name} gauge"]
            lines += [f"{name}{_labels(k)} {_num(v)}" for k, v in sorted(series.items())]
        for name, series in sorted(self._counters.items()):
            lines += [f"# HELP {name} {_HELP.get(name, name)}", f"# TYPE {name} counter"]
            lines += [f"{name}{_labels(k)} {_num(v)}" for k, v in sorted(series.items())]
        for name, hists in sorted(self._histograms.items()):
            lines += [f"# HELP {name} {_HELP.get(name, name)}", f"# TYPE {name} histogram"]
            for key, h in sorted(hists.items()):
                running = 0
                for bound, count in zip((*LATENCY_BUCKETS, float("inf")), h.counts, strict=True):
                    running += count
                    le = "+Inf" if bound == float("inf") else _num(bound)
                    lines.append(f"{name}_bucket{_labels((*key, ('le', le)))} {running}")
                lines.append(f"{name}_sum{_labels(key)} {_num(h.total)}")
                lines.append(f"{name}_count{_labels(key)} {h.n}")
        return "\n".join(lines) + "\n"


def _labels(key: Labels) -> str:
    if not key:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in key)
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
