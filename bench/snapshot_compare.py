"""The snapshot table: our `browser_snapshot` beside Playwright MCP's, side by side in one run.

Pages: fixture pages (a form, a long list, iframes and shadow DOM) from `fixtures_site`, and a
real page nobody here wrote: Debian's Python 3.11 HTML docs (`python3.11-doc`), served by a
loopback static server. Per page and taker (`_snapshot_doors`: ours through the Python API and
through our MCP stdio door, the peer over stdio): characters of the whole snapshot (and of our
inline part), the share of the page's interactive elements (`COUNT_INTERACTIVE`) with a ref in
the snapshot, and the latency of the snapshot alone (page loaded) over N alternating rounds.

Goal (issue 18), per page: ours gives at least as many interactive elements a ref as the peer,
in at most 0.6x its characters, at a lower p50 (our MCP stdio door beside the peer's, the same
door). Writes bench/results/snapshot.md, appends the table to latest.md and the figures to
latest.json under "snapshot".

Run: python -m bench.snapshot_compare [--rounds N]   (also the last part of `python -m bench`)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio

from browser_tool import Settings, open_session_manager
from fixtures_site import running_fixtures

from ._snapshot_doors import (
    PEER_BIN,
    PYTHON_DOCS,
    ApiTaker,
    Taker,
    interactive_refs,
    mcp_taker,
    ours_mcp_params,
    peer_params,
    serving_directory,
    whole_text,
)
from ._stats import percentile

RESULTS = Path(__file__).resolve().parent / "results"
CHROME = os.environ.get("BROWSER_TOOL_CHROME", "/usr/lib/chromium/chromium-headless-shell")
CHARS_FACTOR = 0.6
# (label, fixture page or docs path); the first fixture page that exists of each group is used.
FIXTURE_PAGES = (
    ("form", ("inputs.html", "login.html")),
    ("long list", ("big.html", "bench_list.html")),
    ("iframes", ("frames.html",)),
    ("shadow DOM", ("shadow.html",)),
)
DOC_PAGES = (("Python docs: library index", "library/index.html"),
             ("Python docs: stdtypes", "library/stdtypes.html"))  # fmt: skip
SYSTEMS = ("api", "mcp", "peer")
TITLE = "## Snapshot: ours beside Playwright MCP"


def pages(site_url: str, docs_url: str | None) -> list[tuple[str, str]]:
    pages_dir = Path(__file__).resolve().parent.parent / "fixtures_site" / "pages"
    chosen = []
    for label, names in FIXTURE_PAGES:
        for name in names:
            if (pages_dir / name).is_file():
                chosen.append((f"{label} ({name})", f"{site_url}/{name}"))
                break
    if docs_url is not None:
        chosen += [(label, f"{docs_url}/{path}") for label, path in DOC_PAGES]
    return chosen


async def measure_page(
    takers: dict[str, Taker], api: ApiTaker, url: str, rounds: int
) -> dict[str, Any]:
    row: dict[str, Any] = {"url": url, "interactive": await api.interactive_count(url)}
    for taker in takers.values():
        await taker.navigate(url)
    times: dict[str, list[float]] = {name: [] for name in takers}
    texts: dict[str, str] = {}
    errors: dict[str, str] = {}
    for i in range(rounds):
        order = list(takers)
        order = order[i % len(order) :] + order[: i % len(order)]  # alternate who goes first
        for name in order:
            if name in errors:
                continue
            started = time.monotonic()
            try:
                text = await takers[name].snapshot()
            except Exception as exc:  # a taker that cannot snapshot is reported, not fatal
                errors[name] = str(exc).splitlines()[0][:200]
                continue
            times[name].append((time.monotonic() - started) * 1000)
            texts[name] = text
    for name in takers:
        if name in errors or name not in texts:
            row[name] = {"error": errors.get(name, "no snapshot")}
            continue
        whole = whole_text(texts[name])
        refs = interactive_refs(whole)
        row[name] = {
            "chars": len(whole),
            "inline_chars": len(texts[name]),
            "interactive_refs": refs,
            "share": refs / row["interactive"] if row["interactive"] else None,
            "p50": statistics.median(times[name]),
            "p90": percentile(times[name], 90),
        }
    row["goal"] = goal(row)
    return row


def goal(row: dict[str, Any]) -> dict[str, Any]:
    peer, ours = row.get("peer", {}), row.get("api", {})
    door = row.get("mcp", {}) if "p50" in row.get("mcp", {}) else ours
    if "chars" not in peer or "chars" not in ours:
        return {"met": None}
    chars = ours["chars"] / peer["chars"]
    p50 = door["p50"] / peer["p50"]
    refs_ok = ours["interactive_refs"] >= peer["interactive_refs"]
    return {
        "chars_ratio": chars,
        "p50_ratio": p50,
        "refs_ok": refs_ok,
        "met": refs_ok and chars <= CHARS_FACTOR and p50 < 1.0,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "rounds": args.rounds,
        "load_average_at_start": list(os.getloadavg()),
        "chrome": CHROME,
        "pages": {},
    }
    docs = PYTHON_DOCS if (PYTHON_DOCS / "library" / "index.html").is_file() else None
    with (
        tempfile.TemporaryDirectory(prefix="bt-bench-snap-") as tmp,
        running_fixtures() as site,
        serving_directory(docs or Path(tmp)) as docs_url,
    ):
        settings = Settings(state_dir=Path(tmp) / "state", chrome_path=CHROME)
        async with (
            open_session_manager(settings) as manager,
            mcp_taker(
                ours_mcp_params(Path(sys.executable).parent, Path(tmp) / "mcp", CHROME)
            ) as mcp,
            mcp_taker(peer_params(CHROME, Path(tmp) / "peer")) as peer,
        ):
            api = ApiTaker(manager)
            takers: dict[str, Taker] = {"api": api, "mcp": mcp, "peer": peer}
            for label, url in pages(site.url, docs_url if docs else None):
                print(f"snapshot: {label}", file=sys.stderr, flush=True)
                results["pages"][label] = await measure_page(takers, api, url, args.rounds)
            await manager.kill_session(api.conversation)
    results["load_average_at_end"] = list(os.getloadavg())
    return results


def _cell(entry: dict[str, Any], field: str) -> str:
    if "error" in entry:
        return "n/a"
    value = entry[field]
    if field == "share":
        return "n/a" if value is None else f"{entry['interactive_refs']} ({value:.0%})"
    if field in ("p50", "p90"):
        return f"{value:.1f} ms"
    return f"{value:,}"


def markdown(results: dict[str, Any]) -> str:
    load = ", ".join(f"{x:.2f}" for x in results["load_average_at_start"])
    lines = [
        TITLE,
        "",
        f"`python -m bench.snapshot_compare`, {results['when']}, {results['rounds']} rounds a "
        f"page (alternating who goes first), load average at start {load}. Both drive "
        f"{results['chrome']}. chars: the whole snapshot (ours inline in brackets); refs: "
        "interactive lines with a ref (share of the page's interactive elements); latency: "
        "the snapshot call alone, page loaded. Goal: refs >= peer, chars <= 0.6x, p50 (our "
        "MCP stdio door) < peer's.",
        "",
        "| page | interactive | taker | chars | refs | p50 | p90 | chars ours/peer | "
        "p50 ours/peer | goal |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    titles = {"api": "ours, Python API", "mcp": "ours, MCP stdio", "peer": "Playwright MCP"}
    for label, row in results["pages"].items():
        g = row["goal"]
        verdict = "n/a" if g["met"] is None else "met" if g["met"] else "not met"
        for i, name in enumerate(SYSTEMS):
            entry = row.get(name, {"error": "not run"})
            chars = _cell(entry, "chars")
            if name == "api" and "error" not in entry:
                chars += f" ({entry['inline_chars']:,})"
            ratios = ["", "", ""]
            if i == 0 and g["met"] is not None:
                ratios = [f"{g['chars_ratio']:.2f}x", f"{g['p50_ratio']:.2f}x", verdict]
            elif i == 0:
                ratios = ["", "", verdict]
            first = [label, str(row["interactive"])] if i == 0 else ["", ""]
            cells = [*first, titles[name], chars, _cell(entry, "share")]
            cells += [_cell(entry, "p50"), _cell(entry, "p90"), *ratios]
            lines.append("| " + " | ".join(cells) + " |")
    errors = [
        f"- {label}, {titles[n]}: {row[n]['error']}"
        for label, row in results["pages"].items()
        for n in SYSTEMS
        if "error" in row.get(n, {})
    ]
    return "\n".join([*lines, *([""] if errors else []), *errors]) + "\n"


def write(results: dict[str, Any]) -> str:
    RESULTS.mkdir(exist_ok=True)
    section = markdown(results)
    (RESULTS / "snapshot.md").write_text(section)
    latest_md = RESULTS / "latest.md"
    if latest_md.exists():  # this run's table replaces an earlier one's (a run of this alone)
        before = latest_md.read_text().split("\n" + TITLE, 1)[0].rstrip("\n")
        latest_md.write_text(before + "\n\n" + section)
    latest = RESULTS / "latest.json"
    data = json.loads(latest.read_text()) if latest.exists() else {}
    data["snapshot"] = results
    latest.write_text(json.dumps(data, indent=2) + "\n")
    return section


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.snapshot_compare")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if not PEER_BIN.exists():
        print(f"{PEER_BIN} is missing: run `make bench` (it installs the peer)", file=sys.stderr)
        return 2
    results = trio.run(run, args)
    print(write(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
