"""Hostile pages for the fault suite, as data: URLs (no network at all), and small helpers."""

from __future__ import annotations

import statistics
import urllib.parse

# Every fault test caps the page's JavaScript heap, so running out of memory takes well under
# a second (and some hundred MiB) instead of ~10 s and 4 GiB on a machine shared with others.
JS_HEAP_MB = 128
# An expression that allocates without end; it crashes the renderer at the heap cap.
EXHAUST_MEMORY = "(() => { const a = []; while (true) a.push(new Array(1e6).fill(1)); })()"
NEVER_RESOLVES = "new Promise(() => {})"


def html(body: str) -> str:
    """A data: URL holding `body` as an HTML document."""
    return "data:text/html," + urllib.parse.quote(f"<!doctype html><meta charset=utf-8>{body}")


def log_then_dialogs(lines: int = 10) -> str:
    """The page of issue 10: `lines` console lines, then an alert, a confirm and a prompt."""
    return html(
        f"<script>for (let i = 1; i <= {lines}; i++) console.log('log line ' + i);"
        "alert('first dialog'); confirm('second dialog'); prompt('third dialog', 'x');</script>"
    )


def summary(seconds: list[float]) -> str:
    """'n=40 median 4.1 ms, p90 9.0 ms, max 12.3 ms' for a list of durations."""
    ms = sorted(s * 1000 for s in seconds)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    return (
        f"n={len(ms)} median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms, max {ms[-1]:.1f} ms"
    )
