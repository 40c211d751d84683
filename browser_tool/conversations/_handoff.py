"""Handoff: one hand-over of a conversation's browser to a person (issue 21), as a record.

    OFFERED ──the page spends the token (claim)──▶ HELD
       │                                            │
       └──── Done, expiry, delete, shutdown, the browser gone ────▶ OVER (final)

From the moment it is offered until it is over, the conversation's calls wait (within their
own timeouts) and its idle clock does not run. The link's token and the page's secret are kept
only as SHA-256 digests and compared in constant time: nothing here can leak them into a log or
an inventory. The token is spent by the first claim; the page then proves itself with a secret
of its own (an HttpOnly cookie), so the link works once and the page keeps working on reload.

Pure apart from one trio.Event; the registry that opens and ends them is `_handoffs`.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

import trio

from .._duration import format_duration
from .._errors import HandoffError, InvalidInputError

DEFAULT_TTL = 600.0
MAX_TTL = 3600.0
MAX_REASON = 500  # characters of the reason kept (it is shown to the person and the model)

# One message for every refused link or secret: which rule failed is nobody's business.
REFUSED = (
    "This hand-over link is not valid: it was used already, it expired, or it was not issued "
    "for this conversation. Ask for a new one."
)


class HandoffState(enum.Enum):
    OFFERED = "offered"  # the link is out; nobody opened it yet
    HELD = "held"  # a person's page spent the token and holds the browser
    OVER = "over"  # final: Done, expiry, delete, shutdown, or the browser went away


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


@dataclass(eq=False)
class Handoff:
    """Built only by `Handoff.offer`; changed only by its event methods."""

    conversation_id: str
    reason: str
    offered_at: float  # trio time
    expires_at: float  # trio time: the whole hand-over ends then, held or not
    _token: bytes  # digest of the link's token
    state: HandoffState = HandoffState.OFFERED
    held_at: float | None = None
    ended_at: float | None = None
    end_reason: str = ""  # said in the note: "pressed Done", "the link expired", ...
    end_event: str = ""  # the same as a metric label
    url: str = ""  # the page's address when the hand-over ended (or last seen)
    ended: trio.Event = field(default_factory=trio.Event)
    _secret: bytes | None = None  # digest of the page's own secret, once claimed

    @classmethod
    def offer(
        cls, conversation_id: str, reason: str, ttl: float, now: float
    ) -> tuple[Handoff, str]:
        """A new hand-over and its link's token (256 random bits, URL-safe)."""
        token = secrets.token_urlsafe(32)
        handoff = cls(conversation_id, reason[:MAX_REASON], now, now + ttl, _digest(token))
        return handoff, token

    @property
    def over(self) -> bool:
        return self.state is HandoffState.OVER

    def claim(self, token: str, now: float) -> str:
        """OFFERED -> HELD: spend the link's token; return the page's own secret.

        Raises HandoffError("refused") for a wrong or spent token, or past the expiry."""
        if (
            self.state is not HandoffState.OFFERED
            or now >= self.expires_at
            or not hmac.compare_digest(_digest(token), self._token)
        ):
            raise HandoffError("refused", REFUSED)
        secret = secrets.token_urlsafe(32)
        self._secret = _digest(secret)
        self.state = HandoffState.HELD
        self.held_at = now
        return secret

    def admits(self, secret: str | None, now: float) -> bool:
        """Whether `secret` is this held hand-over's page secret (and it has not expired)."""
        return (
            secret is not None
            and self.state is HandoffState.HELD
            and self._secret is not None
            and now < self.expires_at
            and hmac.compare_digest(_digest(secret), self._secret)
        )

    def was_held_by(self, secret: str | None) -> bool:
        """Whether `secret` is the page secret this hand-over gave out, held or over: that page
        is told why the hand-over ended rather than refused as a stranger."""
        return (
            secret is not None
            and self._secret is not None
            and hmac.compare_digest(_digest(secret), self._secret)
        )

    def end(self, why: str, now: float, url: str = "", *, event: str = "ended") -> bool:
        """-> OVER, once; False when it was over already. `why` completes "the hand-over
        ended because ..." in the note; `event` is the end's metric label (done, expired,
        deleted, browser_gone, shutdown)."""
        if self.over:
            return False
        self.state = HandoffState.OVER
        self.end_event = event
        self.ended_at = now
        self.end_reason = why
        self.url = url or self.url
        self.ended.set()
        return True

    async def wait_over(self, deadline: float) -> bool:
        """Wait until it is over or trio time `deadline`; True when it is over."""
        with trio.move_on_at(deadline):
            await self.ended.wait()
        return self.over

    @property
    def _why(self) -> str:
        return f"hand-over reason: {self.reason!r}" if self.reason.strip() else "no reason given"

    def busy_message(self) -> str:
        """The error of a call whose timeout ended while a person held the browser."""
        return (
            f"A person is using this conversation's browser ({self._why}); "
            "the call waited for them to press Done until its timeout and was not run. Retry "
            "later, or with a longer timeout."
        )

    def already_open_message(self, now: float) -> str:
        """The answer to a second request for a person while this hand-over is open."""
        left = format_duration(max(1, round(self.expires_at - now)))
        return (
            f"A person was already asked to take over this browser ({self._why}); that "
            f"hand-over is still open for up to {left}, and its link was given in the result "
            "that opened it (a link is shown once). Your next browser call waits for the person "
            "to press Done, within its timeout."
        )

    def note(self) -> str:
        """What the model is told by the first result after the hand-over ended."""
        assert self.ended_at is not None
        where = f" The page is now at {self.url}." if self.url else ""
        if self.held_at is None:
            waited = format_duration(round(self.ended_at - self.offered_at))
            return (
                f"Note: the browser was offered to a person ({self._why}) for "
                f"{waited}, but nobody opened the link; the hand-over ended because "
                f"{self.end_reason}.{where}"
            )
        used = format_duration(round(self.ended_at - self.held_at))
        return (
            f"Note: a person used the browser for {used} ({self._why}); "
            f"the hand-over ended because {self.end_reason}.{where} Look at the page "
            "(e.g. browser_snapshot) before acting: it may have changed."
        )

    def info(self, now: float) -> HandoffInfo:
        return HandoffInfo(
            reason=self.reason,
            state=self.state.value,
            age_s=now - self.offered_at,
            held_s=(now - self.held_at) if self.held_at is not None else None,
            expires_in_s=max(0.0, self.expires_at - now),
        )


@dataclass(frozen=True)
class HandoffInfo:
    """A hand-over as the session inventory shows it (no token, no secret)."""

    reason: str
    state: str  # "offered" or "held"
    age_s: float
    held_s: float | None
    expires_in_s: float

    def to_json(self) -> dict[str, object]:
        return {
            "reason": self.reason,
            "state": self.state,
            "age_s": self.age_s,
            "held_s": self.held_s,
            "expires_in_s": self.expires_in_s,
        }


def check_ttl(ttl: float) -> float:
    """`ttl` if it is a hand-over's allowed life (over 0, at most an hour)."""
    if not 0 < ttl <= MAX_TTL:
        raise InvalidInputError(
            "ttl", f"must be a duration over 0 and at most {format_duration(MAX_TTL)}", ttl
        )
    return ttl
