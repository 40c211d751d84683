"""What /metrics says about the service's own start-up, against a real `browser-tool serve`.

Charter: as in test_http_api.py (loopback, port 0, readiness from the `listening on` line, the
service stopped by its pid). The sweep judges every Chrome of this uid on the host, so what it
finds depends on what else runs (another test's Chrome is spared as foreign); the numbers
/metrics must show are therefore read from the sweep's own `totals:` log line, which is written
before the service listens.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.service import running_service

# The end of `ReapReport.summary_lines()`: "totals: killed K (S survived), spared P, removed R,
# errors E in ...".
_TOTALS = re.compile(
    r"totals: killed (\d+) \(\d+ survived\), spared (\d+), removed (\d+), errors (\d+)"
)


async def test_startup_sweep_is_counted_once_in_metrics(state_dir: Path) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        line = await service.wait_for_log("start-up orphan sweep: totals:")
        metrics = (await client.get("/metrics")).text
    totals = _TOTALS.search(line)
    assert totals is not None, line
    killed, spared, removed, errors = (int(count) for count in totals.groups())
    # The service's own instance lock is always among the spared: the check is never 0 == 0.
    assert spared >= 1
    for outcome, count in (
        ("killed", killed),
        ("spared", spared),
        ("removed", removed),
        ("error", errors),
    ):
        assert f'browser_tool_reaper_total{{outcome="{outcome}"}} {count}\n' in metrics
    reaper_kills = f'browser_tool_kills_total{{reason="reaper"}} {killed}\n'
    assert reaper_kills in metrics or (killed == 0 and 'reason="reaper"' not in metrics)
