"""Settings: one frozen object, every field from a `BROWSER_TOOL_*` environment variable.

Front ends build it once with `Settings.from_env()` (CLI flags go on top via `replace`) and hand
it down; nothing else reads the environment. Durations in the environment are duration strings
("30m", "15s", "500ms") or plain seconds; booleans are 1/0, true/false, yes/no, on/off.
A bad value raises InvalidInputError naming the variable and the rule.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chrome_launcher import default_state_dir

from ._duration import parse_duration
from ._errors import InvalidInputError

_DIALOG_ACTIONS = ("accept", "dismiss")
ISOLATION_MODES = ("process", "context")


@dataclass(frozen=True)
class Settings:
    """Every tunable of the service. Field docs give the environment variable's suffix."""

    state_dir: Path = field(default_factory=default_state_dir)  # STATE_DIR
    chrome_path: str | None = None  # CHROME: a binary, not a /usr/bin shell wrapper
    death_link: bool = True  # DEATH_LINK: off only for tests that need real orphans
    sandbox: bool | None = None  # SANDBOX: default off when running as root
    reap_on_start: bool = True  # REAP_ON_START: run the orphan sweep when the service starts
    launch_timeout: float = 20.0  # LAUNCH_TIMEOUT
    idle_timeout: float = 1800.0  # IDLE_TIMEOUT: a session idle this long is killed
    max_idle_timeout: float = 86400.0  # MAX_IDLE_TIMEOUT: upper bound for keepalive
    max_lifetime: float = 43200.0  # MAX_LIFETIME: a session this old is killed between calls
    shutdown_timeout: float = 10.0  # SHUTDOWN_TIMEOUT: all sessions close within this
    call_grace: float = 10.0  # CALL_GRACE: in-flight calls get this long at shutdown
    default_timeout: float = 15.0  # DEFAULT_TIMEOUT: tool timeout when the input gives none
    max_timeout: float = 600.0  # MAX_TIMEOUT: the largest tool timeout accepted
    polite_close_timeout: float = 2.0  # POLITE_CLOSE_TIMEOUT: Browser.close before signals
    kill_grace: float = 2.0  # KILL_GRACE: SIGTERM to SIGKILL
    viewport_width: int = 1280  # VIEWPORT_WIDTH
    viewport_height: int = 720  # VIEWPORT_HEIGHT
    console_buffer: int = 1000  # CONSOLE_BUFFER: entries kept per session
    inline_text_limit: int = 1024  # INLINE_TEXT_LIMIT: longer text goes to a file
    # SNAPSHOT_INLINE_CHARS: a longer snapshot keeps its top inline, the whole in a file
    snapshot_inline_limit: int = 12_000
    image_max_long_edge: int = 1568  # IMAGE_MAX_LONG_EDGE
    image_max_pixels: int = 1_150_000  # IMAGE_MAX_PIXELS
    image_max_bytes: int = 5 * 1024 * 1024  # IMAGE_MAX_BYTES
    allowed_url_schemes: tuple[str, ...] = ()  # ALLOWED_URL_SCHEMES: e.g. "file,chrome"
    read_image_roots: tuple[Path, ...] = ()  # READ_IMAGE_ROOTS: colon-separated, extra roots
    upload_roots: tuple[Path, ...] = ()  # UPLOAD_ROOTS: colon-separated, besides the conv's dir
    dialog_alert: str = "accept"  # DIALOG_ALERT: accept | dismiss
    dialog_beforeunload: str = "accept"  # DIALOG_BEFOREUNLOAD
    dialog_confirm: str = "dismiss"  # DIALOG_CONFIRM
    dialog_prompt: str = "dismiss"  # DIALOG_PROMPT
    host: str = "127.0.0.1"  # HOST: where `serve` listens
    port: int = 8765  # PORT
    token: str | None = None  # TOKEN: bearer token; required off loopback
    max_body_bytes: int = 1024 * 1024  # MAX_BODY_BYTES: larger HTTP bodies get 413
    # ISOLATION: "process" (a Chrome per conversation) or "context" (a browser context per
    # conversation in a shared Chrome; see sources/_shared.py)
    isolation: str = "process"
    contexts_per_browser: int = 20  # CONTEXTS_PER_BROWSER: conversations per shared Chrome
    shared_browser_linger: float = 60.0  # SHARED_BROWSER_LINGER: an empty shared Chrome's life
    js_heap_mb: int = 0  # JS_HEAP_MB: cap on each page's JavaScript heap in MiB; 0: V8's own
    pool_size: int = 0  # POOL_SIZE: Chromes launched ahead for new conversations' first calls
    # -- issue 21, hand-over (live view) --
    # PUBLIC_URL: the service's address as a person's browser reaches it (e.g. the proxy's
    # "https://browser.example.com"); hand-over links start with it. Default: the address the
    # service listens on.
    public_url: str | None = None
    # issue 20: tabs. MAX_TABS: tabs a conversation's browser keeps open; a page opening more
    # gets them closed as they open (counted in the next result). Replaces MAX_POPUPS.
    max_tabs: int = 10
    # ---- issue 22: the watchdog between calls (conversations/_watchdog.py) ----
    # UNRESPONSIVE_PROBE: after a call timed out, the browser must answer a probe within this
    # or it is killed and the next call starts a fresh one
    unresponsive_probe: float = 1.0
    # IDLE_CPU_LIMIT: CPU (in cores: 0.5 is half of one) a browser may use between calls,
    # averaged over IDLE_CPU_WINDOW, before its pages are paused; 0: never pause
    idle_cpu_limit: float = 0.5
    idle_cpu_window: float = 60.0  # IDLE_CPU_WINDOW
    # MAX_BROWSER_MEMORY: MiB of memory (PSS of its processes) a browser may hold between calls
    # before it is closed (the next call starts a fresh one); 0: no limit
    max_browser_memory: int = 0
    watchdog_interval: float = 5.0  # WATCHDOG_INTERVAL: how often browsers are sampled

    def __post_init__(self) -> None:
        for name in ("dialog_alert", "dialog_beforeunload", "dialog_confirm", "dialog_prompt"):
            if getattr(self, name) not in _DIALOG_ACTIONS:
                raise InvalidInputError(env_name(name), "must be 'accept' or 'dismiss'")
        if not 1 <= self.viewport_width <= 10000 or not 1 <= self.viewport_height <= 10000:
            raise InvalidInputError("BROWSER_TOOL_VIEWPORT_*", "must be integers from 1 to 10000")
        if not 1_000 <= self.snapshot_inline_limit <= 1_000_000:
            raise InvalidInputError(
                env_name("snapshot_inline_limit"), "must be an integer from 1000 to 1000000"
            )
        if not 0 <= self.pool_size <= 64:
            raise InvalidInputError(env_name("pool_size"), "must be an integer from 0 to 64")
        for name in ("idle_timeout", "max_lifetime"):
            if not getattr(self, name) > 0:
                raise InvalidInputError(env_name(name), "must be a duration greater than 0")
        if self.isolation not in ISOLATION_MODES:
            raise InvalidInputError(
                env_name("isolation"), "must be 'process' or 'context'", self.isolation
            )
        if not 1 <= self.contexts_per_browser <= 1000:
            raise InvalidInputError(
                env_name("contexts_per_browser"),
                "must be an integer from 1 to 1000",
                self.contexts_per_browser,
            )
        if self.public_url is not None and not self.public_url.startswith(("http://", "https://")):
            raise InvalidInputError(
                env_name("public_url"), "must start with http:// or https://", self.public_url
            )
        for name in ("idle_cpu_limit", "max_browser_memory"):
            if not getattr(self, name) >= 0:
                raise InvalidInputError(env_name(name), "must be 0 (off) or more")
        for name in ("unresponsive_probe", "idle_cpu_window", "watchdog_interval"):
            if not getattr(self, name) > 0:
                raise InvalidInputError(env_name(name), "must be a duration greater than 0")
        if not self.shared_browser_linger >= 0:
            raise InvalidInputError(
                env_name("shared_browser_linger"), "must be a duration of 0 or more"
            )
        if not 1 <= self.max_tabs <= 100:  # issue 20
            raise InvalidInputError(
                env_name("max_tabs"), "must be an integer from 1 to 100", self.max_tabs
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read every `BROWSER_TOOL_*` variable; `overrides` (e.g. CLI flags) win."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = environ.get(env_name(f.name))
            if raw is not None and raw != "":
                values[f.name] = _parse(f.name, str(f.type), raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_changes(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def dialog_accepts(self, dialog_type: str) -> bool:
        action = {
            "alert": self.dialog_alert,
            "beforeunload": self.dialog_beforeunload,
            "confirm": self.dialog_confirm,
            "prompt": self.dialog_prompt,
        }.get(dialog_type, "accept")
        return action == "accept"


def env_name(field_name: str) -> str:
    """A Settings field's environment variable: "idle_timeout" -> "BROWSER_TOOL_IDLE_TIMEOUT"."""
    return "BROWSER_TOOL_" + {
        "chrome_path": "CHROME",
        "snapshot_inline_limit": "SNAPSHOT_INLINE_CHARS",
    }.get(field_name, field_name.upper())


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _parse(name: str, kind: str, raw: str) -> Any:
    env = env_name(name)
    text = raw.strip()
    if kind in ("bool", "bool | None"):
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        if kind == "bool | None" and text.lower() == "auto":
            return None
        raise InvalidInputError(env, "must be one of 1/0, true/false, yes/no, on/off", raw)
    if kind == "float":
        try:
            return float(text)
        except ValueError:
            return parse_duration(text, field=env, maximum=10 * 365 * 86400.0)
    if kind == "int":
        try:
            return int(text.replace("_", ""))
        except ValueError:
            raise InvalidInputError(env, "must be an integer", raw) from None
    if kind == "Path":
        return Path(text).expanduser()
    if kind == "tuple[str, ...]":
        return tuple(part.strip().lower().rstrip(":") for part in text.split(",") if part.strip())
    if kind == "tuple[Path, ...]":
        return tuple(Path(part).expanduser() for part in text.split(":") if part)
    return text
