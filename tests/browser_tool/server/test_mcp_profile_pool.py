"""`browser-tool mcp --profile NAME` over stdio keeps no spare Chrome: its one conversation
runs on the profile's dir, and a spare (launched on a pool slot's dir) could never serve it.

Charter: a real stdio process (the SDK's client), real Chromium; a spare would be launched
when the manager opens, before the handshake is answered, so by the end of the first call
its process exists or never will. The state_dir fixture fails a test that leaves anything.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.checks import live_processes_mentioning
from tests.support.mcp_results import text_of

pytestmark = pytest.mark.chrome


async def test_stdio_mcp_on_a_profile_launches_only_the_profile_s_chrome(
    state_dir: Path,
) -> None:
    args = ["-m", "browser_tool", "mcp", "--state-dir", str(state_dir), "--profile", "solo"]
    async with Client(StdioServerParameters(command=sys.executable, args=args)) as client:
        out = await client.call_tool("browser_eval", {"expression": "1+1"})
        assert text_of(out) == "<javascript_result>2</javascript_result>"
        assert live_processes_mentioning(f"--user-data-dir={state_dir}/profiles/solo")
        assert live_processes_mentioning(f"{state_dir}/sessions/pool-") == []
    shutil.rmtree(state_dir / "profiles" / "solo")
