"""`python -m browser_tool`: the same as the `browser-tool` command."""

from .cli import main

raise SystemExit(main())
