"""Frozen records the manager hands to front ends: cleanup reports and session snapshots."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from chrome_launcher import ChromeState, KillReport

from ._handoff import HandoffInfo

# The values of SessionInfo.state: the browser's own state; "starting" also for a
# conversation whose call is launching its first browser; "pooled" for a browser launched
# ahead that no conversation has yet (its conversation_id is its pool slot's name).
POOLED = "pooled"
SESSION_STATES = (*(state.value for state in ChromeState), POOLED)


@dataclass(frozen=True)
class CleanupReport:
    """What ending one conversation's browser did. `survivors` > 0 or `errors` mean trouble."""

    conversation_id: str
    existed: bool
    pid: int | None = None
    browser_killed: bool = False
    sigkill_needed: bool = False
    survivors: int = 0
    files_removed: bool = False
    duration_s: float = 0.0
    errors: tuple[str, ...] = ()

    @classmethod
    def from_kill(cls, conversation_id: str, pid: int, kill: KillReport | None) -> CleanupReport:
        if kill is None:
            return cls(conversation_id, existed=True, pid=pid)
        return cls(
            conversation_id,
            existed=True,
            pid=pid,
            browser_killed=True,
            sigkill_needed=kill.sigkill_needed,
            survivors=kill.survivors,
            duration_s=kill.duration,
            errors=kill.errors,
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["errors"] = list(self.errors)
        return data


@dataclass(frozen=True)
class SessionInfo:
    """One row of the session inventory."""

    conversation_id: str
    pid: int | None
    state: str
    age_s: float
    idle_s: float
    idle_left_s: float
    calls: int
    last_error: str | None
    rss_bytes: int
    # The Chrome (`pid`) is shared with other conversations, each in a browser context of its
    # own (isolation "context"); `rss_bytes` is then the whole shared group's.
    shared: bool = False
    # Issue 21: a person holds the browser (or was offered it), with why and until when.
    handoff: HandoffInfo | None = None
    profile: str | None = None  # the persistent profile it is bound to (issue 21)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
