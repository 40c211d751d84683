"""The CLI's profile and storage-state commands (issue 21) without a browser: bad state
files, an unreachable service, the profile line, the 0600 file (their help and usage errors
are in test_cli.py's tables).

Charter: as test_cli.py, `main()` in-process with its output read from capsys; nothing here
starts Chrome or a service (those tests are in test_cli_profiles_chrome.py).
"""

from __future__ import annotations

import io
import socket
import stat
from pathlib import Path

import pytest

from browser_tool import InvalidInputError
from browser_tool.cli._main import main
from browser_tool.cli._profiles import format_profile, read_state, write_private
from browser_tool.conversations import ProfileInfo


@pytest.mark.parametrize(
    ("text", "message"),
    [("{not json", "is not valid JSON"), ("[1]", "must hold a JSON object")],
)
def test_a_bad_state_file_exits_2_before_any_request(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state.json"
    state.write_text(text)
    # The URL is unreachable: a request would exit 1, so exit 2 shows none was made.
    argv = ["storage-state", "put", "c1", str(state), "--url", f"http://127.0.0.1:{_port()}"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("browser-tool: Invalid input 'FILE': ")
    assert message in err
    assert err.count("\n") == 1


def test_a_state_is_read_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('{"cookies": [], "origins": []}'))
    assert read_state("-") == {"cookies": [], "origins": []}
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(InvalidInputError, match="- is not valid JSON"):
        read_state("-")


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    "argv",
    [
        ["profiles"],
        ["profiles", "delete", "work"],
        ["bind", "c1", "work"],
        ["storage-state", "get", "c1"],
        ["call", "c1", "browser_eval", "{}", "--profile", "work"],
    ],
)
def test_an_unreachable_service_exits_1(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_port()}"
    assert main([*argv, "--url", url]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"browser-tool: cannot reach the service at {url}/v1/")
    assert err.count("\n") == 1


def test_the_url_given_before_a_nested_action_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{_port()}"
    assert main(["profiles", "--url", url, "delete", "work"]) == 1
    assert f"cannot reach the service at {url}/v1/profiles/work" in capsys.readouterr().err


def test_the_profile_line() -> None:
    info = ProfileInfo("work", "task-42", 3 * 2**20 + 2**19, 1795458237.7)
    assert format_profile(info) == (
        "work in_use held_by=task-42 size=3.5MB modified=2026-11-23T18:23:57Z"
    )
    other = ProfileInfo("home", "instance 3f2a", 0, 0.0)
    assert format_profile(other) == (
        'home in_use held_by="instance 3f2a" size=0.0MB modified=1970-01-01T00:00:00Z'
    )
    free = ProfileInfo("spare", None, 2**20, 0.0)
    assert format_profile(free).startswith("spare free size=1.0MB ")


def test_a_state_file_is_written_0600_even_over_a_readable_one(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old, longer than the new text")
    target.chmod(0o644)
    write_private(target, "{}\n")
    assert target.read_text() == "{}\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    fresh = tmp_path / "fresh.json"
    write_private(fresh, "{}\n")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    with pytest.raises(InvalidInputError, match=r"'--output': cannot write .*No such file"):
        write_private(tmp_path / "missing" / "state.json", "{}")
