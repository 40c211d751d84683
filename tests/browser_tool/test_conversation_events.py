"""The conversation's event methods on their own: each checks the state it finds and moves in
one step, or refuses (a bug) / reports that nothing changed (a race lost)."""

from __future__ import annotations

import pytest
import trio

from browser_tool import CloseReason, ConversationState, validate_conversation_id
from browser_tool.conversations._conversation import Conversation, Due, IllegalTransition
from tests.support.fake_browsers import FakeBrowser

S = ConversationState


def conversation() -> Conversation:
    return Conversation(validate_conversation_id("conv-1"), idle_timeout=600.0, last_active=0.0)


def browser() -> FakeBrowser:
    return FakeBrowser("conv-1", lambda _: None)


async def test_a_call_that_launches_then_ends_leaves_the_browser_ready() -> None:
    conv = conversation()
    call = conv.begin_call(trio.CancelScope())
    assert (conv.state, conv.has_browser) == (S.IN_CALL, False)
    conv.launching()
    b = browser()
    assert conv.launched(b)
    assert (conv.state, conv.has_browser, call.launched, call.browser) == (S.IN_CALL, True, True, b)
    conv.end_call(5.0, counted=True)
    assert (conv.state, conv.calls, conv.last_active, conv.call) == (S.READY, 1, 5.0, None)


async def test_a_launch_that_finishes_after_a_delete_changes_nothing() -> None:
    conv = conversation()
    call = conv.begin_call(trio.CancelScope())
    conv.launching()
    conv.delete(CloseReason.DELETE)
    assert call.stopped_because is CloseReason.DELETE
    assert not conv.launched(browser())
    assert (conv.state, conv.has_browser) == (S.DELETED, False)
    conv.end_call(1.0, counted=True)
    assert conv.state is S.DELETED  # final
    with pytest.raises(IllegalTransition):
        conv.begin_call(trio.CancelScope())


async def test_a_crash_of_another_browser_is_not_this_conversations() -> None:
    conv = conversation()
    conv.begin_call(trio.CancelScope())
    conv.launching()
    b = browser()
    conv.launched(b)
    conv.end_call(0.0, counted=True)
    assert not conv.crashed(browser())
    assert conv.state is S.READY
    assert conv.crashed(b)
    assert (conv.state, conv.has_browser, conv.lost_because) == (
        S.NO_BROWSER,
        False,
        "crashed (fake)",
    )


async def test_a_crash_during_a_call_stops_it_and_keeps_the_call_state() -> None:
    conv = conversation()
    call = conv.begin_call(trio.CancelScope())
    conv.launching()
    b = browser()
    conv.launched(b)
    assert conv.crashed(b)
    assert (conv.state, conv.has_browser, call.stopped_because) == (
        S.IN_CALL,
        False,
        CloseReason.CRASH,
    )
    conv.end_call(1.0, counted=True)
    assert conv.state is S.NO_BROWSER


async def test_an_expiry_holds_only_while_its_decision_does() -> None:
    conv = conversation()
    conv.begin_call(trio.CancelScope())
    conv.launching()
    conv.launched(browser())
    assert not conv.expire(Due.IDLE, 10_000.0, 3600.0)  # in a call: never due
    conv.end_call(0.0, counted=True)
    assert not conv.expire(Due.IDLE, 599.0, 3600.0)
    assert conv.expire(Due.IDLE, 600.0, 3600.0)
    assert conv.state is S.CLOSING
    conv.closed(600.0, "was closed because it was idle")
    assert (conv.state, conv.lost_because) == (S.NO_BROWSER, "was closed because it was idle")
    assert not conv.expire(Due.FORGET, 600.0 + 3599.0, 3600.0)
    assert conv.expire(Due.FORGET, 600.0 + 3600.0, 3600.0)
    assert conv.deleted
