"""The `orphan-reaper` command: one sweep over a state root, reported for humans or as JSON.

Exit status: 0 when every qualifying orphan is gone (a dry run always counts), 1 when one
survived its kill ladder, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

DESCRIPTION = (
    "Kill the Chrome process groups that dead browser-tool instances left behind, and remove"
    " their PID records, profiles, session dirs, tmp dirs and instance locks. A group is killed"
    " only when it runs as your uid, carries browser-tool's instance marker with a profile under"
    " the state dir, its instance is dead (its lock is free) and, for a PID record, its kernel"
    " start time and boot id match; anything else is left alone and reported."
)
EPILOG = "Exit status: 0 all orphans gone (or dry run), 1 an orphan survived, 2 usage error."


def _grace(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:  # also rejects nan
        raise argparse.ArgumentTypeError(f"must be >= 0 seconds, not {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    from chrome_launcher import default_state_dir

    parser = argparse.ArgumentParser(prog="orphan-reaper", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument(
        "--state-dir",
        default=None,
        metavar="DIR",
        help=f"state root to sweep (default: {default_state_dir()}; honours"
        " $BROWSER_TOOL_STATE_DIR)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="change nothing; report what would be done"
    )
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument(
        "--grace",
        type=_grace,
        default=None,
        metavar="SECONDS",
        help="wait this long after SIGTERM before SIGKILL (default: 2)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one sweep; return the exit status (argparse exits with 2 on a usage error)."""
    from chrome_launcher import default_state_dir

    from ._reap import reap_orphans_sync

    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    state_dir = args.state_dir if args.state_dir is not None else default_state_dir()
    report = reap_orphans_sync(state_dir, dry_run=args.dry_run, grace=args.grace)
    if args.json:
        print(report.to_json())
    else:
        print("\n".join(report.summary_lines()))
    sys.stdout.flush()
    return report.exit_code
