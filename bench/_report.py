"""The benchmark's results as a Markdown table with the ratios and the targets, and the plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._plot import plot_latency

SYSTEMS = ("api", "http", "mcp", "raw", "playwright")
TITLES = {
    "api": "ours, Python API",
    "pool": "ours, Python API, pool of 1",
    "http": "ours, HTTP (httpx keep-alive)",
    "mcp": "ours, MCP (streamable HTTP)",
    "raw": "raw CDP floor",
    "playwright": "Playwright",
}


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.2f} ms" if value < 10 else f"{value:.0f} ms"


def _cell(entry: dict[str, Any] | None, field: str = "p50") -> str:
    if not entry:
        return ""
    text = _ms(entry.get(field))
    if (r := entry.get("ratio_to_playwright")) is not None and field == "p50":
        text += f" = {r:.2f}x"
    if "bytes" in entry and field == "p50":
        text += f" ({entry['bytes'] / 1024:.0f} KiB)"
    return text


def targets(results: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    """(target, measured, met) for each target of the issue."""

    def r(section: str, system: str) -> float | None:
        value = results.get(section, {}).get(system, {}).get("ratio_to_playwright")
        return float(value) if value is not None else None

    def check(value: float | None, limit: float) -> tuple[str, bool | None]:
        return ("n/a", None) if value is None else (f"{value:.2f}x", value <= limit)

    rows = []
    for name, section, system, limit in (
        ("warm eval p50, Python API <= 0.70x Playwright", "eval", "api", 0.70),
        ("warm eval p50, HTTP <= 1.5x Playwright", "eval", "http", 1.5),
        ("first call, no pool <= 0.85x Playwright", "first_call", "api", 0.85),
        ("first call, pool <= 0.30x Playwright", "first_call", "pool", 0.30),
        ("screenshot p50 <= 0.8x Playwright", "screenshot", "api", 0.8),
        ("warm navigate p50 <= 0.85x Playwright", "navigate", "api", 0.85),
    ):
        rows.append((name, *check(r(section, system), limit)))
    to_raw = results.get("eval", {}).get("api", {}).get("ratio_to_raw")
    measured, met = check(to_raw, 1.25)
    if met is False:  # what the rest is made of (docs/decisions.md, "Issue 23")
        measured += (
            f": missed by {to_raw - 1.25:.2f}x (input validation, the conversation's turn and "
            "state, the deadline, crash checks, the result's notes: 1.5x the floor's Python "
            "calls per warm eval, 568 against 381 as cProfile counts them, in 2 scheduler "
            "passes against its 3.3; the floor keeps none of those guarantees)"
        )
    rows.append(("warm eval p50, Python API <= 1.25x the raw CDP floor (issue 23)", measured, met))
    errors = {
        name: levels.get("50", {}).get("errors")
        for name, levels in results.get("concurrency", {}).items()
        if name != "playwright"
    }
    bad = {k: v for k, v in errors.items() if v}
    ran = bool(errors) and all(v is not None for v in errors.values())
    rows.append(("50 conversations, 0 errors (ours)", str(errors), not bad if ran else None))
    kill = results.get("kill_session", {}).get("api")
    if kill:
        met = kill["p99"] <= 150 and kill["survivors"] == 0
        measured = f"p99 {kill['p99']:.0f} ms, {kill['survivors']} survivors"
        rows.append(("kill_session p99 <= 150 ms, 0 survivors", measured, met))
    return rows


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# Benchmark: ours side by side with Playwright and a raw CDP floor",
        "",
        f"Run {results.get('when')}, {results.get('duration_s', 0):.0f} s; machine: "
        f"{results['machine']['cpus']} CPUs, load average at start "
        f"{', '.join(f'{x:.1f}' for x in results['machine']['load_average_at_start'])}. "
        "A ratio is the median of per-round ratios (ours / Playwright); the same headless "
        "shell and flags for everyone. Regenerate with `make bench`.",
        "",
        "| figure | " + " | ".join(TITLES[s] for s in SYSTEMS) + " |",
        "| --- |" + " --- |" * len(SYSTEMS),
    ]
    first = dict(results.get("first_call", {}))
    pool = first.get("pool")
    rows = [
        ("first call (launch + navigate), p50", first, "p50"),
        ("warm `browser_eval` `1+1`, p50", results.get("eval", {}), "p50"),
        ("warm `browser_eval` `1+1`, p99", results.get("eval", {}), "p99"),
        ("warm navigate, small page, p50", results.get("navigate", {}), "p50"),
        ("screenshot 1280x720 as delivered, p50 (bytes)", results.get("screenshot", {}), "p50"),
    ]
    for title, section, field in rows:
        lines.append(
            f"| {title} | " + " | ".join(_cell(section.get(s), field) for s in SYSTEMS) + " |"
        )
    if pool:
        lines.append(f"| first call with the pool, p50 | {_cell(pool)} | | | | |")
    kill = results.get("kill_session", {})
    if kill:
        cells = [
            f"p50 {_ms(k['p50'])}, p99 {_ms(k['p99'])}, {k['survivors']} survivors"
            if (k := kill.get(s))
            else ""
            for s in SYSTEMS
        ]
        lines.append("| `kill_session` | " + " | ".join(cells) + " |")
    door = results.get("http_door")
    if door:
        api = results.get("eval", {}).get("api", {}).get("p50")
        http = results.get("eval", {}).get("http", {}).get("p50")
        lines += [
            "",
            "## The HTTP door (one blocking httpx keep-alive client)",
            "",
            "Each a POST of a small JSON body but /healthz (a GET).",
            "",
            "| request | p50 | p99 |",
            "| --- | --- | --- |",
            f"| hypercorn's trio worker, a bare no-op ASGI app (the floor) "
            f"| {_ms(door['hypercorn_noop']['p50'])} | {_ms(door['hypercorn_noop']['p99'])} |",
            f"| ours, GET /healthz | {_ms(door['ours_healthz']['p50'])} "
            f"| {_ms(door['ours_healthz']['p99'])} |",
            "| ours, a tool call that sends no CDP (`browser_clear_console_logs`) "
            f"| {_ms(door['ours_tool_call_without_cdp']['p50'])} "
            f"| {_ms(door['ours_tool_call_without_cdp']['p99'])} |",
        ]
        if api and http:
            over = http - api - door["hypercorn_noop"]["p50"]
            lines += [
                "",
                f"`browser_eval` over HTTP ({_ms(http)}) = Python API ({_ms(api)}) + the floor "
                f"({_ms(door['hypercorn_noop']['p50'])}) + {_ms(over)} of our door.",
            ]
    lines += ["", "## Concurrent conversations (navigate + eval + screenshot, looping)", ""]
    lines += [
        "| system | conversations | calls/s | p50 | p99 | errors | PSS per conversation |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, levels in results.get("concurrency", {}).items():
        for count, level in levels.items():
            lines.append(
                f"| {TITLES[name]} | {count} | {level['calls_per_s']:.1f} | {_ms(level['p50'])} "
                f"| {_ms(level['p99'])} | {level['errors']} "
                f"| {level['pss_mb_per_conversation']:.0f} MB |"
            )
    lines += ["", "## Targets", "", "| target | measured | met |", "| --- | --- | --- |"]
    for name, measured, met in targets(results):
        lines.append(
            f"| {name} | {measured} | {'yes' if met else 'n/a' if met is None else 'NO'} |"
        )
    lines += [
        "",
        "Plot: `latest.png` (p50 latency of a call against concurrent conversations).",
        "",
    ]
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path) -> None:
    import json

    directory.mkdir(parents=True, exist_ok=True)
    (directory / "latest.json").write_text(json.dumps(results, indent=2) + "\n")
    (directory / "latest.md").write_text(markdown(results))
    series = {
        TITLES[name]: {int(c): level["p50"] for c, level in levels.items() if level["p50"]}
        for name, levels in results.get("concurrency", {}).items()
    }
    plot_latency(
        series,
        directory / "latest.png",
        "p50 latency of a call (navigate, eval, screenshot) vs concurrent conversations",
        "p50 ms",
    )


def put_section(directory: Path, title: str, section: str, key: str, results: object) -> None:
    """Put `section` (which starts with the heading `title`) into latest.md, in place of an
    earlier run's section of that title or at the end, and `results` under `key` in
    latest.json: the benches that run after `compare` add themselves this way."""
    import json

    latest_md = directory / "latest.md"
    if latest_md.exists():
        head, _, rest = latest_md.read_text().partition("\n" + title)
        tail = rest.split("\n## ", 1)[1] if "\n## " in rest else ""
        latest_md.write_text(
            head.rstrip("\n") + "\n\n" + section + ("\n## " + tail if tail else "")
        )
    latest = directory / "latest.json"
    data = json.loads(latest.read_text()) if latest.exists() else {}
    data[key] = results
    latest.write_text(json.dumps(data, indent=2) + "\n")
