"""Duration strings in tool inputs, and durations in messages.

Charter: parsing and formatting are pure and synchronous. Every accepted form maps to an exact
number of seconds; every refused form raises InvalidInputError naming the field, the rule and
the value; formatting reads back to the same number. The last tests check that a message that
shows a duration prints it as `format_duration` does ("1m30s", "500ms", never "90s" or
"0.5s"), met on a loopback listener or a fake CDP peer under the autojump clock.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing

from browser_tool import CdpConnectionError, CdpTimeoutError, open_cdp_connection
from browser_tool._duration import format_duration, parse_duration
from browser_tool._errors import InvalidInputError
from tests.support.fake_cdp_peer import open_fake_cdp_peer


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15s", 15.0),
        ("500ms", 0.5),
        ("1.5s", 1.5),
        ("2m", 120.0),
        ("1m30s", 90.0),
        ("1h", 3600.0),
        ("0.5h", 1800.0),
        (".5s", 0.5),
        ("1.s", 1.0),
        ("1m500ms", 60.5),
        ("  15s\n", 15.0),
        ("600s", 600.0),
        ("1ms", 0.001),
    ],
)
def test_accepts(text: str, seconds: float) -> None:
    assert parse_duration(text, maximum=3600.0) == pytest.approx(seconds, abs=1e-12)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "-3s",
        "+3s",
        "0s",
        "0ms",
        "15",
        "15 s",
        "250us",
        "10ns",
        "1d",
        "s",
        "1.5.5s",
        "1e3s",
        "15S",
        "inf s",
        "nan",
        "1s" * 100,
        15,
        1.5,
        None,
        True,
        ["15s"],
    ],
)
def test_refuses(value: object) -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_duration(value)
    error = info.value
    assert error.field == "timeout"
    assert error.value == value
    assert "greater than 0 and at most 10m" in error.rule
    assert str(error).startswith('Invalid input \'timeout\': a duration like "15s" or "500ms"')
    assert str(error).endswith(f"got {value!r}")


def test_error_message_reads_as_documented() -> None:
    with pytest.raises(InvalidInputError) as info:
        parse_duration("-3s")
    assert str(info.value) == (
        'Invalid input \'timeout\': a duration like "15s" or "500ms", '
        "greater than 0 and at most 10m; got '-3s'"
    )


def test_maximum_is_inclusive_and_named_in_the_error() -> None:
    assert parse_duration("30s", field="wait", maximum=30.0) == 30.0
    with pytest.raises(InvalidInputError) as info:
        parse_duration("30.001s", field="wait", maximum=30.0)
    assert info.value.field == "wait"
    assert "at most 30s" in info.value.rule


def test_default_maximum_is_ten_minutes() -> None:
    assert parse_duration("10m") == 600.0
    with pytest.raises(InvalidInputError):
        parse_duration("10m1ms")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (15.0, "15s"),
        (0.5, "500ms"),
        (1.5, "1.5s"),
        (120.0, "2m"),
        (90.0, "1m30s"),
        (600.0, "10m"),
        (3600.0, "1h"),
        (3661.5, "1h1m1.5s"),
        (0.0015, "1.5ms"),
        (59.999999, "59.999999s"),
        (0.0, "0s"),
        (-2.0, "-2s"),
    ],
)
def test_format(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("seconds", [0.001, 0.25, 1.0, 14.5, 61.25, 599.999, 7322.125])
def test_format_reads_back(seconds: float) -> None:
    assert parse_duration(format_duration(seconds), maximum=86400.0) == pytest.approx(seconds)


async def test_a_command_timeout_is_printed_as_a_duration(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_fake_cdp_peer() as peer, open_cdp_connection(peer.url) as conn:
        with pytest.raises(CdpTimeoutError) as info:
            await conn.send("Runtime.evaluate", {"expression": "1"}, timeout=0.5)
    assert str(info.value) == "Runtime.evaluate got no answer within 500ms"


async def test_a_connect_timeout_is_printed_as_a_duration(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A listener that accepts TCP (the kernel does) but never answers the upgrade request.
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    try:
        with pytest.raises(CdpConnectionError, match=r"no WebSocket handshake within 1m30s$"):
            async with open_cdp_connection(f"ws://127.0.0.1:{port}/", connect_timeout=90):
                pytest.fail("connected without a handshake")
    finally:
        for listener in listeners:
            await listener.aclose()
