"""Pure parts of chrome_launcher: argv, endpoint parsing, PID records, /proc parsing, the
instance lock and binary lookup. Synchronous; no Chrome is started here."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chrome_launcher import (
    MARKER_SWITCH,
    ArgvSpec,
    ChromeBinary,
    ChromeNotFoundError,
    InstanceLock,
    InstanceLockError,
    PidRecord,
    StateLayout,
    build_argv,
    find_chrome,
    instance_is_alive,
    marker_instance,
    parse_active_port_file,
    parse_listening_line,
    read_records,
    user_data_dir,
    write_record,
)
from chrome_launcher._procfs import parse_stat, read_stat


def _spec(headless_shell: bool = True, sandbox: bool = False) -> ArgvSpec:
    binary = ChromeBinary("/opt/chrome/chrome", headless_shell=headless_shell)
    return ArgvSpec(binary, profile_dir="/s/profile", instance_id="i-1", sandbox=sandbox)


def test_argv_has_the_flags_the_design_requires() -> None:
    argv = build_argv(_spec())
    assert argv[0] == "/opt/chrome/chrome"
    assert argv[-1] == "about:blank"
    for flag in (
        "--remote-debugging-port=0",
        "--remote-debugging-pipe",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--disable-component-update",
        "--no-sandbox",
        "--window-size=1280,720",
    ):
        assert flag in argv
    assert not any(
        a.startswith(("--remote-allow-origins", "--remote-debugging-address")) for a in argv
    )
    assert "--headless=new" not in argv
    # Made screenshots fail intermittently on headless shell 156 (docs/decisions.md).
    assert not any("CDPScreenshotNewSurface" in a for a in argv)
    assert marker_instance(argv) == "i-1"
    assert user_data_dir(argv) == "/s/profile"


def test_full_chromium_gets_headless_new_and_sandbox_is_kept_when_asked() -> None:
    argv = build_argv(_spec(headless_shell=False, sandbox=True))
    assert argv[1] == "--headless=new"
    assert "--no-sandbox" not in argv


def test_marker_absent() -> None:
    assert marker_instance(["chrome", "--remote-debugging-port=0"]) is None
    assert MARKER_SWITCH.startswith("--")


@pytest.mark.parametrize(
    ("line", "url"),
    [
        (
            "DevTools listening on ws://127.0.0.1:4242/devtools/browser/ab-cd",
            "ws://127.0.0.1:4242/devtools/browser/ab-cd",
        ),
        ("[1122/020930.417275:ERROR:dbus/bus.cc:405] Failed to connect to the bus", None),
        ("", None),
    ],
)
def test_listening_line(line: str, url: str | None) -> None:
    assert parse_listening_line(line) == url


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("4242\n/devtools/browser/ab\n", "ws://127.0.0.1:4242/devtools/browser/ab"),
        ("4242\n", None),  # half-written
        ("", None),
        ("abc\n/devtools/browser/x", None),
        ("70000\n/devtools/browser/x", None),
    ],
)
def test_active_port_file(text: str, url: str | None) -> None:
    assert parse_active_port_file(text) == url


def _record(**changes: object) -> PidRecord:
    base = {
        "pid": 10,
        "pgid": 10,
        "start_time": 99,
        "boot_id": "b",
        "uid": 0,
        "instance_id": "i",
        "chrome_path": "/c",
        "browser_dir": "/s/chrome-1",
        "tmp_dir": "/t/1",
        "session_dir": "/s",
        "created_at": 1.5,
    }
    base.update(changes)
    return PidRecord(**base)  # type: ignore[arg-type]


def test_record_round_trip_and_atomic_write(tmp_path: Path) -> None:
    record = _record()
    path = write_record(tmp_path, record)
    assert path.name == "10-99.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert [e.record for e in read_records(tmp_path)] == [record]
    assert record.profile_dir == "/s/chrome-1/profile"
    assert not list(tmp_path.glob(".*"))


@pytest.mark.parametrize(
    "text",
    [
        '{"pid": 1',
        "[]",
        json.dumps({**json.loads(_record().to_json()), "extra": 1}),
        json.dumps({**json.loads(_record().to_json()), "pid": "1"}),
        "\x00\x01",
    ],
    ids=["torn", "not-object", "unknown-field", "wrong-type", "garbage"],
)
def test_bad_records_are_reported_not_raised(tmp_path: Path, text: str) -> None:
    (tmp_path / "1-1.json").write_text(text)
    [entry] = read_records(tmp_path)
    assert entry.record is None
    assert entry.error


def test_missing_registry_is_empty(tmp_path: Path) -> None:
    assert read_records(tmp_path / "nope") == []


def test_parse_stat_handles_odd_command_names() -> None:
    text = "4242 (we ird) name)) S 1 4242 4242 0 -1 4194560 " + " ".join(["0"] * 12) + " 777 0 0"
    stat = parse_stat(4242, text)
    assert (stat.state, stat.ppid, stat.pgid, stat.start_time) == ("S", 1, 4242, 777)
    assert stat.alive


def test_read_stat_of_self_and_of_nothing() -> None:
    me = read_stat(os.getpid())
    assert me is not None
    assert me.alive
    assert me.start_time > 0
    assert read_stat(2**22 + 12345) is None


def test_instance_lock_tells_live_from_dead(state_dir: Path) -> None:
    layout = StateLayout(state_dir)
    lock = InstanceLock.acquire(layout, "inst-1")
    assert instance_is_alive(layout, "inst-1")
    with pytest.raises(InstanceLockError):
        InstanceLock.acquire(layout, "inst-1")
    lock.release()
    lock.release()  # idempotent
    assert not instance_is_alive(layout, "inst-1")
    assert not layout.lock_path("inst-1").exists()
    assert oct(state_dir.stat().st_mode & 0o777) == "0o700"


def test_instance_lock_left_by_a_dead_holder_counts_as_dead(state_dir: Path) -> None:
    layout = StateLayout(state_dir).create()
    layout.lock_path("gone").write_text("123\n")
    assert not instance_is_alive(layout, "gone")
    layout.lock_path("gone").unlink()


def test_bad_instance_id_is_refused(state_dir: Path) -> None:
    with pytest.raises(InstanceLockError, match="letters, digits"):
        InstanceLock.acquire(StateLayout(state_dir), "../evil")


def test_find_chrome_lists_every_path_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BROWSER_TOOL_CHROME", raising=False)
    missing = str(tmp_path / "no-chrome")
    with pytest.raises(ChromeNotFoundError) as info:
        find_chrome(missing)
    assert info.value.tried == (missing,)
    assert missing in str(info.value)
    assert "chromium-headless-shell" in str(info.value)


def test_find_chrome_prefers_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("BROWSER_TOOL_CHROME", str(fake))
    assert find_chrome().path == str(fake)
