"""The CDP client (`open_cdp_connection`) against a scripted fake DevTools peer.

Charter: loopback only (127.0.0.1, kernel-chosen port); the test body scripts the peer, so the
order of every message is fixed. A "round trip" (one command answered) serves as the barrier
proving that every message the peer sent before it was processed, since the reader handles
messages in order. Timeouts run on trio's autojump clock and assert exact virtual times; no
test sleeps. Payloads pycdp_old rejects follow DESIGN.md §3 (the `Loopback` address space, the
missing `sameParty`), plus one truncated event.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import trio
import trio.testing
from trio_websocket import ConnectionClosed

from browser_tool._errors import (
    CdpCommandError,
    CdpConnectionError,
    CdpSessionDetachedError,
    CdpTimeoutError,
    InvalidInputError,
)
from browser_tool.cdp._commands import CdpResult
from browser_tool.cdp._connection import CdpConnection
from browser_tool.cdp._events import CdpEvent
from browser_tool.cdp._open import open_cdp_connection
from browser_tool.cdp._protocol import cdp
from tests.support.fake_cdp_peer import FakeCdpPeer, open_fake_cdp_peer

MIB = 1024 * 1024


@dataclass
class Call:
    """A command running in the background: its result or error once `done` is set."""

    result: Any = None
    error: Exception | None = None
    done: trio.Event = field(default_factory=trio.Event)


def start_call(nursery: trio.Nursery, fn: Callable[..., Awaitable[Any]], *args: Any) -> Call:
    call = Call()

    async def run() -> None:
        try:
            call.result = await fn(*args)
        except Exception as exc:
            call.error = exc
        finally:
            call.done.set()

    nursery.start_soon(run)
    return call


@asynccontextmanager
async def connected(**options: Any) -> AsyncIterator[tuple[FakeCdpPeer, CdpConnection]]:
    async with open_fake_cdp_peer() as peer, open_cdp_connection(peer.url, **options) as conn:
        yield peer, conn


async def round_trip(peer: FakeCdpPeer, conn: CdpConnection) -> None:
    async with trio.open_nursery() as nursery:
        call = start_call(nursery, conn.send, "Test.ping")
        command = await peer.receive_command()
        await peer.reply(command, {"pong": command["id"]})
    assert call.result == {"pong": command["id"]}


def drain(channel: trio.MemoryReceiveChannel[CdpEvent]) -> list[CdpEvent]:
    events = []
    while True:
        try:
            events.append(channel.receive_nowait())
        except trio.WouldBlock:
            return events


async def test_answers_out_of_order_reach_their_callers() -> None:
    async with connected() as (peer, conn):
        async with trio.open_nursery() as nursery:
            calls = [start_call(nursery, conn.send, f"Test.m{i}", {"i": i}) for i in range(3)]
            commands = [await peer.receive_command() for _ in range(3)]
            for command in sorted(commands, key=lambda c: -c["params"]["i"]):
                await peer.reply(command, {"echo": command["params"]["i"]})
        assert [call.result for call in calls] == [{"echo": 0}, {"echo": 1}, {"echo": 2}]
        assert sorted(c["method"] for c in commands) == ["Test.m0", "Test.m1", "Test.m2"]
        assert len({c["id"] for c in commands}) == 3
        stats = conn.statistics()
        assert (stats.commands_sent, stats.commands_ok, stats.pending) == (3, 3, 0)


async def test_error_answers_raise_command_errors() -> None:
    async with connected() as (peer, conn):
        async with trio.open_nursery() as nursery:
            failing = start_call(nursery, conn.send, "Runtime.evaluate", {"contextId": 9})
            malformed = start_call(nursery, conn.send, "Test.malformed")
            first, second = [await peer.receive_command() for _ in range(2)]
            if first["method"] != "Runtime.evaluate":
                first, second = second, first
            await peer.reply_error(first, -32000, "Cannot find context", "contextId 9")
            await peer.send({"id": second["id"]})  # an answer with neither result nor error
        assert isinstance(failing.error, CdpCommandError)
        assert failing.error.method == "Runtime.evaluate"
        assert (failing.error.code, failing.error.cdp_message) == (-32000, "Cannot find context")
        assert failing.error.data == "contextId 9"
        assert isinstance(malformed.error, CdpCommandError)
        assert (malformed.error.method, malformed.error.code) == ("Test.malformed", -32603)
        await round_trip(peer, conn)
        stats = conn.statistics()
        assert (stats.commands_failed, stats.invalid_messages, stats.commands_ok) == (2, 1, 1)


async def test_a_batch_is_sent_at_once_and_answers_in_its_own_order() -> None:
    async with connected() as (peer, conn):
        async with trio.open_nursery() as nursery:
            batch = start_call(
                nursery, conn.send_batch, [("A.one", {"n": 1}), ("A.two", None), ("A.three", {})]
            )
            # All three reach the peer before it answers any: nothing waits in between.
            commands = [await peer.receive_command() for _ in range(3)]
            assert [c["method"] for c in commands] == ["A.one", "A.two", "A.three"]
            for command in reversed(commands):
                await peer.reply(command, {"was": command["method"]})
        assert batch.result == [{"was": "A.one"}, {"was": "A.two"}, {"was": "A.three"}]
        assert conn.statistics().pending == 0


async def test_a_batch_raises_the_first_failure_after_every_answer() -> None:
    async with connected() as (peer, conn):
        async with trio.open_nursery() as nursery:
            batch = start_call(nursery, conn.send_batch, [("B.ok", None), ("B.bad", None)])
            ok, bad = [await peer.receive_command() for _ in range(2)]
            await peer.reply_error(bad, -32000, "no such thing")
            await peer.reply(ok, {})
        assert isinstance(batch.error, CdpCommandError)
        assert batch.error.method == "B.bad"
        stats = conn.statistics()
        assert (stats.commands_ok, stats.commands_failed, stats.pending) == (1, 1, 0)
        with pytest.raises(InvalidInputError, match="params"):  # nothing sent
            await conn.send_batch([("C.fine", None), ("C.nan", {"n": float("nan")})])
        assert conn.statistics().commands_sent == 2


async def test_socket_close_fails_every_pending_call_at_once() -> None:
    async with connected() as (peer, conn):
        with trio.fail_after(10):  # guards against a hang only; the calls have no timeout
            async with trio.open_nursery() as nursery:
                calls = [start_call(nursery, conn.send, "Test.wait", {"i": i}) for i in range(3)]
                for _ in range(3):
                    await peer.receive_command()
                assert conn.statistics().pending == 3
                await peer.close(1011, "browser crashed")
                await conn.wait_closed()
                await trio.testing.wait_all_tasks_blocked()
                assert all(call.done.is_set() for call in calls)
        assert conn.closed
        assert (
            conn.close_reason == "the WebSocket closed (code 1011 INTERNAL_ERROR: browser crashed)"
        )
        for call in calls:
            assert isinstance(call.error, CdpConnectionError)
            assert call.error.reason == conn.close_reason
        with pytest.raises(CdpConnectionError, match="browser crashed"):
            await conn.send("Test.after")
        stats = conn.statistics()
        assert (stats.commands_failed, stats.pending, stats.commands_sent) == (3, 0, 3)


async def test_sends_after_aclose_raise_and_aclose_is_idempotent() -> None:
    async with connected() as (peer, conn):
        await conn.aclose()
        await conn.aclose()
        assert conn.closed
        assert conn.close_reason == "the connection was closed by its owner"
        with pytest.raises(CdpConnectionError, match="closed by its owner"):
            await conn.send("Test.after")
        with pytest.raises(CdpConnectionError):
            async with conn.listen():
                pytest.fail("listening on a closed connection")
        peer_side = (await peer.connection()).closed
        assert peer_side is not None
        assert peer_side.code == 1000


async def test_messages_of_unknown_sessions_are_dropped_and_counted() -> None:
    async with connected() as (peer, conn), conn.listen("Test.tick") as events:
        await peer.event("Test.tick", {"n": 1}, session_id="S-unknown")
        await round_trip(peer, conn)
        assert drain(events) == []
        assert conn.statistics().unknown_session_messages == 1

        session = conn.register_session("S-unknown")
        await peer.event("Test.tick", {"n": 2}, session_id="S-unknown")
        await round_trip(peer, conn)
        assert drain(events) == [CdpEvent("Test.tick", {"n": 2}, "S-unknown", None)]

        conn.forget_session(session.session_id)
        await peer.event("Test.tick", {"n": 3}, session_id="S-unknown")
        await round_trip(peer, conn)
        assert drain(events) == []
        assert conn.statistics().unknown_session_messages == 2


async def test_unknown_event_is_delivered_raw() -> None:
    # Chromium 156 sends it; pycdp_old has never heard of it.
    params = {"player": {"playerId": "p1", "domNodeId": 12}}
    async with connected() as (peer, conn), conn.listen("Media.playerCreated") as events:
        await peer.event("Media.playerCreated", params)
        await round_trip(peer, conn)
        assert drain(events) == [CdpEvent("Media.playerCreated", params, None, None)]
        assert conn.statistics().events_unparsed == 1


async def test_known_event_comes_typed() -> None:
    async with connected() as (peer, conn), conn.listen("Page.loadEventFired") as events:
        await peer.event("Page.loadEventFired", {"timestamp": 1234.5})
        await round_trip(peer, conn)
        [event] = drain(events)
        assert isinstance(event.typed, cdp.page.LoadEventFired)
        assert event.typed.timestamp == 1234.5
        assert event.params == {"timestamp": 1234.5}
        assert conn.statistics().events_unparsed == 0


_EXTRA_INFO = {"requestId": "7", "blockedCookies": [], "headers": {}, "statusCode": 200}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        # Chromium 156 reports requests to 127.0.0.1 in the `Loopback` address space.
        (
            "Network.responseReceivedExtraInfo",
            {**_EXTRA_INFO, "resourceIPAddressSpace": "Loopback"},
        ),
        ("Network.requestWillBeSent", {"requestId": "7", "documentURL": "http://127.0.0.1/"}),
    ],
)
async def test_known_event_that_does_not_parse_is_delivered_raw(
    method: str, params: dict[str, Any]
) -> None:
    async with connected() as (peer, conn), conn.listen(method) as events:
        await peer.event(method, params)
        await round_trip(peer, conn)
        assert drain(events) == [CdpEvent(method, params, None, None)]
        stats = conn.statistics()
        assert (stats.events_received, stats.events_unparsed, stats.commands_ok) == (1, 1, 1)


async def test_invalid_messages_are_counted_and_the_reader_survives() -> None:
    garbage: list[str | bytes] = [
        "{not json",
        "[1, 2]",
        "42",
        b"\xff\xfe\x00",
        "[" * 100_000,  # deeper than the JSON parser recurses
        '{"id": "7", "result": {}}',
        '{"params": {}}',
        '{"method": "Test.x", "params": []}',
        '{"sessionId": 5, "method": "Test.x"}',
    ]
    async with connected() as (peer, conn):
        for message in garbage:
            await peer.send_raw(message)
        await round_trip(peer, conn)
        assert conn.statistics().invalid_messages == len(garbage)


async def test_a_30_mib_answer_arrives_intact() -> None:
    data = "".join(f"{i:08x}" for i in range(30 * MIB // 8))
    async with connected() as (peer, conn):
        async with trio.open_nursery() as nursery:
            call = start_call(nursery, conn.send, "Page.captureScreenshot")
            await peer.reply(await peer.receive_command(), {"data": data})
        assert call.error is None
        assert call.result == {"data": data}


async def test_a_message_over_max_message_size_closes_with_a_clear_reason() -> None:
    async with connected(max_message_size=1024) as (peer, conn):
        async with trio.open_nursery() as nursery:
            call = start_call(nursery, conn.send, "Page.captureScreenshot")
            await peer.reply(await peer.receive_command(), {"data": "x" * 2048})
        assert isinstance(call.error, CdpConnectionError)
        assert "code 1009" in call.error.reason
        assert "larger than max_message_size" in call.error.reason


async def test_timeout_fails_at_the_exact_virtual_time(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with connected() as (peer, conn):
        start = trio.current_time()
        with pytest.raises(CdpTimeoutError) as info:
            await conn.send("Page.navigate", {"url": "http://127.0.0.1/"}, timeout=7.5)
        assert trio.current_time() == start + 7.5
        assert (info.value.method, info.value.timeout) == ("Page.navigate", 7.5)
        assert conn.statistics().pending == 0
        await peer.reply(await peer.receive_command(), {"frameId": "late"})
        await round_trip(peer, conn)
        stats = conn.statistics()
        assert (stats.commands_timed_out, stats.unknown_response_ids) == (1, 1)


async def test_cancelled_send_leaves_no_pending_entry() -> None:
    async with connected() as (peer, conn):
        async with trio.open_nursery() as nursery:
            scope = trio.CancelScope()

            async def doomed() -> None:
                with scope:
                    await conn.send("Test.slow")

            nursery.start_soon(doomed)
            command = await peer.receive_command()
            assert conn.statistics().pending == 1
            scope.cancel()
        assert scope.cancelled_caught
        assert conn.statistics().pending == 0
        await peer.reply(command, {"late": True})
        await round_trip(peer, conn)
        assert conn.statistics().unknown_response_ids == 1


async def test_slow_listener_loses_the_newest_events_alone() -> None:
    async with connected() as (peer, conn):
        async with conn.listen("Test.tick", buffer=2) as slow, conn.listen("Test.tick") as fast:
            for n in range(5):
                await peer.event("Test.tick", {"n": n})
            await round_trip(peer, conn)
            assert [event.params["n"] for event in drain(slow)] == [0, 1]
            assert [event.params["n"] for event in drain(fast)] == [0, 1, 2, 3, 4]
        stats = conn.statistics()
        assert (stats.events_received, stats.events_delivered) == (5, 7)
        assert stats.events_dropped_overflow == 3


async def test_listeners_end_when_the_connection_dies() -> None:
    received: list[str] = []
    async with connected() as (peer, conn):
        async with conn.listen() as events, trio.open_nursery() as nursery:

            async def collect() -> None:
                async for event in events:
                    received.append(event.method)

            nursery.start_soon(collect)
            await peer.event("Test.one", {})
            await peer.close(1001, "going away")
        assert received == ["Test.one"]
        assert conn.closed


async def test_execute_returns_typed_values() -> None:
    async with connected() as (peer, conn):
        async with trio.open_nursery() as nursery:
            cmd = cdp.runtime.evaluate(expression="1 + 1", return_by_value=True)
            call = start_call(nursery, conn.execute, cmd)
            command = await peer.receive_command()
            await peer.reply(command, {"result": {"type": "number", "value": 2}})
        assert command["method"] == "Runtime.evaluate"
        assert command["params"] == {"expression": "1 + 1", "returnByValue": True}
        remote_object, exception = call.result.value
        assert (remote_object.value, exception) == (2, None)
        with pytest.raises(InvalidInputError):
            await conn.execute(cmd)


async def test_execute_returns_raw_when_the_result_does_not_parse(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Chromium 156 no longer sends `sameParty`, which pycdp_old requires.
    cookie = {
        "name": "a",
        "value": "b",
        "domain": "127.0.0.1",
        "path": "/",
        "expires": -1,
        "size": 2,
        "httpOnly": False,
        "secure": False,
        "session": True,
        "priority": "Medium",
        "sourceScheme": "NonSecure",
        "sourcePort": 8080,
    }
    caplog.set_level(logging.INFO, logger="browser_tool.cdp")
    async with connected() as (peer, conn):
        results = []
        for _ in range(2):
            async with trio.open_nursery() as nursery:
                call = start_call(nursery, conn.execute, cdp.network.get_cookies())
                await peer.reply(await peer.receive_command(), {"cookies": [cookie]})
            results.append(call.result)
        assert results == [CdpResult({"cookies": [cookie]}, None)] * 2
        assert conn.statistics().results_unparsed == 2
    logged = [r for r in caplog.records if "Network.getCookies does not parse" in r.message]
    assert len(logged) == 1


async def test_attach_to_target_registers_the_session_before_its_first_event() -> None:
    async with connected() as (peer, conn), conn.listen("Page.loadEventFired") as events:
        async with trio.open_nursery() as nursery:
            attach = start_call(nursery, conn.attach_to_target, "T1")
            command = await peer.receive_command()
            await peer.reply(command, {"sessionId": "S1"})
            # Sent before the caller has had a chance to run again.
            await peer.event("Page.loadEventFired", {"timestamp": 1.0}, session_id="S1")
        assert command["method"] == "Target.attachToTarget"
        assert command["params"] == {"targetId": "T1", "flatten": True}
        await round_trip(peer, conn)
        assert [event.session_id for event in drain(events)] == ["S1"]
        session = attach.result
        async with trio.open_nursery() as nursery:
            call = start_call(nursery, session.send, "Runtime.enable")
            command = await peer.receive_command()
            await peer.reply(command, {})
        assert (command["method"], command["sessionId"]) == ("Runtime.enable", "S1")
        assert call.result == {}


async def test_any_attach_answer_registers_its_session_in_the_reader() -> None:
    # Through `execute` nobody calls register_session: only the reader can have done it.
    async with connected() as (peer, conn), conn.listen("Page.loadEventFired") as events:
        async with trio.open_nursery() as nursery:
            cmd = cdp.target.attach_to_target(cdp.target.TargetID("T1"), flatten=True)
            attach = start_call(nursery, conn.execute, cmd)
            await peer.reply(await peer.receive_command(), {"sessionId": "S1"})
        assert attach.result.value == cdp.target.SessionID("S1")
        await peer.event("Page.loadEventFired", {"timestamp": 1.0}, session_id="S1")
        await round_trip(peer, conn)
        assert [event.session_id for event in drain(events)] == ["S1"]


async def test_sessions_follow_attached_and_detached_events() -> None:
    async with connected() as (peer, conn), conn.listen("Test.tick") as events:
        await peer.event("Target.attachedToTarget", {"sessionId": "S2", "targetInfo": {}})
        await peer.event("Test.tick", {}, session_id="S2")
        await round_trip(peer, conn)
        assert [event.session_id for event in drain(events)] == ["S2"]
        async with trio.open_nursery() as nursery:
            call = start_call(nursery, conn.session("S2").send, "Runtime.evaluate")
            await peer.receive_command()
            await peer.event("Target.detachedFromTarget", {"sessionId": "S2"})
        assert isinstance(call.error, CdpSessionDetachedError)  # the target went: no crash
        assert "detached" in call.error.reason
        await peer.event("Test.tick", {}, session_id="S2")
        await round_trip(peer, conn)
        assert drain(events) == []
        assert conn.statistics().unknown_session_messages == 1


async def test_body_exception_propagates_as_itself() -> None:
    async with open_fake_cdp_peer() as peer:
        with pytest.raises(KeyError) as info:
            async with open_cdp_connection(peer.url) as conn:
                raise KeyError("boom")
        assert type(info.value) is KeyError
        assert not isinstance(info.value.__context__, BaseExceptionGroup)
        assert conn.close_reason == "the connection was closed by its owner"


async def test_cancelled_owner_closes_the_socket_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with open_fake_cdp_peer() as peer:
        with trio.CancelScope() as scope:
            async with open_cdp_connection(peer.url) as conn:
                start = trio.current_time()
                scope.cancel()
                await trio.sleep_forever()
        assert scope.cancelled_caught
        assert conn.closed
        # No polite close handshake to wait for (the close timeout would show as a jump).
        assert trio.current_time() == start
        peer_websocket = await peer.connection()
        with pytest.raises(ConnectionClosed) as info:
            await peer_websocket.get_message()
        assert info.value.reason is not None
        assert info.value.reason.code == 1006  # the TCP stream closed under it


async def test_bad_params_and_timeouts_are_refused_before_sending() -> None:
    async with connected() as (peer, conn):
        with pytest.raises(InvalidInputError, match="params"):
            await conn.send("Test.x", {"n": float("nan")})
        with pytest.raises(InvalidInputError, match="timeout"):
            await conn.send("Test.x", timeout=-1)
        await round_trip(peer, conn)
        assert conn.statistics().commands_sent == 1


async def test_refused_connection_is_a_connection_error() -> None:
    async with open_fake_cdp_peer() as peer:
        url = peer.url
    # The peer has stopped: nothing listens on its port any more.
    with pytest.raises(CdpConnectionError, match="could not connect"):
        async with open_cdp_connection(url):
            pytest.fail("connected to a stopped peer")
    with pytest.raises(InvalidInputError, match="url"):
        async with open_cdp_connection("http://127.0.0.1:1/"):
            pytest.fail("connected over http")


async def test_no_handshake_within_connect_timeout(autojump_clock: trio.testing.MockClock) -> None:
    # A listener that accepts TCP (the kernel does) but never answers the upgrade request.
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    try:
        start = trio.current_time()
        with pytest.raises(CdpConnectionError, match="no WebSocket handshake within 3s"):
            async with open_cdp_connection(f"ws://127.0.0.1:{port}/", connect_timeout=3):
                pytest.fail("connected without a handshake")
        assert trio.current_time() == start + 3
    finally:
        for listener in listeners:
            await listener.aclose()
