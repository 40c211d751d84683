"""The hand-over record and the live view's input checks (issue 21): pure, no browser, no
trio run (times are plain numbers) but where the conversation reads trio's clock."""

from __future__ import annotations

import math

import pytest

from browser_tool import CloseReason, HandoffError, InvalidInputError, validate_conversation_id
from browser_tool.browser import live_input_commands
from browser_tool.conversations._conversation import Conversation, IllegalTransition
from browser_tool.conversations._handoff import MAX_REASON, Handoff, check_ttl


def test_a_token_is_spent_by_its_first_claim() -> None:
    handoff, token = Handoff.offer("c1", "Sign in", 600.0, now=100.0)
    assert len(token) >= 43  # 256 bits, URL-safe base64
    assert token not in repr(handoff)  # only its digest is kept
    with pytest.raises(HandoffError) as wrong:
        handoff.claim(token[:-1] + ("A" if token[-1] != "A" else "B"), now=101.0)
    assert wrong.value.kind == "refused"
    secret = handoff.claim(token, now=101.0)
    assert handoff.state.value == "held"
    assert handoff.admits(secret, now=102.0)
    assert not handoff.admits(secret + "x", now=102.0)
    assert not handoff.admits(None, now=102.0)
    with pytest.raises(HandoffError) as again:
        handoff.claim(token, now=103.0)
    assert str(again.value) == str(wrong.value)  # one answer for every cause
    assert not handoff.admits(secret, now=700.0)  # the secret dies with the hand-over's time


def test_an_expired_token_is_refused() -> None:
    handoff, token = Handoff.offer("c1", "r", 10.0, now=0.0)
    with pytest.raises(HandoffError):
        handoff.claim(token, now=10.0)


def test_the_note_says_who_used_it_how_long_and_where() -> None:
    handoff, token = Handoff.offer("c1", "Accept the terms", 600.0, now=0.0)
    handoff.claim(token, now=5.0)
    assert handoff.end("the person pressed Done", now=95.0, url="https://x.test/ok")
    assert not handoff.end("later", now=96.0)  # once
    note = handoff.note()
    assert "a person used the browser for 1m30s" in note
    assert "'Accept the terms'" in note
    assert "https://x.test/ok" in note
    unopened, _ = Handoff.offer("c1", "r", 60.0, now=0.0)
    unopened.end("its time (ttl) ran out", now=60.0)
    assert "nobody opened the link" in unopened.note()


def test_reason_and_ttl_are_bounded() -> None:
    handoff, _ = Handoff.offer("c1", "x" * 10_000, 60.0, now=0.0)
    assert len(handoff.reason) == MAX_REASON
    assert check_ttl(3600.0) == 3600.0
    for bad in (0.0, -1.0, 3600.5, float("nan")):
        with pytest.raises(InvalidInputError):
            check_ttl(bad)


def test_input_events_become_cdp_commands() -> None:
    commands = live_input_commands(
        {
            "events": [
                {"type": "mouse", "action": "down", "x": 10, "y": 20.5, "clicks": 2},
                {"type": "wheel", "x": 1, "y": 2, "dx": 0, "dy": 120},
                {"type": "key", "action": "down", "key": "a", "text": "a"},
                {
                    "type": "key",
                    "action": "down",
                    "key": "a",
                    "modifiers": 2,
                    "commands": ["selectAll"],
                },
                {"type": "key", "action": "up", "key": "Enter", "text": "\r"},
                {"type": "text", "text": "pasted"},
            ]
        }
    )
    assert [method for method, _ in commands] == [
        "Input.dispatchMouseEvent",
        "Input.dispatchMouseEvent",
        "Input.dispatchKeyEvent",
        "Input.dispatchKeyEvent",
        "Input.dispatchKeyEvent",
        "Input.insertText",
    ]
    assert commands[0][1] == {
        "x": 10.0,
        "y": 20.5,
        "type": "mousePressed",
        "button": "left",
        "clickCount": 2,
        "modifiers": 0,
    }
    assert commands[1][1]["type"] == "mouseWheel"
    assert commands[2][1]["type"] == "keyDown"
    assert commands[2][1]["text"] == "a"
    assert commands[3][1]["type"] == "rawKeyDown"
    assert commands[3][1]["commands"] == ["selectAll"]
    assert commands[4][1]["type"] == "keyUp"
    assert "text" not in commands[4][1]  # a key up types nothing
    assert commands[5][1] == {"text": "pasted"}


@pytest.mark.parametrize(
    ("batch", "field"),
    [
        ([], "events"),
        ({"events": "x"}, "events"),
        ({"events": [{}] * 201}, "events"),
        ({"events": [5]}, "events[0]"),
        ({"events": [{"type": "mouse", "action": "fly", "x": 1, "y": 1}]}, "events[0].action"),
        ({"events": [{"type": "mouse", "action": "down", "x": "1", "y": 1}]}, "events[0].x"),
        (
            {"events": [{"type": "mouse", "action": "down", "x": float("inf"), "y": 1}]},
            "events[0].x",
        ),
        ({"events": [{"type": "mouse", "action": "down", "x": 1e9, "y": 1}]}, "events[0].x"),
        (
            {"events": [{"type": "mouse", "action": "up", "x": 1, "y": 1, "button": "x"}]},
            "events[0].button",
        ),
        ({"events": [{"type": "wheel", "x": 1, "y": 1, "dx": True, "dy": 0}]}, "events[0].dx"),
        ({"events": [{"type": "key", "action": "down", "key": ""}]}, "events[0].key"),
        (
            {"events": [{"type": "key", "action": "down", "key": "a", "modifiers": 16}]},
            "events[0].modifiers",
        ),
        (
            {"events": [{"type": "key", "action": "down", "key": "a", "commands": ["rm"]}]},
            "events[0].commands",
        ),
        ({"events": [{"type": "text", "text": "\ud800"}]}, "events[0].text"),
        ({"events": [{"type": "text", "text": "x" * 100_001}]}, "events[0].text"),
    ],
)
def test_bad_input_is_refused_whole(batch: object, field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        live_input_commands(batch)
    assert caught.value.field == field


def test_the_idle_clock_waits_while_a_person_holds_the_browser() -> None:
    conv = Conversation(validate_conversation_id("c1"), idle_timeout=10.0, last_active=0.0)
    handoff, _ = Handoff.offer("c1", "r", 600.0, now=0.0)
    conv.hand_over(handoff)
    assert conv.handed_over
    assert conv.due(now=10_000.0, max_lifetime=100.0) == (None, math.inf)
    with pytest.raises(IllegalTransition):
        conv.hand_over(Handoff.offer("c1", "again", 600.0, now=1.0)[0])  # one at a time
    assert conv.take_handoff_note() is None  # not over: nothing to say yet
    handoff.end("the person pressed Done", now=500.0)
    conv.handed_back(500.0)
    assert not conv.handed_over
    # The clock runs again, from the end of the hand-over.
    assert conv.due(now=550.0, max_lifetime=100.0) == (None, 600.0)
    note = conv.take_handoff_note()
    assert note is not None
    assert "pressed Done" in note
    assert conv.take_handoff_note() is None  # said once


async def test_deleting_the_conversation_ends_its_hand_over() -> None:
    conv = Conversation(validate_conversation_id("c1"), idle_timeout=10.0, last_active=0.0)
    handoff, _ = Handoff.offer("c1", "r", 600.0, now=0.0)
    conv.hand_over(handoff)
    conv.delete(CloseReason.DELETE)
    assert handoff.over
    assert handoff.end_event == "deleted"


def test_a_hand_over_without_a_reason_says_none_was_given() -> None:
    handoff, _ = Handoff.offer("c1", "  ", 600.0, now=0.0)
    assert "no reason given" in handoff.busy_message()
    assert "''" not in handoff.busy_message()
    handoff.end("the service is shutting down", 5.0, event="shutdown")
    assert "(no reason given)" in handoff.note(), handoff.note()
    given, _ = Handoff.offer("c2", "Sign in", 600.0, now=0.0)
    assert "(hand-over reason: 'Sign in')" in given.busy_message()
