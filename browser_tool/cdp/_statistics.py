"""Counters of one CDP connection, and the frozen record `statistics()` returns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class CdpStatistics:
    """A snapshot of one connection's counters (all since it opened)."""

    commands_sent: int
    commands_ok: int
    #: answered with a protocol error, or failed because the connection or session closed
    commands_failed: int
    commands_timed_out: int
    #: commands waiting for their answer right now
    pending: int
    #: events from the browser or a registered session
    events_received: int
    #: event copies handed to listeners (one event can go to several)
    events_delivered: int
    #: event copies dropped because a listener's buffer was full
    events_dropped_overflow: int
    #: events delivered without a typed value (unknown to pycdp_old, or did not parse)
    events_unparsed: int
    #: results returned with `value=None` because pycdp_old could not parse them
    results_unparsed: int
    #: messages for a session that is not registered (dropped)
    unknown_session_messages: int
    #: messages that are not JSON objects of a known shape (dropped)
    invalid_messages: int
    #: responses whose id no caller waits for (late answers to timed-out calls; dropped)
    unknown_response_ids: int


@dataclass
class CdpCounters:
    """The live, mutable counters behind CdpStatistics; owned by one connection."""

    commands_sent: int = 0
    commands_ok: int = 0
    commands_failed: int = 0
    commands_timed_out: int = 0
    events_received: int = 0
    events_delivered: int = 0
    events_dropped_overflow: int = 0
    events_unparsed: int = 0
    results_unparsed: int = 0
    unknown_session_messages: int = 0
    invalid_messages: int = 0
    unknown_response_ids: int = 0

    def snapshot(self, *, pending: int) -> CdpStatistics:
        return CdpStatistics(pending=pending, **dataclasses.asdict(self))
