"""Shared fixtures. The autouse `state_dir` fails any test that leaves a live process
it started (found by its test-unique tmp path in the process's argv or environment, which every
Chrome and helper we start carries) or a file under its state root."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from browser_tool import BrowserSessionManager, open_session_manager
from chrome_launcher import CHROMIUM, HEADLESS_SHELL, cmdline
from fixtures_site import FixtureServer, running_fixtures
from tests.support.checks import leftover_files, live_processes_mentioning, make_settings


@pytest.fixture(autouse=True)
def state_dir() -> Iterator[Path]:
    """A state root of this test's own, so nothing here can touch another's processes.

    Short on purpose (/tmp/bt-XXXXXXXX): real deployments have short roots too, and the check
    after the test finds this test's processes by this path in their argv or environment.
    After the test: no live process may mention it and no file may be left under it.
    """
    root = Path(tempfile.mkdtemp(prefix="bt-", dir="/tmp"))
    try:
        yield root / "state"
        _check_nothing_left(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _check_nothing_left(root: Path) -> None:
    leaked = live_processes_mentioning(str(root))
    for pid in leaked:
        # Clean up so one leak does not cascade into other tests; then fail this one.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL) if os.getpgid(pid) == pid else os.kill(
                pid, signal.SIGKILL
            )
    details = [f"{pid}: {' '.join((cmdline(pid) or ['?'])[:3])}" for pid in leaked]
    assert not leaked, f"test left live processes behind: {details}"
    files = leftover_files(root / "state")
    shown = [str(f) for f in files[:10]] + (
        [f"... and {len(files) - 10} more"] if len(files) > 10 else []
    )
    assert not files, f"test left files under its state root: {shown}"


@pytest.fixture(params=[HEADLESS_SHELL, CHROMIUM], ids=["headless-shell", "chromium"])
def chrome_path(request: pytest.FixtureRequest) -> str:
    """Each real Chrome binary in turn. Missing Chrome fails the test: it never skips."""
    path = str(request.param)
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"{path} is missing: run `make test` as root, or apt-get install "
            "chromium-headless-shell chromium"
        )
    return path


@pytest.fixture
def headless_shell() -> str:
    """Debian's headless shell, the default binary. Missing fails the test; it never skips."""
    if not os.access(HEADLESS_SHELL, os.X_OK):
        pytest.fail(f"{HEADLESS_SHELL} is missing: apt-get install chromium-headless-shell")
    return HEADLESS_SHELL


@pytest.fixture(scope="session")
def site() -> Iterator[FixtureServer]:
    """The local fixture pages (127.0.0.1, port 0), shared by the whole run."""
    with running_fixtures() as server:
        yield server


@pytest.fixture
async def manager(state_dir: Path, headless_shell: str) -> AsyncIterator[BrowserSessionManager]:
    """A session manager on the test's state root, closed (every Chrome killed) after the test."""
    async with open_session_manager(make_settings(state_dir)) as m:
        yield m


NGINX = "/usr/sbin/nginx"


@pytest.fixture
def nginx_binary() -> str:
    """Debian's nginx, for the multi-host test. Missing fails the test; it never skips."""
    if not os.access(NGINX, os.X_OK):
        pytest.fail(f"{NGINX} is missing: run `make test` as root, or apt-get install nginx")
    return NGINX


# Fixtures that start a real Chrome (or nginx): a test using one must carry the `chrome` (or
# `nginx`) marker (CI runs them all; the marker says which tests need what installed).
CHROME_FIXTURES = frozenset({"headless_shell", "chrome_path", "manager"})
MARKED_FIXTURES = {"chrome": CHROME_FIXTURES, "nginx": frozenset({"nginx_binary"})}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for marker, fixtures in MARKED_FIXTURES.items():
        unmarked = [
            item.nodeid
            for item in items
            if fixtures & set(getattr(item, "fixturenames", ()))
            and item.get_closest_marker(marker) is None
        ]
        if unmarked:
            raise pytest.UsageError(
                f"tests that need {marker} must carry @pytest.mark.{marker}: " + ", ".join(unmarked)
            )
