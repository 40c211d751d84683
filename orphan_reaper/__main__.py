"""`python -m orphan_reaper`: the same as the `orphan-reaper` command."""

from ._cli import main

raise SystemExit(main())
