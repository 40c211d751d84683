"""What /metrics shows: the manager's counters and histogram, plus gauges computed at scrape
time from the session inventory, and the start-up orphan sweep's results."""

from __future__ import annotations

from .._manager import BrowserSessionManager
from .._metrics import Labels
from ..browser import SessionState

# "starting" is the inventory's state for a conversation whose first call is launching Chrome.
_STATES = tuple(state.value for state in SessionState)


def render_metrics(manager: BrowserSessionManager) -> str:
    """The Prometheus text exposition (0.0.4) of everything the service counts."""
    sessions = manager.list_sessions()
    by_state: dict[Labels, float] = {(("state", state),): 0.0 for state in _STATES}
    for info in sessions:
        key: Labels = (("state", info.state),)
        by_state[key] = by_state.get(key, 0.0) + 1
    gauges: dict[str, dict[Labels, float]] = {
        "browser_tool_sessions": by_state,
        "browser_tool_sessions_rss_bytes": {(): float(sum(info.rss_bytes for info in sessions))},
    }
    return manager.metrics.render(gauges)


def record_startup_reap(manager: BrowserSessionManager) -> None:
    """Count the start-up sweep's decisions (zeros when it did not run, so the series exist).

    The report is orphan_reaper's ReapReport; read by attribute so a missing or older
    reaper costs only these counters.
    """
    report = manager.startup_reap
    outcomes = {
        "killed": len(getattr(report, "killed", ())),
        "spared": len(getattr(report, "spared", ())),
        "removed": len(getattr(report, "removed", ())),
        "error": len(getattr(report, "errors", ())),
    }
    for outcome, count in outcomes.items():
        manager.metrics.inc("browser_tool_reaper_total", count, outcome=outcome)
    manager.metrics.inc("browser_tool_kills_total", outcomes["killed"], reason="reaper")
