"""Two task patterns written once: what an exception group stands for, and a race of waits.

trio's nurseries are strict: a body that raises X comes out as a group holding X (one level per
nursery), and a task cancelled beside it adds a Cancelled. Callers of our functions and context
managers should see X itself; `sole_exception` finds it and `raise_sole` raises it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NoReturn

import trio


def sole_exception(exc: BaseException) -> BaseException:
    """What `exc` stands for: through nested groups, the one exception that is not a
    Cancelled (or a Cancelled, when that is all there is). A group holding several real
    errors stands for itself and is returned as it is."""
    while isinstance(exc, BaseExceptionGroup):
        real = [leaf for leaf in exc.exceptions if not isinstance(leaf, trio.Cancelled)]
        if len(real) > 1:
            return exc
        exc = real[0] if real else exc.exceptions[0]
    return exc


def raise_sole(group: BaseExceptionGroup[BaseException]) -> NoReturn:
    """Raise `sole_exception(group)`, with its own context (not the group that held it)."""
    leaf = sole_exception(group)
    if leaf is group:
        raise group
    context = leaf.__context__
    try:
        raise leaf
    finally:
        leaf.__context__ = context


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
        raise_sole(group)
    return winner
