"""The `browser-tool` CLI without a browser: help, tool definitions, usage errors and their exit
codes, an unreachable service, and the session line format.

Charter: `main()` is called in-process with an argv and its output read from capsys; nothing
here starts Chrome or a service (the tests with a browser are in test_cli_chrome.py).
"""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from pathlib import Path

import pytest

from browser_tool import SessionInfo, tool_definitions
from browser_tool.cli._client import conversation_url, default_url, format_session
from browser_tool.cli._main import main
from browser_tool.conversations import HandoffInfo


def test_tools_prints_the_definitions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools"]) == 0
    assert json.loads(capsys.readouterr().out) == {"tools": tool_definitions()}


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ([], ["serve", "mcp", "call", "tools", "sessions", "kill", "Exit codes"]),
        (["serve"], ["--host", "--port", "--state-dir", "listening on", "SIGTERM"]),
        (["mcp"], ["--http", "--conversation-id", "/mcp", "stdin"]),
        (["call"], ["--url", "--with-images", "--state-dir", "removed before exit"]),
        (["tools"], ["/v1/tools"]),
        (["sessions"], ["--url", "--json", "BROWSER_TOOL_TOKEN"]),
        (["kill"], ["--url", "Idempotent"]),
        # issue 21: profiles and storage state
        ([], ["profiles", "bind", "storage-state", "409"]),
        (["profiles"], ["--url", "--json", "delete NAME", "held_by", "exits 0"]),
        (["profiles", "delete"], ["--url", "--json", "DELETE /v1/profiles/NAME"]),
        (["bind"], ["PUT /v1/conversations/ID", "before", "no-op", "409", "--json"]),
        (["storage-state"], ["get", "put", "Playwright", "secret"]),
        (["storage-state", "get"], ["--output", "0600", "409"]),
        (["storage-state", "put"], ["FILE", "stdin", "applied", "pending", "--json"]),
        (["call"], ["--profile", "profiles/NAME", "PUT /v1/conversations/ID"]),
    ],
)
def test_every_command_has_help(
    command: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for word in words:
        assert word in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "required"),
        (["fly"], "invalid choice"),
        (["call", "c1"], "required"),
        (["call", "c1", "browser_eval", "{not json"], "not valid JSON"),
        (["call", "c1", "browser_eval", "[1]"], "must be a JSON object"),
        (["call", "bad id", "browser_eval", "{}"], "conversation_id"),
        (["call", "c1", "browser_fly", "{}"], "unknown tool 'browser_fly'"),
        (["kill", "bad/id"], "conversation_id"),
        (["serve", "--port", "eighty"], "invalid int value"),
        (["serve", "--host", "0.0.0.0"], "BROWSER_TOOL_TOKEN"),
        # issue 21: profiles and storage state
        (["storage-state"], "required"),
        (["storage-state", "get"], "required"),
        (["storage-state", "put", "c1"], "required"),
        (["profiles", "rename"], "invalid choice"),
        (["bind", "c1"], "required"),
        (["bind", "c1", "../up"], "Invalid input 'profile'"),
        (["bind", "bad id", "work"], "conversation_id"),
        (["profiles", "delete", ".."], "Invalid input 'profile'"),
        (["storage-state", "get", "bad/id"], "conversation_id"),
        (["storage-state", "put", "c1", "/nonexistent/state.json"], "No such file"),
        (["call", "c1", "browser_eval", "{}", "--profile", "a/b", "--url", "http://x"], "profile"),
        (["call", "c1", "browser_eval", "{}", "--profile", ".hidden"], "profile"),
    ],
)
def test_usage_errors_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_bad_settings_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BROWSER_TOOL_IDLE_TIMEOUT", "soon")
    assert main(["sessions"]) == 2
    assert "BROWSER_TOOL_IDLE_TIMEOUT" in capsys.readouterr().err


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions"],
        ["kill", "c1"],
        ["call", "c1", "browser_eval", '{"expression": "1"}'],
    ],
)
def test_an_unreachable_service_exits_1(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    assert main([*argv, "--url", url]) == 1
    assert f"cannot reach the service at {url}" in capsys.readouterr().err


def test_an_unusable_state_dir_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    argv = ["call", "c1", "browser_eval", '{"expression": "1"}', "--state-dir", str(not_a_dir)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("browser-tool: ")
    assert str(not_a_dir) in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("tool", "output"),
    [
        (
            "browser_get_network_sources",
            "No responses recorded: no browser is running in this conversation.",
        ),
        (
            "browser_get_service_workers",
            "No browser is running in this conversation, so no page and no service worker. "
            "Navigate to a page first.",
        ),
    ],
)
def test_a_call_that_needs_no_browser_runs_in_process(
    state_dir: Path, capsys: pytest.CaptureFixture[str], tool: str, output: str
) -> None:
    assert main(["call", "c1", tool, "{}", "--state-dir", str(state_dir)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result == {"output": output, "is_error": False, "images": []}


def test_session_line_format() -> None:
    info = SessionInfo(
        conversation_id="conv-1",
        pid=4242,
        state="ready",
        age_s=47.23,
        idle_s=47.2,
        idle_left_s=1752.81,
        calls=12,
        last_error=None,
        rss_bytes=71 * 2**20,
    )
    assert (
        format_session(info)
        == "conv-1 ready pid=4242 age=47.2s idle_left=1752.8s rss=71MB calls=12"
    )
    failed = SessionInfo(**(info.to_json() | {"pid": None, "last_error": 'Timeout "x"'}))
    assert format_session(failed).endswith('calls=12 last_error="Timeout \\"x\\""')
    assert " pid=- " in format_session(failed)
    held = replace(info, handoff=HandoffInfo("Sign in", "held", 5.0, 3.0, 595.0))  # issue 21
    assert format_session(held).endswith('calls=12 handoff=held reason="Sign in"')
    bound = replace(held, profile="work")
    assert format_session(bound).endswith('calls=12 profile=work handoff=held reason="Sign in"')


def test_client_urls() -> None:
    assert default_url("127.0.0.1", 8765) == "http://127.0.0.1:8765"
    assert default_url("0.0.0.0", 9000) == "http://127.0.0.1:9000"
    assert default_url("::1", 9000) == "http://[::1]:9000"
    assert conversation_url("http://h", "..") == "http://h/v1/conversations/%2E%2E"
    assert conversation_url("http://h", "a:b") == "http://h/v1/conversations/a%3Ab"
