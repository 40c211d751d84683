"""The `browser-tool` CLI with real Chromium: one in-process call with full cleanup, and the
client commands (`call --url`, `sessions`, `kill`) against a served instance.

Charter: `main()` runs in-process (in a worker thread when a trio test holds the loop) and its
output is read from capsys; the service is a real subprocess (see tests/support/service.py); the
state_dir fixture fails the test if a browser, the service or a file outlives it.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
import trio

from browser_tool.cli._main import main
from chrome_launcher import live_group_members
from tests.support.service import running_service

pytestmark = pytest.mark.chrome


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BROWSER_TOOL_TOKEN", raising=False)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.mark.usefixtures("cli_env")
def test_call_in_process_prints_the_result_and_leaves_nothing(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = ("--state-dir", str(state_dir))
    code, out = run_cli(capsys, "call", "c1", "browser_eval", '{"expression": "6*7"}', *state)
    assert code == 0
    assert json.loads(out) == {
        "output": "<javascript_result>42</javascript_result>",
        "is_error": False,
        "images": [],
    }
    code, out = run_cli(capsys, "call", "c1", "browser_eval", '{"expression": "nope()"}', *state)
    assert code == 0  # a failed tool call is a result, not a CLI failure
    assert json.loads(out)["is_error"] is True

    code, out = run_cli(capsys, "call", "c1", "browser_take_screenshot", *state)
    result = json.loads(out)
    [image] = result["images"]
    assert set(image) == {"media_type", "path"}  # paths only by default
    # The one-shot call removed the conversation's files, and says so.
    assert not Path(image["path"]).exists()
    assert result["removed_files"] == [image["path"]]
    assert "--keep-files" in result["note"]
    code, out = run_cli(capsys, "call", "c1", "browser_take_screenshot", "--with-images", *state)
    [image] = json.loads(out)["images"]
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG")
    assert list((state_dir / "sessions").iterdir()) == []
    assert list((state_dir / "pids").iterdir()) == []


@pytest.mark.usefixtures("cli_env")
def test_call_in_process_keeps_the_files_it_names_when_asked(
    state_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = ("--state-dir", str(state_dir))
    keep = tmp_path / "kept"
    argv = ("call", "c1", "browser_eval", '{"expression": "\'x\'.repeat(5000)"}', *state)
    code, out = run_cli(capsys, *argv, "--keep-files", str(keep))
    assert code == 0
    result = json.loads(out)
    assert "removed_files" not in result
    match = re.search(r"saved to (\S+)", result["output"])
    assert match, result
    saved = Path(match[1])
    assert saved.parent == keep.resolve()
    assert saved.read_text() == json.dumps("x" * 5000)
    code, out = run_cli(
        capsys, "call", "c1", "browser_take_screenshot", *state, "--keep-files", str(keep)
    )
    assert code == 0
    [image] = json.loads(out)["images"]
    assert Path(image["path"]).parent == keep.resolve()
    assert Path(image["path"]).read_bytes().startswith(b"\x89PNG")
    assert image["path"] in json.loads(out)["output"]
    assert list((state_dir / "sessions").iterdir()) == []


@pytest.mark.usefixtures("cli_env")
async def test_client_commands_against_a_running_service(
    state_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_service(state_dir) as service:
        url = ("--url", service.url)

        async def cli(*argv: str) -> tuple[int, str]:
            return await trio.to_thread.run_sync(run_cli, capsys, *argv)

        code, out = await cli("sessions", *url)
        assert (code, out) == (0, "")

        code, out = await cli("call", "conv-1", "browser_eval", '{"expression": "1+1"}', *url)
        assert code == 0
        assert json.loads(out)["output"] == "<javascript_result>2</javascript_result>"
        code, out = await cli("call", "conv-1", "browser_take_screenshot", *url)
        assert set(json.loads(out)["images"][0]) == {"media_type", "path"}
        assert await trio.Path(
            json.loads(out)["images"][0]["path"]
        ).is_file()  # the service keeps it

        code, out = await cli("sessions", *url)
        [line] = out.splitlines()
        assert line.startswith("conv-1 ready pid=")
        assert line.endswith(" calls=2")
        pid = int(line.split("pid=")[1].split()[0])

        code, out = await cli("sessions", "--json", *url)
        assert json.loads(out)["sessions"][0]["pid"] == pid

        code, out = await cli("kill", "conv-1", *url)
        assert code == 0
        assert json.loads(out)["browser_killed"] is True
        assert live_group_members(pid) == []
        code, out = await cli("kill", "conv-1", *url)
        assert json.loads(out)["existed"] is False

        code, _ = await cli("call", "conv-1", "browser_fly", "{}", *url)
        assert code == 2
