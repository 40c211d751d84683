"""The CLI's profile and storage-state commands (issue 21) on real Chrome: against a running
service, and the one-shot `call --profile` in this process.

Each test runs on its own state root and deletes the profile it made (the conftest check fails
a test that leaves a file or a process behind).
"""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest
import trio

from browser_tool.cli._main import main
from fixtures_site import FixtureServer
from tests.support.service import running_service

pytestmark = pytest.mark.chrome


@pytest.fixture(autouse=True)
def cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BROWSER_TOOL_TOKEN", raising=False)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def title_of(out: str) -> str:
    output = json.loads(out)
    assert not output["is_error"], output
    text = str(output["output"]).removeprefix("<javascript_result>")
    title = json.loads(text.split("</javascript_result>")[0])
    assert isinstance(title, str)
    return title


def assert_one_line_error(err: str, *words: str) -> None:
    assert err.startswith("browser-tool: ")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err


async def test_profiles_bind_and_storage_state_against_a_service(
    state_dir: Path, tmp_path: Path, site: FixtureServer, capsys: pytest.CaptureFixture[str]
) -> None:
    title = '{"expression": "document.title"}'
    async with running_service(state_dir) as service:
        url = ("--url", service.url)

        async def cli(*argv: str) -> tuple[int, str, str]:
            with_url: tuple[str, ...] = (*argv, *url)
            return await trio.to_thread.run_sync(run_cli, capsys, *with_url)

        assert await cli("profiles") == (0, "", "no profiles\n")
        assert await cli("bind", "a", "work") == (0, "a bound to profile work\n", "")
        assert (await cli("bind", "a", "work"))[0] == 0  # the same binding: a no-op
        code, out, err = await cli("bind", "b", "work")
        assert (code, out) == (1, "")
        assert_one_line_error(err, "409", "conversation 'a'")

        signin = json.dumps({"url": site.url_for("signin.html?user=ada")})
        code, out, _ = await cli("call", "a", "browser_navigate", signin)
        assert code == 0, out
        assert title_of((await cli("call", "a", "browser_eval", title))[1]) == "Signed in as ada"
        code, out, _ = await cli("profiles")
        [line] = out.splitlines()
        assert line.startswith("work in_use held_by=a size=")
        [row] = json.loads((await cli("profiles", "--json"))[1])["profiles"]
        assert (row["name"], row["held_by"], row["in_use"]) == ("work", "a", True)
        code, _, err = await cli("profiles", "delete", "work")
        assert code == 1
        assert_one_line_error(err, "409", "in use by conversation 'a'")
        # A one-shot call in this process, on the service's state dir: refused, one line.
        one_shot = ("call", "z", "browser_eval", title, "--profile", "work")
        code, out, err = await trio.to_thread.run_sync(
            run_cli, capsys, *one_shot, "--state-dir", str(state_dir)
        )
        assert (code, out) == (1, "")
        assert_one_line_error(err, "work", "in use")
        assert title_of((await cli("call", "a", "browser_eval", title))[1]) == "Signed in as ada"

        saved = tmp_path / "state.json"
        code, out, _ = await cli("storage-state", "get", "a", "--output", str(saved))
        assert code == 0
        assert out.startswith(f"wrote {saved} (mode 0600): 1 cookies, 1 origins")
        assert stat.S_IMODE(saved.stat().st_mode) == 0o600
        state = json.loads(saved.read_text())
        assert [c["name"] for c in state["cookies"]] == ["signed_in"]
        code, out, _ = await cli("storage-state", "get", "a")
        assert json.loads(out) == state
        # Without a browser and nothing loaded: refused, one line.
        code, _, err = await cli("storage-state", "get", "c")
        assert code == 1
        assert_one_line_error(err, "409")

        # Load it into a conversation without a browser (pending), then one with (applied).
        code, out, _ = await cli("storage-state", "put", "c", str(saved))
        assert (code, out) == (
            0,
            "c storage state pending (loaded into the browser its next call starts)\n",
        )
        home = json.dumps({"url": site.url_for("signin.html")})
        assert (await cli("call", "c", "browser_navigate", home))[0] == 0
        assert title_of((await cli("call", "c", "browser_eval", title))[1]) == "Signed in as ada"
        code, out, _ = await cli("storage-state", "put", "c", str(saved), "--json")
        assert json.loads(out) == {"conversation_id": "c", "loaded": "applied"}

        for conversation in ("a", "c"):
            assert (await cli("kill", conversation))[0] == 0
        assert await cli("profiles", "delete", "work") == (0, "deleted profile work\n", "")
        assert await cli("profiles", "delete", "work") == (
            0,
            "no profile work (nothing deleted)\n",
            "",
        )


def test_call_in_process_on_a_profile_keeps_the_sign_in(
    state_dir: Path, site: FixtureServer, capsys: pytest.CaptureFixture[str]
) -> None:
    state = ("--state-dir", str(state_dir), "--profile", "work")
    signin = json.dumps({"url": site.url_for("signin.html?user=ada")})
    code, out, _ = run_cli(capsys, "call", "c1", "browser_navigate", signin, *state)
    assert code == 0, out
    assert not json.loads(out)["is_error"]
    # Another one-shot call, another conversation, the same profile: still signed in (a new
    # tab's listing shows its title).
    tab = json.dumps({"action": "new", "url": site.url_for("signin.html")})
    code, out, _ = run_cli(capsys, "call", "c2", "browser_tabs", tab, *state)
    assert code == 0
    assert "Signed in as ada" in json.loads(out)["output"]
    # Without the profile, a one-shot call starts empty.
    code, out, _ = run_cli(capsys, "call", "c3", "browser_tabs", tab, *state[:2])
    assert "Signed out" in json.loads(out)["output"]
    assert list((state_dir / "sessions").iterdir()) == []
    assert (state_dir / "profiles" / "work").is_dir()
    shutil.rmtree(state_dir / "profiles")  # nothing runs on it: the one-shot call killed it


def test_call_in_process_on_a_profile_in_context_mode_says_why_not(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BROWSER_TOOL_ISOLATION", "context")
    argv = ("call", "c1", "browser_eval", "{}", "--profile", "work", "--state-dir", str(state_dir))
    code, out, err = run_cli(capsys, *argv)
    assert (code, out) == (1, "")
    assert_one_line_error(err, "process mode only", "storage state")
    assert not (state_dir / "profiles").exists()
