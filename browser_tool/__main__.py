"""`python -m browser_tool`: the same as the `browser-tool` command."""

from ._cli import main

raise SystemExit(main())
