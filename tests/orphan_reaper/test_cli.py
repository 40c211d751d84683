"""The `orphan-reaper` command, run as `python -m orphan_reaper` in a subprocess: help, usage
errors (status 2), JSON and human output, the state dir from the flag or the environment, and a
real orphan killed from the command line. Every run gets an explicit state dir (flag or env):
no test may sweep the machine's default state root. Status 1 (a survivor) cannot be produced
with real processes here, since SIGKILL always works for root, so it is checked in process."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import trio

import orphan_reaper._reap
from chrome_launcher import StateLayout, live_group_members
from orphan_reaper import KillEntry, ReapReport
from orphan_reaper._cli import main
from tests.support.checks import leftover_files
from tests.support.plant_orphans import killed_after, plant, plant_stale_record


async def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    base = {k: v for k, v in os.environ.items() if k != "BROWSER_TOOL_STATE_DIR"}
    result = await trio.run_process(
        [sys.executable, "-m", "orphan_reaper", *args],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env={**base, **(env or {})},
    )
    return result.returncode, result.stdout.decode(), result.stderr.decode()


async def test_help_states_the_rule(state_dir: Path) -> None:
    rc, out, _ = await run_cli("--help")
    assert rc == 0
    text = " ".join(out.split())
    assert "Kill the Chrome process groups that dead browser-tool instances left behind" in text
    assert "only when it runs as your uid" in text
    for flag in ("--state-dir", "--dry-run", "--json", "--grace"):
        assert flag in text


@pytest.mark.parametrize(
    "args",
    [["--bogus"], ["--grace", "soon"], ["--grace", "-1"], ["--grace", "nan"], ["extra"]],
    ids=["unknown-flag", "grace-not-a-number", "grace-negative", "grace-nan", "positional"],
)
async def test_usage_errors_exit_2(state_dir: Path, args: list[str]) -> None:
    rc, out, err = await run_cli("--state-dir", str(state_dir), *args)
    assert rc == 2
    assert out == ""
    assert "usage: orphan-reaper" in err
    assert not await trio.Path(state_dir).exists()


async def test_json_for_a_missing_state_dir_is_an_empty_sweep(state_dir: Path) -> None:
    rc, out, _ = await run_cli("--state-dir", str(state_dir), "--json")
    assert rc == 0
    report = json.loads(out)
    assert report["state_dir"] == str(state_dir)
    assert (report["killed"], report["removed"], report["errors"]) == ([], [], [])
    assert report["exit_code"] == 0
    assert not await trio.Path(state_dir).exists()


async def test_the_state_dir_comes_from_the_environment(state_dir: Path) -> None:
    layout = StateLayout(state_dir).create()
    record = plant_stale_record(layout, "e0e0")
    rc, out, _ = await run_cli("--json", env={"BROWSER_TOOL_STATE_DIR": str(state_dir)})
    assert rc == 0
    report = json.loads(out)
    assert report["state_dir"] == str(state_dir)
    assert {"what": "record", "path": str(record)} in [
        {"what": r["what"], "path": r["path"]} for r in report["removed"]
    ]
    assert leftover_files(state_dir) == []


@pytest.mark.chrome
async def test_a_dry_run_then_a_real_run_from_the_command_line(
    state_dir: Path, headless_shell: str
) -> None:
    [pid] = (await plant(state_dir, "dead-1", 1, headless_shell)).pids
    async with killed_after([pid]):
        rc, out, _ = await run_cli("--state-dir", str(state_dir), "--dry-run")

        assert rc == 0
        lines = out.splitlines()
        assert lines[0].startswith(f"would kill pid {pid} pgid {pid} (recorded Chrome")
        assert lines[-1].startswith("totals: would kill 1 (0 survived)")
        assert lines[-1].endswith("(dry run: nothing changed)")
        assert live_group_members(pid)

        rc, out, _ = await run_cli("--state-dir", str(state_dir), "--json", "--grace", "1")

        assert rc == 0
        report = json.loads(out)
        assert [(k["pid"], k["gone"], k["done"]) for k in report["killed"]] == [(pid, True, True)]
        assert live_group_members(pid) == []
        assert leftover_files(state_dir) == []


def test_an_orphan_that_survives_makes_the_command_exit_1(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    survivor = KillEntry(7, 7, 1, "dead-1", "recorded", None, True, False, "sigkill; 1 survived")

    def fake_sweep(path: object, **_: object) -> ReapReport:
        return ReapReport(str(path), False, killed=(survivor,))

    monkeypatch.setattr(orphan_reaper._reap, "reap_orphans_sync", fake_sweep)
    assert main(["--state-dir", str(state_dir)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("SURVIVED   pid 7 pgid 7")
    assert "(1 survived)" in out
