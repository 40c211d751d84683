"""Who may listen where: a bearer token is optional on loopback and required anywhere else.

Checked by the CLI before anything is opened (a refused start touches no state), and read by
the MCP endpoint, which turns on DNS-rebinding protection only where no token guards it.
"""

from __future__ import annotations

import ipaddress

from .._errors import ListenPolicyError


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback IP literals (127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_listen_policy(host: str, token: str | None) -> None:
    """A bearer token is optional on loopback and required on any other address.

    Raises ListenPolicyError, naming the variable to set, when `host` is not loopback and
    `token` is empty.
    """
    if not token and not is_loopback(host):
        raise ListenPolicyError(
            f"refusing to listen on {host!r} without a token: anyone who can reach it could "
            "drive a browser on this host. Set BROWSER_TOOL_TOKEN (clients then send "
            "'Authorization: Bearer <token>'), or listen on 127.0.0.1."
        )
