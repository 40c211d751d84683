"""`make bench` (`python -m bench`): ours side by side with Playwright for Python and a raw CDP
floor (see `_compare`), written to bench/results/latest.{json,md,png}; then shared-browser mode
beside process mode (`context_mode`, its table added to latest.md); then the reaper's own
benchmark (20 real orphans); then each door's own cost with lean clients (`door_costs`) and
our stdio MCP server beside Playwright MCP and Chrome DevTools MCP (`mcp_peers`); last, the
snapshot table beside Playwright MCP (`snapshot_compare`); then the watchdog's own cost at 50
conversations (`watchdog_50`); each appended to latest.md (and latest.json).
`python -m bench compare|context_mode|reap_20|doors|mcp_peers|snapshot|watchdog` runs one.
Timing targets live here, never in tests."""

from __future__ import annotations

import json
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


def context_mode() -> int:
    """bench.context_mode against this run's Playwright first call; its table goes into
    latest.md (and context_mode.md)."""
    latest = RESULTS / "latest.json"
    playwright_ms = 290.0  # the figure, when `compare` has not run
    if latest.exists():
        playwright_ms = json.loads(latest.read_text())["first_call"]["playwright"]["p50"]
    command = [
        sys.executable,
        "-m",
        "bench.context_mode",
        "--playwright-ms",
        f"{playwright_ms:.1f}",
    ]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    kept = [line for line in done.stdout.splitlines() if line.startswith(("|", "target "))]
    section = (
        "\n## Shared-browser mode (BROWSER_TOOL_ISOLATION=context) beside process mode\n\n"
        f"`python -m bench.context_mode`, Playwright's first call taken as {playwright_ms:.0f} ms "
        "(this run's).\n\n" + "\n".join(kept) + "\n"
    )
    (RESULTS / "context_mode.md").write_text(section.lstrip())
    if (RESULTS / "latest.md").exists():
        with (RESULTS / "latest.md").open("a") as out:
            out.write(section)
    return done.returncode


def reap_20() -> int:
    return subprocess.run([sys.executable, "-m", "bench.reap_20"], check=False).returncode


def doors() -> int:
    return subprocess.run([sys.executable, "-m", "bench.door_costs"], check=False).returncode


def mcp_peers() -> int:
    return subprocess.run([sys.executable, "-m", "bench.mcp_peers"], check=False).returncode


def snapshot() -> int:
    return subprocess.run([sys.executable, "-m", "bench.snapshot_compare"], check=False).returncode


def watchdog() -> int:
    """Issue 22: the watchdog's own cost at 50 conversations; its table goes into latest.md."""
    command = [sys.executable, "-m", "bench.watchdog_50"]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    kept = [line for line in done.stdout.splitlines() if line.startswith("|")]
    if kept:
        from ._report import put_section

        title = "## The watchdog's own cost (issue 22)"
        section = (
            f"{title}\n\n`python -m bench.watchdog_50`: one sampler pass over 50 process "
            "groups of 7.\n\n" + "\n".join(kept) + "\n"
        )
        put_section(RESULTS, title, section, "watchdog", kept)
    return done.returncode


if __name__ == "__main__":
    chosen = sys.argv[1:] or [
        "compare",
        "context_mode",
        "reap_20",
        "doors",
        "mcp_peers",
        "snapshot",
        "watchdog",
    ]
    status = 0
    for name in chosen:
        print(f"== {name}", flush=True)
        status |= {
            "compare": compare,
            "context_mode": context_mode,
            "reap_20": reap_20,
            "doors": doors,
            "mcp_peers": mcp_peers,
            "snapshot": snapshot,
            "watchdog": watchdog,
        }[name]()
    sys.exit(status)
