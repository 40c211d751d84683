"""A persistent profile (issue 21) with real Chrome: it outlives the Chrome on it, the stale
marks of a dead Chrome are removed before a launch, and a launch on a profile some live process
runs on is refused (naming it) instead of sharing it. Each test removes its profile dir."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import trio

from chrome_launcher import (
    LaunchError,
    LaunchOptions,
    PidRecord,
    launch_chrome,
    prepare_persistent_profile,
    processes_on_profile,
    read_records,
)

pytestmark = pytest.mark.chrome


def options(state_dir: Path, chrome_path: str, name: str, profile: Path) -> LaunchOptions:
    return LaunchOptions(
        state_dir=state_dir,
        instance_id="test-1",
        session_dir=state_dir / "sessions" / name,
        chrome_path=chrome_path,
        profile_dir=profile,
    )


async def test_a_profile_outlives_its_chrome_and_stale_marks_do_not_block_the_next(
    state_dir: Path, chrome_path: str
) -> None:
    profile = state_dir / "profiles" / "p"
    profile.mkdir(parents=True)
    # What a Chrome killed on another host, or killed unawares, leaves: Chromium refuses a
    # profile whose SingletonLock names another host ("in use by another computer"), and a
    # DevToolsActivePort naming a port nobody listens on would mislead the launcher.
    os.symlink("elsewhere-4242", profile / "SingletonLock")
    os.symlink("/nonexistent/SingletonSocket", profile / "SingletonSocket")
    (profile / "DevToolsActivePort").write_text("1\n/devtools/browser/stale\n")
    async with trio.open_nursery() as nursery:
        chrome = await launch_chrome(options(state_dir, chrome_path, "s1", profile), nursery)
        try:
            assert chrome.profile_dir == profile
            assert chrome.record.user_data_dir == str(profile)
            [entry] = read_records(state_dir / "pids")
            assert entry.record is not None
            assert entry.record.profile_dir == str(profile)
            assert chrome.pid in processes_on_profile(profile)  # (Chromium: its zygotes too)
            assert ":1/" not in (chrome.ws_url or "")
            with pytest.raises(
                LaunchError, match=f"in use by a running process \\(pid {chrome.pid}"
            ):
                await launch_chrome(options(state_dir, chrome_path, "s2", profile), nursery)
        finally:
            report = await chrome.aclose()
        assert report.clean
    assert not chrome.browser_dir.exists()  # its own dir goes with it
    assert (profile / "Default").is_dir()  # the profile stays
    assert processes_on_profile(profile) == []
    assert not (state_dir / "sessions" / "s2").exists()  # the refused launch made nothing
    shutil.rmtree(state_dir / "profiles")
    shutil.rmtree(state_dir / "sessions" / "s1")  # the owner's dir: its owner removes it


def test_preparing_removes_only_the_stale_marks(state_dir: Path) -> None:
    profile = state_dir / "profiles" / "q"
    (profile / "Default").mkdir(parents=True)
    os.symlink("host-1", profile / "SingletonLock")
    os.symlink("12345", profile / "SingletonCookie")
    (profile / "Default" / "Cookies").write_text("kept")
    assert prepare_persistent_profile(profile) == ["SingletonLock", "SingletonCookie"]
    assert sorted(os.listdir(profile)) == ["Default"]
    assert (profile / "Default" / "Cookies").read_text() == "kept"
    assert prepare_persistent_profile(profile) == []
    shutil.rmtree(state_dir)


def test_records_without_a_persistent_profile_still_parse() -> None:
    old = PidRecord(1, 1, 2, "b", 0, "i", "/c", "/r/sessions/s/chrome-a", "/r/tmp/a", "/r/s", 0.0)
    text = old.to_json().replace(', "user_data_dir": ""', "")
    assert "user_data_dir" not in text
    parsed = PidRecord.from_json(text)
    assert parsed.profile_dir == "/r/sessions/s/chrome-a/profile"
