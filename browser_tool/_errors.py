"""The exceptions of browser_tool, in one tree.

    BrowserToolError                    root: everything browser_tool raises on purpose
    ├── InvalidInputError               bad input; names the field and the rule (`field`, `rule`)
    ├── CdpError                        talking to Chrome failed
    │   ├── CdpConnectionError          could not connect, or the socket closed (`reason`)
    │   ├── CdpCommandError             Chrome answered a command with an error (`method`, `code`)
    │   └── CdpTimeoutError             no answer within the command's timeout (`method`, `timeout`)
    ├── SessionError                    a conversation's browser could not serve the call
    │   ├── SessionClosedError          the session was killed (delete hook, reaper, shutdown)
    │   └── BrowserLaunchError          Chrome did not start (wraps chrome_launcher.LaunchError)
    └── ToolError                       a tool failed in a way the model should read (`message`)

Nothing outside browser_tool sees trio_websocket, json or OSError exceptions: they are
translated at the call that raises them.
"""

from __future__ import annotations


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
    """`method` got no answer within `timeout` seconds."""

    def __init__(self, method: str, timeout: float) -> None:
        self.method = method
        self.timeout = timeout
        super().__init__(f"{method} got no answer within {timeout:g}s")


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


class ToolError(BrowserToolError):
    """A tool failed; the message is written for the model to read."""
