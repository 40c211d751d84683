"""Tool calls on stand-ins: the call's deadline, the errors a call can meet, and their wording.

Charter: no Chrome and no socket. Each call gets a StandInConversation (stand_ins.py) whose page
answers only what the test scripts; any other command never answers, as a busy renderer does
not. Calls go through `find_tool`, `prepare_input` and `run_tool`, as the manager makes them.
Timing runs on trio's autojump clock, and times are asserted exactly.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import trio
import trio.testing
from PIL import Image

from browser_tool import (
    BrowserLaunchError,
    CdpCommandError,
    CdpConnectionError,
    CdpSessionDetachedError,
    CdpTimeoutError,
    ClientGone,
    HttpError,
    InvalidInputError,
    ResultParseError,
    SessionClosedError,
    SessionError,
    ToolError,
    ToolOutput,
)
from browser_tool.browser import (
    BROWSER_CRASHED_DURING_CALL,
    PAGE_CRASHED_DURING_CALL,
    TAB_CLOSED_DURING_CALL,
)
from browser_tool.tools import find_tool, run_tool
from tests.browser_tool.tools.stand_ins import StandInCdp, StandInConversation, call, make_context

CRASHED = BROWSER_CRASHED_DURING_CALL
# Every tool that needs the browser, with an input that gets as far as asking for it.
LAUNCHING_CALLS: dict[str, dict[str, object]] = {
    "browser_navigate": {"url": "https://example.com/"},
    "browser_eval": {"expression": "1"},
    "browser_take_screenshot": {},
    "browser_resize": {"width": 800, "height": 600},
    "browser_set_offline": {"offline": True},
}
# What each of them says when the page does not answer within a 5 s timeout.
TIMEOUT_TEXTS = {
    "browser_navigate": "Timeout after 5s waiting for page load of https://example.com/",
    "browser_eval": "Timeout after 5s evaluating the expression;",
    "browser_take_screenshot": "Timeout after 5s taking the screenshot",
    "browser_resize": "Timeout after 5s resizing the viewport to 800x600",
    "browser_set_offline": "Timeout after 5s switching offline mode on: the page did not answer",
}


@pytest.mark.parametrize("name", LAUNCHING_CALLS)
async def test_a_bare_session_error_becomes_an_error_result(tmp_path: Path, name: str) -> None:
    # What a call meets when it waited on its conversation while the service began to shut down.
    shutting_down = SessionError("The service is shutting down.")
    conversation = StandInConversation(tmp_path, launch_error=shutting_down)
    out = await call(conversation, name, LAUNCHING_CALLS[name])
    assert out == ToolOutput.error("The service is shutting down.")


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (
            SessionClosedError("conv-1", "deleted"),
            "Browser session of conversation 'conv-1' was closed (deleted); the call was stopped.",
        ),
        (BrowserLaunchError("Chrome did not start: boom"), "Chrome did not start: boom"),
        (
            CdpTimeoutError("Target.attachToTarget", 10.0, "10s"),
            "Timeout: Target.attachToTarget got no answer within 10s",
        ),
        (CdpConnectionError("socket closed"), CRASHED),
        (CdpCommandError("Page.enable", -32000, "boom"), "Page.enable failed: boom [code -32000]"),
        (ResultParseError("odd result"), "odd result"),
        (ToolError("it failed"), "it failed"),
        (InvalidInputError("url", "must be a URL"), "Invalid input 'url': must be a URL"),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else "",
)
async def test_every_error_of_a_call_becomes_an_error_result(
    tmp_path: Path, error: Exception, text: str
) -> None:
    conversation = StandInConversation(tmp_path, launch_error=error)
    out = await call(conversation, "browser_eval", {"expression": "1"})
    assert out == ToolOutput.error(text)


async def test_a_lost_page_in_a_live_browser_is_a_page_crash(tmp_path: Path) -> None:
    # The page's session was dropped (its renderer died) while the browser still answers.
    conversation = StandInConversation(
        tmp_path, StandInCdp({"Runtime.evaluate": CdpConnectionError("session detached")})
    )
    out = await call(conversation, "browser_eval", {"expression": "1"})
    assert out == ToolOutput.error(PAGE_CRASHED_DURING_CALL)


async def test_a_detached_page_session_is_its_tab_closing_not_a_crash(tmp_path: Path) -> None:
    # Chrome detached the page's session (Target.detachedFromTarget): its tab went away.
    detached = CdpSessionDetachedError("session 'S1' detached from its target")
    conversation = StandInConversation(tmp_path, StandInCdp({"Runtime.evaluate": detached}))
    out = await call(conversation, "browser_eval", {"expression": "window.close()"})
    assert out == ToolOutput.error(TAB_CLOSED_DURING_CALL)


async def test_a_lost_connection_is_the_browsers_crash_not_the_pages(tmp_path: Path) -> None:
    # The browser's connection closed under the call: the browser went, not only its page.
    conversation = StandInConversation(
        tmp_path, StandInCdp({"Runtime.evaluate": CdpConnectionError("the WebSocket closed")})
    )
    conversation.browser_alive = False
    out = await call(conversation, "browser_eval", {"expression": "1"})
    assert out == ToolOutput.error(BROWSER_CRASHED_DURING_CALL)


async def test_a_huge_error_keeps_its_start_inline_and_the_rest_in_a_file(tmp_path: Path) -> None:
    thrown = {"exceptionDetails": {"exception": {"description": "Error: " + "x" * 50_000}}}
    conversation = StandInConversation(tmp_path, StandInCdp({"Runtime.evaluate": thrown}))
    out = await call(conversation, "browser_eval", {"expression": "1"})
    assert out.is_error
    assert out.output.startswith("Error: xxx")
    assert len(out.output) < 1200
    assert "bytes total; full text saved to" in out.output


@pytest.mark.parametrize("error", [ClientGone("hung up"), HttpError(503, "busy", "busy")])
async def test_a_front_end_error_is_left_to_its_front_end(tmp_path: Path, error: Exception) -> None:
    conversation = StandInConversation(tmp_path, launch_error=error)
    with pytest.raises(type(error)):
        await call(conversation, "browser_eval", {"expression": "1"})


@pytest.mark.parametrize("name", LAUNCHING_CALLS)
async def test_the_timeout_bounds_the_launch_and_the_call_together(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, name: str
) -> None:
    conversation = StandInConversation(tmp_path, launch_seconds=3.0)  # nothing ever answers
    start = trio.current_time()
    with trio.fail_after(60):
        out = await call(conversation, name, {**LAUNCHING_CALLS[name], "timeout": "5s"})
    assert out.is_error
    assert out.output.startswith(TIMEOUT_TEXTS[name]), out.output
    assert trio.current_time() == start + 5.0


async def test_a_launch_longer_than_the_timeout_stops_the_call(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    conversation = StandInConversation(tmp_path, launch_seconds=30.0)
    start = trio.current_time()
    out = await call(conversation, "browser_eval", {"expression": "1", "timeout": "5s"})
    assert out.is_error
    assert out.output.startswith("Timeout after 5s: the browser did not start"), out.output
    assert trio.current_time() == start + 5.0
    assert conversation.cdp.sent == []


async def test_eval_gives_cdp_the_time_left_until_the_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    cdp = StandInCdp()
    conversation = StandInConversation(tmp_path, cdp, launch_seconds=3.0)
    start = trio.current_time()
    out = await call(conversation, "browser_eval", {"expression": "1", "timeout": "5s"})
    assert [(method, params["timeout"]) for method, params in cdp.sent] == [
        ("Runtime.evaluate", 2000)
    ]
    assert out.output.startswith("Timeout after 5s evaluating the expression;")
    assert conversation.page.best_effort == ["Runtime.terminateExecution"]
    assert trio.current_time() == start + 5.0


async def test_eval_gives_cdp_at_least_one_millisecond(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    cdp = StandInCdp({"Runtime.evaluate": {"result": {"type": "number", "value": 2}}})
    conversation = StandInConversation(tmp_path, cdp, launch_seconds=0.9995)
    out = await call(conversation, "browser_eval", {"expression": "1 + 1", "timeout": "1s"})
    assert out == ToolOutput.ok("<javascript_result>2</javascript_result>")
    assert cdp.sent[0][1]["timeout"] == 1


async def test_resize_honours_its_timeout(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # Emulation.setDeviceMetricsOverride is never answered, as when a script keeps the page busy.
    conversation = StandInConversation(tmp_path)
    start = trio.current_time()
    with trio.fail_after(60):
        out = await call(
            conversation, "browser_resize", {"width": 800, "height": 600, "timeout": "2s"}
        )
    assert out.is_error
    assert out.output.startswith("Timeout after 2s resizing the viewport to 800x600"), out.output
    assert trio.current_time() == start + 2.0
    # Chrome applies the size once the page answers; a page replaced after a crash gets it too.
    assert conversation.page.viewport == (800, 600)


async def test_resize_applies_the_viewport(tmp_path: Path) -> None:
    cdp = StandInCdp({"Emulation.setDeviceMetricsOverride": {}})
    conversation = StandInConversation(tmp_path, cdp)
    out = await call(conversation, "browser_resize", {"width": 800, "height": 600})
    assert out == ToolOutput.ok("done")
    assert conversation.page.viewport == (800, 600)
    assert cdp.sent == [
        (
            "Emulation.setDeviceMetricsOverride",
            {"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": False},
        )
    ]


async def test_a_screenshot_timeout_is_printed_as_a_duration(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    conversation = StandInConversation(tmp_path)  # Page.captureScreenshot is never answered
    out = await call(conversation, "browser_take_screenshot", {"timeout": "250ms"})
    assert out == ToolOutput.error("Timeout after 250ms taking the screenshot")


async def test_a_read_image_timeout_is_printed_as_a_duration(tmp_path: Path) -> None:
    image = tmp_path / "a.png"
    Image.new("RGB", (4, 3)).save(image)
    conversation = StandInConversation(tmp_path)
    # The call waited its whole 90 s before reading (say, behind a slow call on its
    # conversation): the deadline has passed, so the read never starts.
    ctx = dataclasses.replace(
        make_context(conversation, timeout=90.0), deadline=trio.current_time()
    )
    out = await run_tool(ctx, find_tool("read_image"), {"path": str(image)})
    assert out == ToolOutput.error(f"Timeout after 1m30s reading {image}")


async def test_read_image_reads_within_the_deadline(tmp_path: Path) -> None:
    image = tmp_path / "a.png"
    Image.new("RGB", (4, 3)).save(image)
    out = await call(StandInConversation(tmp_path), "read_image", {"path": str(image)})
    assert out.output == f"Image from {image} (type: image/png; 4x3)"
    assert [i.media_type for i in out.images] == ["image/png"]


async def test_console_tools_never_launch_a_browser(tmp_path: Path) -> None:
    conversation = StandInConversation(tmp_path)
    out = await call(conversation, "browser_recent_console_logs", {})
    assert out == ToolOutput.ok("No console log entries.")
    out = await call(conversation, "browser_clear_console_logs", {})
    assert out == ToolOutput.ok("Cleared 0 console log entries.")
    assert conversation.launches == 0


async def test_console_tools_read_and_clear_the_running_browser(tmp_path: Path) -> None:
    conversation = StandInConversation(tmp_path, running=True)
    conversation.page.console.add("log", "hello", "u:1", when=1.0)
    out = await call(conversation, "browser_recent_console_logs", {"limit": 5})
    assert out.output == (
        "1 console entries #1-#1, oldest first (times UTC, 1970-01-01):\n"
        "#1 00:00:01.000 log   hello (u:1)"
    )
    out = await call(conversation, "browser_clear_console_logs", {})
    assert out == ToolOutput.ok("Cleared 1 console log entries.")
    assert conversation.launches == 0


async def test_pwa_tools_that_only_read_never_launch_a_browser(tmp_path: Path) -> None:
    conversation = StandInConversation(tmp_path)
    out = await call(conversation, "browser_get_service_workers", {})
    assert out == ToolOutput.ok(
        "No browser is running in this conversation, so no page and no service worker. "
        "Navigate to a page first."
    )
    out = await call(conversation, "browser_get_network_sources", {})
    assert out == ToolOutput.ok(
        "No responses recorded: no browser is running in this conversation."
    )
    out = await call(conversation, "browser_recent_console_logs", {"context": "worker"})
    assert out == ToolOutput.ok("No console log entries of context worker.")
    assert conversation.launches == 0


async def test_offline_mode_is_set_on_the_page_and_kept_for_later_workers(tmp_path: Path) -> None:
    cdp = StandInCdp({"Network.emulateNetworkConditions": {}})
    conversation = StandInConversation(tmp_path, cdp)
    out = await call(conversation, "browser_set_offline", {"offline": True})
    assert out == ToolOutput.ok(
        "Offline mode is on for the page: requests fail with net::ERR_INTERNET_DISCONNECTED "
        "unless a service worker answers them."
    )
    assert cdp.sent == [
        (
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )
    ]
    assert conversation.page.workers.offline is True
    out = await call(conversation, "browser_set_offline", {"offline": False})
    assert out == ToolOutput.ok("Offline mode is off for the page: the network is back.")
    assert cdp.sent[-1][1]["offline"] is False


async def test_network_sources_keep_the_newest_inline_and_all_in_a_file(tmp_path: Path) -> None:
    conversation = StandInConversation(tmp_path, running=True)
    network = conversation.page.workers.network
    for i in range(40):
        request = {"requestId": str(i), "request": {"url": f"http://127.0.0.1/{i}.js"}}
        network.observe("Network.requestWillBeSent", request, "page", "S")
        response = {"url": f"http://127.0.0.1/{i}.js", "status": 200}
        params = {"requestId": str(i), "type": "Script", "response": response}
        network.observe("Network.responseReceived", params, "page", "S")
    out = await call(conversation, "browser_get_network_sources", {"limit": 30, "clear": True})
    lines = out.output.splitlines()
    assert lines[0] == (
        "40 responses recorded; by source: network 40, service_worker 0, disk_cache 0, "
        "memory_cache 0, prefetch_cache 0, failed 0. The log was cleared. "
        "Listed the newest 30, oldest first:"
    )
    kept = [line for line in lines if line.startswith("200 ")]
    assert kept[-1] == "200 Script network http://127.0.0.1/39.js"
    footer = re.fullmatch(
        r"\[(\d+) earlier responses left out here; all 30 responses \([\d,]+ bytes\) are in (.+)\]",
        lines[1],
    )
    assert footer is not None, lines[1]
    assert int(footer[1]) == 30 - len(kept)
    assert len(out.output.encode()) <= 1024
    path = Path(footer[2])
    saved = path.read_text().splitlines()
    assert saved[0] == lines[0]
    assert saved[1:] == [f"200 Script network http://127.0.0.1/{i}.js" for i in range(10, 40)]
    assert len(network) == 0


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("a\x00b", "Invalid input 'path': must not contain a NUL character"),
        ("x" * 5000, "Cannot read "),
    ],
)
async def test_read_image_paths_no_file_system_takes_are_clear_errors(
    tmp_path: Path, path: str, text: str
) -> None:
    out = await call(StandInConversation(tmp_path), "read_image", {"path": str(tmp_path / path)})
    assert out.is_error
    assert text in out.output


async def test_the_timeout_error_names_the_callers_timeout(tmp_path: Path) -> None:
    ctx = make_context(StandInConversation(tmp_path), timeout=1.5)
    assert (
        str(ctx.timeout_error("taking the screenshot"))
        == "Timeout after 1.5s taking the screenshot"
    )
    assert str(ctx.timeout_error(": nothing ran")) == "Timeout after 1.5s: nothing ran"
