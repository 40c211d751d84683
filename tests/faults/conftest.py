"""The fault suite: hostile pages, crashes, freezes, bad input, a soak and the security edges,
all on real Chromium (each test carries the `chrome` marker) except the pure fuzzing.

Charter: no network but loopback (hostile pages are data: URLs or the local fixture site);
every process we signal is ours, found by its pid or group from the session inventory;
readiness from events or answers, never from sleeps; timing figures are printed for the note,
never asserted beyond "well before the call's own deadline". The autouse `state_dir` fixture
fails any test that leaves a process or a file behind.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from browser_tool import BrowserSessionManager, open_session_manager
from tests.faults.pages import JS_HEAP_MB
from tests.support.checks import make_settings

# No example database (nothing written into the work tree); no per-example deadline (the
# service's answer times vary on a loaded 2-core machine); the autouse state_dir fixture is
# function-scoped, which is harmless here (it only makes and checks a directory).
settings.register_profile(
    "faults",
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("faults")


@pytest.fixture
async def fault_manager(
    state_dir: Path, headless_shell: str
) -> AsyncIterator[BrowserSessionManager]:
    """A manager whose pages have a capped JS heap (see pages.JS_HEAP_MB)."""
    async with open_session_manager(make_settings(state_dir, js_heap_mb=JS_HEAP_MB)) as m:
        yield m
