"""`make bench`: ours side by side with Playwright for Python and a raw CDP floor, one run.

Every system runs in a long-lived worker of its own with a warm browser (the same Debian
headless shell and the same flags for all; Playwright's own default flags are left out), and
the rounds alternate between them, rotating the order each round: a quantity is the median of
the samples of all rounds, and a ratio is the median of the per-round ratios (ours / Playwright),
so a load spike that hits one round hits every system in it. Concurrency runs one system
after the other (fifty Chromes per system at once is all this machine holds).
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from fixtures_site import running_fixtures

from . import _workers
from ._procs import group_pss_bytes, kill_groups_mentioning, pgid_of_marker
from ._stats import percentile
from ._workers import Worker

FIRST_CALL_ROUNDS = 7
ROUNDS = 9
EVALS, NAVIGATES, SHOTS, KILLS = 100, 8, 5, 20
LEVELS: tuple[int, ...] = (1, 10, 25, 50)
LOAD_SECONDS = 5.0
if os.environ.get("BENCH_QUICK"):  # a smoke run of every path, for working on the benchmark
    FIRST_CALL_ROUNDS, ROUNDS, EVALS, NAVIGATES, SHOTS, KILLS = 2, 2, 10, 2, 2, 3
    LEVELS, LOAD_SECONDS = (1, 3), 1.0

Result = dict[str, Any]


def summary(samples: list[float]) -> dict[str, float]:
    return {
        "p50": statistics.median(samples),
        "p99": percentile(samples, 99),
        "n": len(samples),
    }


async def rounds(
    workers: dict[str, Worker], op: str, count: int, key: str = "samples", **args: Any
) -> dict[str, Any]:
    """`count` rounds of `op` on every worker, the order rotating each round. Returns, per
    worker, every sample, the p50 of each round, and what else the answers carried."""
    names = list(workers)
    out: dict[str, Any] = {name: {"samples": [], "round_p50": [], "extra": []} for name in names}
    for index in range(count):
        order = names[index % len(names) :] + names[: index % len(names)]
        for name in order:
            answer = await workers[name].ask(op, **args)
            values = answer[key] if isinstance(answer[key], list) else [answer[key]]
            out[name]["samples"] += values
            out[name]["round_p50"].append(statistics.median(values))
            if "bytes" in answer:
                out[name]["extra"].append(answer["bytes"])
    return out


def ratio(data: dict[str, Any], ours: str, theirs: str = "playwright") -> float | None:
    if ours not in data or theirs not in data:
        return None
    pairs = zip(data[ours]["round_p50"], data[theirs]["round_p50"], strict=False)
    return float(statistics.median(a / b for a, b in pairs))


def digest(data: dict[str, Any]) -> dict[str, Any]:
    result = {}
    for name, values in data.items():
        entry: dict[str, Any] = summary(values["samples"])
        if values["extra"]:
            entry["bytes"] = statistics.median(values["extra"])
        result[name] = entry
    for name in data:
        if name != "playwright" and (value := ratio(data, name)) is not None:
            result[name]["ratio_to_playwright"] = value
        if name not in ("raw", "playwright") and (value := ratio(data, name, "raw")) is not None:
            result[name]["ratio_to_raw"] = value
    return result


async def http_door(worker: Worker) -> dict[str, Any]:
    """Hypercorn's own floor (a bare no-op app) and our no-op route, same client, alternating."""
    floor: list[float] = []
    healthz: list[float] = []
    door: list[float] = []
    for _ in range(ROUNDS):
        floor += (await worker.ask("floor", n=EVALS))["samples"]
        healthz += (await worker.ask("noop", n=EVALS))["samples"]
        door += (await worker.ask("door", n=EVALS))["samples"]
    return {
        "hypercorn_noop": summary(floor),
        "ours_healthz": summary(healthz),
        "ours_tool_call_without_cdp": summary(door),
    }


async def concurrency(worker: Worker, url: str) -> dict[str, Any]:
    levels: dict[str, Any] = {}
    try:
        for count in LEVELS:
            opened = await worker.ask("open", count=count, url=url)
            load = await worker.ask("load", count=count, seconds=LOAD_SECONDS, url=url)
            if worker.name == "playwright":
                pgids = [g for m in opened.get("markers", []) if (g := pgid_of_marker(m))]
                levels_pgids = levels.setdefault("_pgids", [])
                levels_pgids += pgids
                pgids = levels_pgids
            else:
                pgids = (await worker.ask("pids"))["pids"]
            pss = sum(group_pss_bytes(pgid) for pgid in pgids)
            samples = load["samples"]
            levels[str(count)] = {
                "calls_per_s": len(samples) / load["elapsed"],
                "p50": statistics.median(samples) if samples else None,
                "p99": percentile(samples, 99) if samples else None,
                "errors": load["errors"],
                "calls": len(samples),
                "pss_mb_per_conversation": pss / max(1, len(pgids)) / 2**20,
                "groups_measured": len(pgids),
            }
            print(f"  {worker.name} x{count}: {levels[str(count)]}", flush=True)
    finally:
        levels.pop("_pgids", None)
        await worker.ask("close_all")
    return levels


async def run(root: Path) -> Result:
    results: Result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_at_start": os.getloadavg(),
            "python": platform.python_version(),
        },
        "config": {
            "first_call_rounds": FIRST_CALL_ROUNDS,
            "rounds": ROUNDS,
            "evals_per_round": EVALS,
            "navigates_per_round": NAVIGATES,
            "screenshots_per_round": SHOTS,
            "kills": KILLS,
            "levels": LEVELS,
            "load_seconds": LOAD_SECONDS,
        },
    }
    with running_fixtures() as site:
        url = site.url_for("/index.html")
        workers = {
            "api": _workers.ours("api", root),
            "pool": _workers.ours("pool", root),
            "http": _workers.ours("http", root),
            "mcp": _workers.ours("mcp", root),
            "raw": _workers.raw(root),
            "playwright": _workers.playwright(root),
        }
        try:
            for worker in workers.values():
                await worker.start()
            print("first call of a new conversation ...", flush=True)
            for worker in workers.values():  # the first launch of all reads Chrome from disk
                await worker.ask("first_call", url=url)
            results["first_call"] = digest(
                await rounds(workers, "first_call", FIRST_CALL_ROUNDS, key="ms", url=url)
            )
            await workers.pop("pool").stop()
            for worker in workers.values():
                await worker.ask("prepare", url=url)
            print("warm eval ...", flush=True)
            results["eval"] = digest(await rounds(workers, "eval", ROUNDS, n=EVALS))
            print("HTTP door floor ...", flush=True)
            results["http_door"] = await http_door(workers["http"])
            print("warm navigate ...", flush=True)
            results["navigate"] = digest(
                await rounds(workers, "navigate", ROUNDS, n=NAVIGATES, url=url)
            )
            print("screenshot ...", flush=True)
            results["screenshot"] = digest(await rounds(workers, "screenshot", ROUNDS, n=SHOTS))
            print("kill_session ...", flush=True)
            results["kill_session"] = {}
            for name in ("api", "http"):
                answer = await workers[name].ask("kill", n=KILLS, url=url)
                results["kill_session"][name] = {
                    **summary(answer["samples"]),
                    "survivors": answer["survivors"],
                }
            await workers.pop("raw").stop()
            print("concurrent conversations ...", flush=True)
            results["concurrency"] = {}
            for name, worker in workers.items():
                results["concurrency"][name] = await concurrency(worker, url)
        finally:
            with trio.CancelScope(shield=True):
                for worker in workers.values():
                    await worker.stop()
                left = kill_groups_mentioning(str(root))
                if left:
                    print(f"killed {len(left)} process groups the workers left behind", flush=True)
    return results


def main() -> Result:
    if not _workers.PLAYWRIGHT_PYTHON.exists():
        raise SystemExit(
            f"{_workers.PLAYWRIGHT_PYTHON} is missing: `make bench` creates it (Playwright for "
            "Python in the benchmark's own environment; no browser is downloaded)"
        )
    root = Path(tempfile.mkdtemp(prefix="bt-bench-", dir="/tmp"))
    started = time.monotonic()
    try:
        results = trio.run(run, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results["duration_s"] = time.monotonic() - started
    return results
