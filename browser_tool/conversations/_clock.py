"""The lifecycle clock: one task that sleeps until the earliest deadline of any conversation
(idle, lifetime, forget), or until a call starts or ends and deadlines move; so nobody
overstays, and virtual-clock tests see exact times. It only decides; `Lifecycle.expire` acts,
after re-checking that the decision still holds."""

from __future__ import annotations

import math

import trio

from ._lifecycle import Lifecycle


async def run_clock(lifecycle: Lifecycle) -> None:
    """Run until cancelled."""
    max_lifetime = lifecycle.settings.max_lifetime
    while True:
        now = trio.current_time()
        next_deadline = math.inf
        for conv in list(lifecycle.conversations.values()):
            decision, at = conv.due(now, max_lifetime)
            if decision is not None:
                lifecycle.expire(conv, decision)
            else:
                next_deadline = min(next_deadline, at)
        await lifecycle.wait_for_change(until=next_deadline)
