"""first_of: wait for whichever of several waits finishes first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio


async def first_of(**waits: Callable[[], Awaitable[object]]) -> str:
    """Run every wait; return the name of the first to finish and cancel the rest.

    Exceptions from a wait propagate (as themselves, not in a group, when only one failed).
    """
    winner = ""
    try:
        async with trio.open_nursery() as nursery:
            for name, wait in waits.items():

                async def run(
                    name: str = name, wait: Callable[[], Awaitable[object]] = wait
                ) -> None:
                    nonlocal winner
                    await wait()
                    winner = winner or name
                    nursery.cancel_scope.cancel()

                nursery.start_soon(run)
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    return winner
