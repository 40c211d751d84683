"""Running a sweep: snapshot and plan in a worker thread, then kill and clean up (or, in a dry
run, only report what would happen).

Kills run concurrently, one kill ladder per group: each ladder is bounded by its own deadlines,
so one stubborn group does not hold up the others. Cleanups run after every kill has finished,
because a session dir may only go once every Chrome inside it is confirmed gone.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import trio

from chrome_launcher import (
    KillReport,
    KillTarget,
    KillTiming,
    StateLayout,
    instance_is_alive,
    kill_ladder,
    remove_tree,
)

from ._plan import plan_sweep
from ._report import ErrorEntry, KillEntry, ReapReport, RemoveEntry, SpareEntry, SpareReason
from ._scan import take_snapshot
from ._steps import CleanupStep, Dirs, KillStep, Plan


def _decide(layout: StateLayout, exclude_instance: str | None) -> Plan:
    snap = take_snapshot(layout)
    return plan_sweep(
        snap,
        is_alive=functools.partial(instance_is_alive, layout),
        exclude_instance=exclude_instance,
    )


async def reap_orphans(
    state_dir: Path | str,
    *,
    dry_run: bool = False,
    grace: float | None = None,
    exclude_instance: str | None = None,
) -> ReapReport:
    """Kill the Chrome process groups of dead instances under `state_dir` and clean up after
    them; return a report of every decision.

    `grace` is the SIGTERM grace period in seconds (default: KillTiming's). `exclude_instance`
    names the calling service's own instance, which is never touched. `dry_run` changes nothing.
    A missing state dir is an empty sweep (it is not created).

    Never raises for bad data (torn records, vanished processes, unreadable dirs): problems are
    report entries. Raises ValueError for a negative or NaN `grace`. On cancellation the sweep stops
    between steps and raises Cancelled; a kill ladder already started still runs to its end
    (each of its steps is bounded), so no group is left half-killed with its record gone.
    """
    if grace is not None and not grace >= 0:  # also rejects NaN
        raise ValueError(f"grace must be >= 0 seconds, not {grace!r}")
    started = time.monotonic()
    layout = StateLayout(Path(state_dir))
    plan = await trio.to_thread.run_sync(_decide, layout, exclude_instance)
    if dry_run:
        return _dry_report(layout, plan, time.monotonic() - started)
    timing = KillTiming() if grace is None else KillTiming(term_grace=grace)
    kills: dict[int, tuple[KillEntry, list[RemoveEntry]]] = {}
    # `_kill` never raises (the ladder and the deletions report instead), so this nursery
    # cannot raise an ExceptionGroup; only Cancelled, once every started kill has finished.
    async with trio.open_nursery() as nursery:
        for step in plan.kills:
            nursery.start_soon(_kill, step, timing, kills)
    ok = {step_id: entry.gone for step_id, (entry, _) in kills.items()}
    removed = [r for step in plan.kills for r in kills[step.id][1]]
    spared, errors = list(plan.spared), list(plan.errors)
    for cleanup in plan.cleanups:
        if any(not ok.get(b, False) for b in cleanup.blocked_by):
            ok[cleanup.id] = False
            detail = "a Chrome or record inside it could not be removed"
            spared.append(
                SpareEntry(cleanup.what, SpareReason.IN_USE, detail, path=_first(cleanup))
            )
            continue
        ok[cleanup.id], done, failed = await trio.to_thread.run_sync(_clean, cleanup)
        removed += done
        errors += failed
    return ReapReport(
        state_dir=str(layout.root),
        dry_run=False,
        killed=tuple(kills[step.id][0] for step in plan.kills),
        spared=tuple(spared),
        removed=tuple(removed),
        errors=tuple(errors),
        duration=time.monotonic() - started,
    )


def reap_orphans_sync(
    state_dir: Path | str,
    *,
    dry_run: bool = False,
    grace: float | None = None,
    exclude_instance: str | None = None,
) -> ReapReport:
    """`reap_orphans` for callers without a trio loop (the CLI). Same errors."""
    return trio.run(
        functools.partial(
            reap_orphans,
            state_dir,
            dry_run=dry_run,
            grace=grace,
            exclude_instance=exclude_instance,
        )
    )


async def _kill(
    step: KillStep,
    timing: KillTiming,
    out: dict[int, tuple[KillEntry, list[RemoveEntry]]],
) -> None:
    # Shielded like the ladder itself: a cancelled sweep must not stop between the kill and
    # the removal of what the record describes (the record goes last, so a crash in between
    # leaves a stale record for the next sweep, never dirs nobody names).
    with trio.CancelScope(shield=True):
        # The ladder could delete the dirs and record itself, but it does so synchronously on
        # the trio thread (about 150 ms per profile here), serialising every concurrent kill
        # and stalling a service that sweeps at start-up. So: kill with the ladder, then
        # delete in a worker thread once the group is confirmed gone.
        target = KillTarget(step.pid, step.pgid, step.start_time, is_child=False)
        report = await kill_ladder(target, timing=timing)  # never raises
        gone = report.survivors == 0
        removed: list[RemoveEntry] = []
        errors = list(report.errors)
        summary = _summary(report)
        if gone:
            files: Dirs = (("record", step.record_path),) if step.record_path else ()
            started = time.monotonic()
            _, removed, failed = await trio.to_thread.run_sync(
                _delete, step.dirs, files, "its Chrome was killed"
            )
            errors += [f"{e.path}: {e.message}" for e in failed]
            summary += f"; files removed in {(time.monotonic() - started) * 1e3:.0f} ms"
    out[step.id] = (
        _kill_entry(step, done=True, gone=gone, summary=summary, errors=tuple(errors)),
        removed,
    )


def _summary(report: KillReport) -> str:
    text = f"{' -> '.join(report.steps)} in {report.duration * 1e3:.0f} ms"
    if report.sigkill_needed:
        text += " (SIGKILL needed)"
    if report.survivors:
        text += f"; {report.survivors} process(es) survived"
    return text


def _first(step: CleanupStep) -> str | None:
    paths = [path for _, path in (*step.dirs, *step.files)]
    return str(paths[0]) if paths else None


def _clean(step: CleanupStep) -> tuple[bool, list[RemoveEntry], list[ErrorEntry]]:
    return _delete(step.dirs, step.files, step.reason)


def _delete(
    dirs: Dirs, files: Dirs, reason: str
) -> tuple[bool, list[RemoveEntry], list[ErrorEntry]]:
    """Delete `dirs`, then `files` if every dir went. Never raises. Paths already gone are
    skipped silently: only what this call removed is reported."""
    removed: list[RemoveEntry] = []
    errors: list[ErrorEntry] = []
    for kind, path in dirs:
        if not os.path.lexists(path):
            continue
        if failures := remove_tree(path):
            errors += [ErrorEntry(kind, failure, str(path)) for failure in failures]
        else:
            removed.append(RemoveEntry(kind, str(path), reason, True))
    if errors:
        return False, removed, errors
    for kind, path in files:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            errors.append(ErrorEntry(kind, f"could not remove: {exc.strerror or exc}", str(path)))
        else:
            removed.append(RemoveEntry(kind, str(path), reason, True))
    return not errors, removed, errors


def _kill_entry(
    step: KillStep, *, done: bool, gone: bool, summary: str, errors: tuple[str, ...] = ()
) -> KillEntry:
    return KillEntry(
        pid=step.pid,
        pgid=step.pgid,
        start_time=step.start_time,
        instance_id=step.instance_id,
        what=step.what,
        record_path=str(step.record_path) if step.record_path else None,
        done=done,
        gone=gone,
        summary=summary,
        errors=errors,
    )


def _dry_report(layout: StateLayout, plan: Plan, duration: float) -> ReapReport:
    killed, removed = [], []
    for step in plan.kills:
        killed.append(
            _kill_entry(
                step,
                done=False,
                gone=False,
                summary="would run the kill ladder (SIGTERM, grace, SIGKILL to the group)",
            )
        )
        files = [("record", step.record_path)] if step.record_path else []
        for kind, path in [*step.dirs, *files]:
            if os.path.lexists(path):
                removed.append(RemoveEntry(kind, str(path), "its Chrome would be killed", False))
    for cleanup in plan.cleanups:
        for kind, path in (*cleanup.dirs, *cleanup.files):
            if os.path.lexists(path):
                removed.append(RemoveEntry(kind, str(path), cleanup.reason, False))
    return ReapReport(
        state_dir=str(layout.root),
        dry_run=True,
        killed=tuple(killed),
        spared=plan.spared,
        removed=tuple(removed),
        errors=plan.errors,
        duration=duration,
    )
