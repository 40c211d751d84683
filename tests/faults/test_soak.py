"""The soak: many conversation lifecycles through a real service, mixing normal use, delete,
idle reaping (a 1 s idle timeout), a renderer crash, memory exhaustion, and SIGKILL and
SIGSTOP of the Chrome group, a few at a time. Afterwards: no process of ours and no zombie,
the service's open fds and threads back to their baseline, the state dir empty once the
service stopped (the state_dir fixture), and nothing left in the service's temp dir.

CI runs a small count; `make soak` runs 200 (BROWSER_TOOL_SOAK_LIFECYCLES).
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from chrome_launcher import all_stats, live_group_members
from tests.faults.pages import EXHAUST_MEMORY, JS_HEAP_MB, NEVER_RESOLVES, html
from tests.support.checks import live_processes_mentioning, wait_group_gone
from tests.support.service import running_service

pytestmark = pytest.mark.chrome

LIFECYCLES = int(os.environ.get("BROWSER_TOOL_SOAK_LIFECYCLES", "14"))
AT_ONCE = 3
KINDS = ("normal", "delete_mid_call", "idle", "renderer_crash", "out_of_memory", "kill", "stop")


class Soak:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.pids: set[int] = set()
        self.outcomes: Counter[str] = Counter()

    async def call(self, conversation: str, tool: str, **args: Any) -> dict[str, Any]:
        response = await self.client.post(
            f"/v1/conversations/{conversation}/tools/{tool}", json=args
        )
        assert response.status_code == 200, response.text
        return dict(response.json())

    async def ok(self, conversation: str, tool: str, **args: Any) -> str:
        answer = await self.call(conversation, tool, **args)
        assert not answer["is_error"], answer["output"]
        return str(answer["output"])

    async def pid(self, conversation: str) -> int:
        rows = (await self.client.get("/v1/sessions")).json()["sessions"]
        [pid] = [row["pid"] for row in rows if row["conversation_id"] == conversation]
        self.pids.add(pid)
        return int(pid)

    async def state(self, conversation: str) -> str | None:
        """The conversation's row state ("ready", "closing", ...), None when not listed."""
        rows = (await self.client.get("/v1/sessions")).json()["sessions"]
        states = [row["state"] for row in rows if row["conversation_id"] == conversation]
        return states[0] if states else None

    async def wait_state(self, conversation: str, state: str | None) -> None:
        """Poll the inventory (HTTP offers no event for it) until the conversation is in
        `state` (None: not listed), within 30 s."""
        with trio.fail_after(30):
            while await self.state(conversation) != state:  # noqa: ASYNC110
                await trio.sleep(0.05)

    async def delete(self, conversation: str) -> None:
        response = await self.client.delete(f"/v1/conversations/{conversation}")
        assert response.status_code == 200, response.text

    async def stopped_by_delete(self, conversation: str) -> None:
        answer = await self.call(conversation, "browser_eval", expression=NEVER_RESOLVES)
        assert answer["is_error"]
        # Stopped in flight, or (had the delete arrived first) never run: both say so.
        assert "closed (delete)" in answer["output"] or "deleted" in answer["output"], answer

    async def lifecycle(self, number: int) -> None:
        kind = KINDS[number % len(KINDS)]
        c = f"soak-{number}"
        await self.ok(c, "browser_navigate", url=html(f"<p>{number}</p><script>console.log(1)"))
        pid = await self.pid(c)
        if kind == "normal":
            await self.ok(c, "browser_take_screenshot")
            await self.ok(c, "browser_recent_console_logs")
        elif kind == "delete_mid_call":
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self.stopped_by_delete, c)
                await trio.testing.wait_all_tasks_blocked(0.05)  # its request is on the wire
                await self.delete(c)
        elif kind == "idle":
            await self.wait_state(c, None)  # reaped by the idle clock: no longer listed
            out = await self.ok(c, "browser_eval", expression="1")
            assert "idle" in out
            await self.pid(c)
        elif kind == "renderer_crash":
            crashed = await self.call(c, "browser_navigate", url="chrome://crash", timeout="10s")
            assert crashed["is_error"]
            await self.ok(c, "browser_eval", expression="1")
        elif kind == "out_of_memory":
            crashed = await self.call(c, "browser_eval", expression=EXHAUST_MEMORY, timeout="60s")
            assert crashed["is_error"]
            assert "page crashed" in crashed["output"]
            await self.ok(c, "browser_eval", expression="1")
        elif kind == "kill":
            os.killpg(pid, signal.SIGKILL)
            # A call already under way when the browser dies fails (tested in test_crashes);
            # this one starts after the service saw the death, so it gets a fresh browser.
            await self.wait_state(c, None)
            out = await self.ok(c, "browser_eval", expression="1")
            assert "crashed" in out
            await self.pid(c)
        elif kind == "stop":
            os.killpg(pid, signal.SIGSTOP)
            stuck = await self.call(c, "browser_eval", expression="1", timeout="1s")
            assert stuck["is_error"]
            assert stuck["output"].startswith("Timeout after 1s")
        await self.delete(c)
        self.outcomes[kind] += 1


def service_counts(pid: int) -> tuple[int, int]:
    """The service's open fds and threads."""
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


def open_fds(pid: int) -> list[str]:
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
    return sorted(found)


async def settled_counts(pid: int, target: tuple[int, int] | None) -> tuple[int, int]:
    """The service's fds and threads once they settle: at `target` or below, or (no target)
    unchanged over a second. Bounded: trio retires an idle worker thread after 10 s, and the
    service closes a client's socket once it reads the client's close; no event says either."""
    counts = service_counts(pid)
    with trio.move_on_after(20):
        while True:
            await trio.sleep(1.0)
            now = service_counts(pid)
            if (target is None and now == counts) or (
                target is not None and now[0] <= target[0] and now[1] <= target[1]
            ):
                return now
            counts = now
    return service_counts(pid)


def zombies_of(parents: set[int]) -> list[int]:
    return [s.pid for s in all_stats() if s.state == "Z" and s.ppid in parents]


async def test_soak_of_conversation_lifecycles(state_dir: Path) -> None:
    own_tmp = state_dir.parent / "service-tmp"
    own_tmp.mkdir()
    env = {
        "BROWSER_TOOL_IDLE_TIMEOUT": "1s",
        "BROWSER_TOOL_JS_HEAP_MB": str(JS_HEAP_MB),
        "BROWSER_TOOL_ALLOWED_URL_SCHEMES": "chrome",
        "BROWSER_TOOL_KILL_GRACE": "500ms",
        "TMPDIR": str(own_tmp),
    }
    async with running_service(state_dir, env=env) as service:
        service_pid = service.process.pid
        async with service.client() as client:
            await Soak(client).lifecycle(0)  # warm-up: a first launch opens what stays open
        before = await settled_counts(service_pid, None)
        async with service.client() as client:
            soak = Soak(client)
            limiter = trio.CapacityLimiter(AT_ONCE)

            async def one(number: int) -> None:
                async with limiter:
                    await soak.lifecycle(number)

            async with trio.open_nursery() as nursery:
                for number in range(1, LIFECYCLES + 1):
                    nursery.start_soon(one, number)
            assert (await client.get("/v1/sessions")).json() == {"sessions": []}
        for pid in soak.pids:
            assert await wait_group_gone(pid, within=10.0), (pid, live_group_members(pid))
        after = await settled_counts(service_pid, before)
        ours = [p for p in live_processes_mentioning(str(state_dir)) if p != service_pid]
        zombies = zombies_of({service_pid, *soak.pids})
        print(
            f"\nsoak: {LIFECYCLES + 1} lifecycles {dict(soak.outcomes)}; browsers {len(soak.pids)}"
            f"\nservice fds/threads before {before[0]}/{before[1]}, after {after[0]}/{after[1]}"
            f"\nprocesses of ours left {len(ours)}, zombies {len(zombies)}, "
            f"files in the service's TMPDIR {len(list(own_tmp.iterdir()))}"
        )
        assert ours == []
        assert zombies == []
        assert after[0] <= before[0], open_fds(service_pid)
        assert after[1] <= before[1]
    assert list(own_tmp.iterdir()) == []
    own_tmp.rmdir()
