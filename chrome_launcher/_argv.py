"""Building Chrome's command line. Pure: no I/O, no trio.

Each flag is here for a measured reason (DESIGN.md §3):
- --remote-debugging-port=0: Chrome picks a free port and announces it; we never choose one.
- --remote-debugging-pipe: fds 3/4 are the death link; Chrome exits when the service's ends close.
- --disable-breakpad / --disable-crash-reporter: the crashpad handler daemonizes out of the group.
- --disable-component-update: its scratch files in the temp dir survive a SIGKILL.
- --disable-background-networking etc.: no calls home (refused here, and slow everywhere).
- NOT --enable-features=CDPScreenshotNewSurface, although DESIGN.md asks for it: with it,
  Page.captureScreenshot on Debian's headless shell 156 failed with "Unable to capture
  screenshot" in 5 of 10 fresh sessions here (0 of 10 without). See docs/decisions.md.
- the marker switch: names the owning instance, so the reaper can prove a Chrome is ours.
Never --remote-allow-origins or --remote-debugging-address.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ._binary import ChromeBinary
from ._instance import MARKER_SWITCH

COMMON_FLAGS = (
    "--remote-debugging-port=0",
    "--remote-debugging-pipe",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--disable-component-update",
    "--disable-background-networking",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--disable-client-side-phishing-detection",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--disable-domain-reliability",
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--metrics-recording-only",
    "--mute-audio",
    "--hide-scrollbars",
    "--password-store=basic",
    "--use-mock-keychain",
    "--no-service-autorun",
    "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
)


@dataclass(frozen=True)
class ArgvSpec:
    """Everything the command line depends on."""

    binary: ChromeBinary
    profile_dir: str
    instance_id: str
    window_size: tuple[int, int] = (1280, 720)
    sandbox: bool = False
    extra_args: Sequence[str] = field(default_factory=tuple)


def build_argv(spec: ArgvSpec) -> list[str]:
    """The full argv for `spec`, argv[0] being the binary path."""
    argv = [spec.binary.path]
    if not spec.binary.headless_shell:
        argv.append("--headless=new")
    argv.extend(COMMON_FLAGS)
    if not spec.sandbox:
        argv.append("--no-sandbox")
    width, height = spec.window_size
    argv.append(f"--window-size={width},{height}")
    argv.append(f"--user-data-dir={spec.profile_dir}")
    argv.append(f"{MARKER_SWITCH}={spec.instance_id}")
    argv.extend(spec.extra_args)
    argv.append("about:blank")
    return argv


def marker_instance(argv: Sequence[str]) -> str | None:
    """The owning instance id named in `argv`, or None when it carries no marker."""
    prefix = MARKER_SWITCH + "="
    for arg in argv:
        if arg.startswith(prefix):
            return arg[len(prefix) :]
    return None


def user_data_dir(argv: Sequence[str]) -> str | None:
    """The --user-data-dir of `argv`, or None."""
    prefix = "--user-data-dir="
    for arg in argv:
        if arg.startswith(prefix):
            return arg[len(prefix) :]
    return None
