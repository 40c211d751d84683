"""The watchdog's pure parts (issue 22): the CPU window arithmetic, the /proc reader of process
groups, and its settings. The guards themselves run against real Chromium in
test_watchdog_real.py."""

from __future__ import annotations

import collections
import os

import pytest

from browser_tool import InvalidInputError, Settings
from browser_tool.conversations._watchdog import cpu_over_window
from chrome_launcher import group_pss_bytes, group_usage


def test_cpu_is_averaged_over_a_whole_window_only() -> None:
    samples: collections.deque[tuple[float, float]] = collections.deque()
    samples.append((0.0, 10.0))
    assert cpu_over_window(samples, 0.0, 60.0) is None
    samples.append((30.0, 25.0))
    assert cpu_over_window(samples, 30.0, 60.0) is None  # half a window seen
    samples.append((60.0, 40.0))
    assert cpu_over_window(samples, 60.0, 60.0) == pytest.approx(0.5)  # 30 s of CPU in 60 s
    samples.append((90.0, 40.0))  # idle from 60 on: the window starts at 30 now
    assert cpu_over_window(samples, 90.0, 60.0) == pytest.approx(15.0 / 60.0)
    assert samples[0] == (30.0, 25.0)  # the sample before it was dropped
    samples.append((150.0, 40.0))
    assert cpu_over_window(samples, 150.0, 60.0) == pytest.approx(0.0)
    assert len(samples) == 2


def test_group_usage_reads_this_process_group_in_one_walk() -> None:
    pgid = os.getpgid(0)
    usage = group_usage([pgid, 2**22 + 1])  # the second names no group
    assert set(usage) == {pgid}
    mine = usage[pgid]
    assert os.getpid() in mine.members
    assert mine.cpu_seconds > 0
    assert mine.rss_bytes > 0
    assert 0 < group_pss_bytes([os.getpid()]) <= mine.rss_bytes
    assert group_pss_bytes([2**22 + 1]) == 0  # gone: nothing, no error


def test_watchdog_settings_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "BROWSER_TOOL_IDLE_CPU_LIMIT": "0.25",
            "BROWSER_TOOL_IDLE_CPU_WINDOW": "2m",
            "BROWSER_TOOL_MAX_BROWSER_MEMORY": "1024",
            "BROWSER_TOOL_WATCHDOG_INTERVAL": "500ms",
            "BROWSER_TOOL_UNRESPONSIVE_PROBE": "2s",
        }
    )
    assert settings.idle_cpu_limit == 0.25
    assert settings.idle_cpu_window == 120.0
    assert settings.max_browser_memory == 1024
    assert settings.watchdog_interval == 0.5
    assert settings.unresponsive_probe == 2.0
    defaults = Settings()
    assert (defaults.idle_cpu_limit, defaults.idle_cpu_window) == (0.5, 60.0)
    assert defaults.max_browser_memory == 0  # off


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BROWSER_TOOL_IDLE_CPU_LIMIT", "-1"),
        ("BROWSER_TOOL_MAX_BROWSER_MEMORY", "-5"),
        ("BROWSER_TOOL_WATCHDOG_INTERVAL", "0"),
        ("BROWSER_TOOL_IDLE_CPU_WINDOW", "0"),
        ("BROWSER_TOOL_UNRESPONSIVE_PROBE", "0"),
    ],
)
def test_bad_watchdog_settings_are_refused(name: str, value: str) -> None:
    with pytest.raises(InvalidInputError, match=name.removeprefix("BROWSER_TOOL_")):
        Settings.from_env({name: value})
