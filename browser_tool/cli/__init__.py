"""cli: `browser-tool`: argument parsing, the one-shot `call`, the service commands and the admin
commands against a running service. The top layer: nothing imports it."""

from ._main import main

__all__ = ["main"]
