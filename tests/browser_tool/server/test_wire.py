"""`while_connected` on scripted ASGI receive channels, no server: the work's result and its
exceptions come back as themselves (never in a group), and a disconnect cancels the work."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from browser_tool import ClientGone
from browser_tool.server._wire import Message, while_connected


async def test_the_work_result_comes_back() -> None:
    send, receive = trio.open_memory_channel[Message](1)

    async def work() -> int:
        return 42

    async with send, receive, trio.open_nursery() as nursery:
        assert await while_connected(nursery, receive.receive, work) == 42


async def test_an_exception_of_the_work_passes_through_as_itself() -> None:
    send, receive = trio.open_memory_channel[Message](1)

    async def work() -> int:
        raise ValueError("bad input")

    async with send, receive, trio.open_nursery() as nursery:
        with pytest.raises(ValueError, match="bad input"):
            await while_connected(nursery, receive.receive, work)


async def test_a_disconnect_cancels_the_work(autojump_clock: trio.testing.MockClock) -> None:
    send, receive = trio.open_memory_channel[Message](2)
    cancelled = False

    async def work() -> int:
        nonlocal cancelled
        try:
            await trio.sleep(600)
        except trio.Cancelled:
            cancelled = True
            raise
        return 1

    async with send, receive, trio.open_nursery() as nursery:
        await send.send({"type": "http.request", "body": b"", "more_body": False})
        await send.send({"type": "http.disconnect"})
        with pytest.raises(ClientGone):
            await while_connected(nursery, receive.receive, work)
    assert cancelled
    assert trio.current_time() == 0  # stopped at once, not after the work's own 600 s
