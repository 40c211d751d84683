"""The exceptions of browser_tool, in one tree.

    BrowserToolError                    root: everything browser_tool raises on purpose
    ├── InvalidInputError               bad input; names the field and the rule (`field`, `rule`)
    │   └── UnknownToolError            no tool of that name (tools/_registry.py: it lists them)
    ├── CdpError                        talking to Chrome failed
    │   ├── CdpConnectionError          could not connect, or the socket closed (`reason`)
    │   │   └── CdpTargetCrashedError   the session's renderer crashed: its commands get no answer
    │   ├── CdpCommandError             Chrome answered a command with an error (`method`, `code`)
    │   ├── CdpTimeoutError             no answer within the command's timeout (`method`, `timeout`)
    │   └── ResultParseError            a result pycdp_old cannot type; the raw dict is used instead
    ├── SessionError                    a conversation's browser could not serve the call
    │   ├── SessionClosedError          the session was killed (delete hook, reaper, shutdown)
    │   ├── BrowserLaunchError          Chrome did not start (wraps chrome_launcher.LaunchError)
    │   └── HandoffError                a hand-over to a person cannot be opened or used (`kind`)
    ├── ToolError                       a tool failed in a way the model should read (`message`)
    ├── ConflictError                   the request clashes with the state (`code`): a profile
    │                                   held by another conversation, a conversation started
    └── DoorError                       a front end (server, CLI) could not start or serve
        ├── ListenPolicyError           a non-loopback address without a token (the CLI exits 2)
        ├── ListenError                 the address could not be bound (the CLI exits 1)
        ├── HttpError                   answer this request with `status` and error `code`
        ├── ClientGone                  the HTTP client hung up; nobody is left to answer
        ├── NoConversationError         an MCP request names no conversation
        └── ServiceError                the CLI could not reach the service (`exit_code`)

Nothing outside browser_tool sees trio_websocket, json or OSError exceptions: they are
translated at the call that raises them.

`CloseReason` (why a browser ended) lives here too: errors, results, logs and metric labels
all say it, from the browser layer up.
"""

from __future__ import annotations

import enum


class CloseReason(enum.StrEnum):
    """Why a browser (a conversation's, a pooled or a shared one) ended. A `StrEnum`: its value
    is the text results, logs and metric labels carry."""

    CRASH = "crash"  # Chrome exited, or its connection dropped, without being asked to
    IDLE = "idle"  # the conversation was idle for its idle timeout
    LIFETIME = "lifetime"  # the browser reached `max_lifetime`
    RESET = "reset"  # reset_session, or a launch or hand-over stopped half-way
    DELETE = "delete"  # kill_session: the conversation is gone
    SHUTDOWN = "shutdown"  # the manager (or the shared Chrome under a context) is closing
    LINGER = "linger"  # a shared Chrome stayed empty for `shared_browser_linger`
    REAPER = "reaper"  # an orphan of an earlier run, killed at start-up
    # issue 22, the watchdog between calls:
    UNRESPONSIVE = "unresponsive"  # the browser did not answer a probe after a call timed out
    MEMORY = "memory"  # its processes used more than `max_browser_memory` between calls


class BrowserToolError(Exception):
    """Root of every error browser_tool raises on purpose."""


class InvalidInputError(BrowserToolError):
    """Input broke a rule. `field` names the input, `rule` says what it must be."""

    def __init__(self, field: str, rule: str, value: object = None) -> None:
        self.field = field
        self.rule = rule
        self.value = value
        super().__init__(f"Invalid input {field!r}: {rule}")


class CdpError(BrowserToolError):
    """Talking to Chrome over the DevTools protocol failed."""


class CdpConnectionError(CdpError):
    """The connection could not be opened, or it closed. Pending commands fail with this."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"CDP connection closed: {reason}")


class CdpTargetCrashedError(CdpConnectionError):
    """The target of a session crashed (Inspector.targetCrashed): the commands it had pending
    fail with this at once, since no answer will come."""


class CdpSessionDetachedError(CdpConnectionError):
    """Chrome detached a session from its target (Target.detachedFromTarget): the target went
    away (a tab that closed itself), it did not crash (a crash is CdpTargetCrashedError, and
    its session stays attached). The session's pending commands fail with this."""


class CdpCommandError(CdpError):
    """Chrome answered `method` with a protocol error."""

    def __init__(self, method: str, code: int, message: str, data: object = None) -> None:
        self.method = method
        self.code = code
        self.cdp_message = message
        self.data = data
        detail = f" ({data})" if data else ""
        super().__init__(f"{method} failed: {message}{detail} [code {code}]")


class CdpTimeoutError(CdpError):
    """`method` got no answer within `timeout` seconds; `shown` is that timeout as
    `format_duration` writes it (the raiser formats it: this module imports nothing)."""

    def __init__(self, method: str, timeout: float, shown: str) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(f"{method} got no answer within {shown}")


class SessionError(BrowserToolError):
    """A conversation's browser could not serve the call."""


class SessionClosedError(SessionError):
    """The session was killed while the call waited or ran (`reason`: delete, idle, ...)."""

    def __init__(self, conversation_id: str, reason: str) -> None:
        self.conversation_id = conversation_id
        self.reason = reason
        super().__init__(
            f"Browser session of conversation {conversation_id!r} was closed ({reason})"
        )


class BrowserLaunchError(SessionError):
    """Chrome could not be started for a conversation."""


class HandoffError(SessionError):
    """A hand-over of the browser to a person (issue 21) cannot be opened or used. `kind`:
    "refused" (a hand-over link or page secret that is not, or no longer, valid: one message
    for every cause, so a guesser learns nothing), "ended" (the hand-over is over), "busy" (one
    is open already), "unserved" (no HTTP service serves the live view in this process)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class ToolError(BrowserToolError):
    """A tool failed; the message is written for the model to read."""


class ConflictError(BrowserToolError):
    """The request cannot be done in the state things are in (issue 21: a profile held by
    another conversation, a binding after the first call, profiles in context mode). `code` is
    a stable identifier; the HTTP door answers 409 with it."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ResultParseError(CdpError):
    """pycdp_old could not turn a command's raw result into its typed value. The connection
    catches it and returns the raw result with `value=None`; callers never see it."""


class DoorError(BrowserToolError):
    """A front end (the HTTP or MCP server, the CLI) could not start or serve a request."""


class ListenPolicyError(DoorError):
    """Serving on this address without a token is refused (the CLI exits 2)."""


class ListenError(DoorError):
    """The service could not bind its address (in use, not ours, ...); the CLI exits 1."""


class HttpError(DoorError):
    """Answer the request with `status` and the error shape; `code` is a stable identifier."""

    def __init__(
        self, status: int, code: str, message: str, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


class ClientGone(DoorError):
    """The client disconnected before its answer was ready; nobody is left to answer."""


class NoConversationError(DoorError):
    """This MCP request cannot be tied to a conversation; the message says what the client
    should do instead. It becomes an error result."""


class ServiceError(DoorError):
    """The CLI could not reach the service, or it refused; `exit_code` says which kind."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code
