"""What /metrics shows: the manager's counters and histogram (the start-up orphan sweep's
decisions among them: the manager counts those, once), plus gauges computed at scrape time
from the session inventory."""

from __future__ import annotations

from .._metrics import Labels
from ..conversations import SESSION_STATES, BrowserSessionManager


def render_metrics(manager: BrowserSessionManager) -> str:
    """The Prometheus text exposition (0.0.4) of everything the service counts."""
    sessions = manager.list_sessions()
    by_state: dict[Labels, float] = {(("state", state),): 0.0 for state in SESSION_STATES}
    for info in sessions:
        key: Labels = (("state", info.state),)
        by_state[key] = by_state.get(key, 0.0) + 1
    # Issue 21: hand-overs to a person open now, offered (link not opened yet) or held.
    handoffs: dict[Labels, float] = {(("state", "offered"),): 0.0, (("state", "held"),): 0.0}
    for info in sessions:
        if info.handoff is not None:
            handoffs[(("state", info.handoff.state),)] += 1
    gauges: dict[str, dict[Labels, float]] = {
        "browser_tool_human_handoffs": handoffs,
        "browser_tool_sessions": by_state,
        # A shared Chrome appears once per conversation on it: count each group once.
        "browser_tool_sessions_rss_bytes": {
            (): float(sum({info.pid: info.rss_bytes for info in sessions}.values()))
        },
    }
    return manager.metrics.render(gauges)
