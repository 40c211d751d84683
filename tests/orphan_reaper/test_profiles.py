"""The reaper and persistent profiles (issue 21), as pure plans: an orphaned Chrome that ran on
a profile under `<root>/profiles/` is killed (its proof, marker and root, holds as for any
other), and no step ever deletes the profile, whatever a record names. The real sweep on a
profile is in tests/browser_tool/server/test_http_profiles.py (kill -9 of the service)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from chrome_launcher import PidRecord, RecordEntry
from orphan_reaper import Plan, SpareReason
from tests.orphan_reaper.test_plan import ROOT, child, chrome, plan, record, snapshot

PROFILE = f"{ROOT}/profiles/work"


def on_profile(entry: RecordEntry, browser_dir: str | None = None) -> RecordEntry:
    assert entry.record is not None
    rec: PidRecord = dataclasses.replace(
        entry.record,
        user_data_dir=PROFILE,
        browser_dir=browser_dir or entry.record.browser_dir,
    )
    return RecordEntry(Path(ROOT, "pids", rec.file_name), rec)


def every_path(p: Plan) -> list[str]:
    kills = [str(d) for k in p.kills for _, d in k.dirs]
    cleanups = [str(d) for c in p.cleanups for _, d in (*c.dirs, *c.files)]
    return kills + cleanups


def test_a_recorded_orphan_on_a_profile_is_killed_and_its_profile_kept() -> None:
    p = plan(snapshot([chrome(10, profile=PROFILE), child(11, 10)], [on_profile(record(10))]))
    [kill] = p.kills
    assert (kill.pid, kill.what) == (10, "recorded")
    assert [str(d) for _, d in kill.dirs] == [f"{ROOT}/sessions/s1/chrome-t", f"{ROOT}/tmp/t"]
    assert not any(path.startswith(f"{ROOT}/profiles") for path in every_path(p))


def test_an_unrecorded_orphan_on_a_profile_is_killed_and_nothing_deleted() -> None:
    p = plan(snapshot([chrome(10, profile=PROFILE)]))
    [kill] = p.kills
    assert (kill.pid, kill.what, kill.dirs) == (10, "unrecorded", ())


def test_a_live_instances_chrome_on_a_profile_is_spared() -> None:
    p = plan(snapshot([chrome(10, profile=PROFILE, instance="live-1")]), "live-1")
    assert p.kills == ()
    assert [(s.what, s.reason) for s in p.spared] == [("process", SpareReason.OWNER_ALIVE)]


def test_a_record_naming_a_profile_as_its_browser_dir_never_gets_it_deleted() -> None:
    forged = on_profile(record(10), browser_dir=PROFILE)
    for processes in ([], [chrome(10, profile=PROFILE)]):
        p = plan(snapshot(processes, [forged]))
        assert PROFILE not in every_path(p)
        assert any(s.reason is SpareReason.UNSAFE_PATH and s.path == PROFILE for s in p.spared)
