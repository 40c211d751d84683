"""Dialogs never hang a call: alert, confirm and prompt while a page loads and during an eval,
`beforeunload` when the page is navigated away from and when its session is killed."""

from __future__ import annotations

import pytest
import trio

from browser_tool import BrowserSessionManager
from tests.faults.pages import html, log_then_dialogs
from tests.support.checks import wait_group_gone
from tests.support.console_lines import console_lines
from tests.support.manager_calls import C, call, js, ok

pytestmark = pytest.mark.chrome

BEFOREUNLOAD = html(
    "<script>addEventListener('beforeunload', e => { e.preventDefault(); "
    "e.returnValue = 'stay?'; });</script><p>leave me</p>"
)


async def test_dialogs_while_a_page_loads_are_answered_and_reported(
    fault_manager: BrowserSessionManager,
) -> None:
    out = await ok(fault_manager, "browser_navigate", url=log_then_dialogs(), timeout="20s")
    assert out.startswith("done")
    for text in (
        "A JavaScript alert dialog appeared ('first dialog') and was accepted.",
        "A JavaScript confirm dialog appeared ('second dialog') and was dismissed.",
        "A JavaScript prompt dialog appeared ('third dialog') and was dismissed.",
    ):
        assert text in out
    logs = await ok(fault_manager, "browser_recent_console_logs")
    lines = console_lines(logs)
    # The newest entries are the ones a model needs: the three dialogs come last, inline.
    assert [line.text for line in lines[-3:]] == [
        "alert: first dialog (accepted)",
        "confirm: second dialog (dismissed)",
        "prompt: third dialog (dismissed)",
    ]
    assert [line.text for line in lines[:-3]] == [f"log line {i}" for i in range(1, 11)]
    assert len(logs.encode()) <= fault_manager.settings.inline_text_limit
    print(f"\n{logs}")


async def test_dialogs_during_an_eval_never_block_it(fault_manager: BrowserSessionManager) -> None:
    expression = "[alert('a'), confirm('b'), prompt('c', 'd'), 'after'].slice(1)"
    assert await js(fault_manager, expression) == [False, None, "after"]
    many = await ok(
        fault_manager,
        "browser_eval",
        expression="for (let i = 0; i < 50; i++) alert('n' + i); 'done'",
    )
    assert many.startswith('<javascript_result>"done"</javascript_result>')
    # Fifty dialogs are summed up, not listed fifty times.
    assert many.count("A JavaScript alert dialog appeared") == 5
    assert "... and 45 more dialog event(s) like these" in many


async def test_beforeunload_on_navigating_away_is_accepted(
    fault_manager: BrowserSessionManager,
) -> None:
    await ok(fault_manager, "browser_navigate", url=BEFOREUNLOAD)
    await ok(fault_manager, "browser_eval", expression="1")  # a user gesture arms beforeunload
    out = await ok(fault_manager, "browser_navigate", url=html("<p>next</p>"), timeout="20s")
    assert out.startswith("done")
    assert "beforeunload dialog appeared" in out
    assert await js(fault_manager, "document.body.textContent") == "next"


async def test_beforeunload_does_not_hold_up_a_kill(fault_manager: BrowserSessionManager) -> None:
    await ok(fault_manager, "browser_navigate", url=BEFOREUNLOAD)
    await ok(fault_manager, "browser_eval", expression="1")
    [info] = fault_manager.list_sessions()
    assert info.pid is not None
    with trio.fail_after(30):
        report = await fault_manager.kill_session(C)
    assert report.browser_killed
    assert report.survivors == 0
    assert await wait_group_gone(info.pid, within=5.0)
    assert (await call(fault_manager, "browser_eval", expression="1")).is_error is False
