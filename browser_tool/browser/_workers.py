"""The page's workers, and what every context of the page says about its work.

On the page's session Chrome is asked to attach to every worker the page starts (service
workers, dedicated and shared workers) in flat mode, paused before the worker runs its first
line (`waitForDebuggerOnStart`). Each new worker gets Runtime, Log and Network enabled, and the
current offline mode, before it is let go: a worker that starts while the page is still
loading is not missed, and its first `console.log` is in the buffer. Auto-attaching on the page
(not on the browser) keeps to this page's own workers, so in a browser shared by several
conversations no one sees another's workers.

One task (`run`) takes the events of every context: a worker's console messages and
exceptions go into the session's console buffer tagged with its context and URL; Network
events of the page and its workers go into the network log; the page's ServiceWorker events
into the registry.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any

import trio
import trio.lowlevel

from .._errors import CdpError
from ..cdp import CdpConnection, CdpEvent, CdpSession
from ._console import ConsoleBuffer
from ._network_log import NETWORK_EVENTS, NetworkLog
from ._service_workers import SERVICE_WORKER_EVENTS, ServiceWorkerRegistry

log = logging.getLogger("browser_tool.workers")

NETWORK_BUFFER = 1000  # responses kept per session
# Target types we attach to, and the console context each is tagged with.
_CONTEXTS = {"service_worker": "service_worker", "worker": "worker", "shared_worker": "worker"}
# Out-of-process iframes too: the snapshot reads their accessibility tree on their session.
_AUTO_ATTACH = {
    "autoAttach": True,
    "waitForDebuggerOnStart": True,
    "flatten": True,
    "filter": [{"type": kind} for kind in (*_CONTEXTS, "iframe")],
}
# Nothing here reads response bodies: Chrome need not keep them.
_NETWORK_ENABLE = {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0}
_CONSOLE_EVENTS = ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded")
_EVENTS = (
    "Target.attachedToTarget",
    "Target.detachedFromTarget",
    *_CONSOLE_EVENTS,
    *NETWORK_EVENTS,
    *SERVICE_WORKER_EVENTS,
)
_COMMAND_TIMEOUT = 10.0
_CATCH_UP_PASSES = 1000  # a bound: a flood of events must not hold a call


def network_conditions(offline: bool) -> dict[str, Any]:
    """Network.emulateNetworkConditions params: offline, or no emulation at all."""
    return {"offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}


@dataclass(frozen=True)
class Worker:
    session_id: str
    target_id: str
    context: str  # "service_worker" or "worker"
    url: str


class Workers:
    """The page's workers, its network log, its service worker registry and its offline mode.
    Built by the Page; `run` is started in the session's nursery before the page is set up."""

    def __init__(self, conn: CdpConnection, console: ConsoleBuffer) -> None:
        self.conn = conn
        self.console = console
        self.network = NetworkLog(NETWORK_BUFFER)
        self._events: trio.MemoryReceiveChannel[CdpEvent] | None = None  # while `run` runs
        self.registry = ServiceWorkerRegistry()
        self.offline = False
        self.workers: dict[str, Worker] = {}  # by session id
        self.frames: dict[str, CdpSession] = {}  # out-of-process iframes' sessions, by id
        self.page_session: CdpSession | None = None

    async def attach_page(self, cdp: CdpSession) -> None:
        """Watch the page whose session is `cdp` (a new one after a crash): its network, its
        service workers, and every worker it starts, in the current offline mode. Raises
        CdpError when the page does not answer."""
        self.page_session = cdp
        self.workers.clear()  # a replaced page's workers went with it
        self.frames.clear()
        self.registry.reset()
        await cdp.send("Network.enable", _NETWORK_ENABLE, timeout=_COMMAND_TIMEOUT)
        if self.offline:
            conditions = network_conditions(True)
            await cdp.send("Network.emulateNetworkConditions", conditions, timeout=_COMMAND_TIMEOUT)
        await cdp.send("ServiceWorker.enable", timeout=_COMMAND_TIMEOUT)
        await cdp.send("Target.setAutoAttach", _AUTO_ATTACH, timeout=_COMMAND_TIMEOUT)

    async def set_offline(self, offline: bool) -> list[Worker]:
        """Switch offline mode on or off for the page and every worker; return the workers
        that took it (one that went away meanwhile is skipped). Raises CdpError when the
        page does not take it. The mode is recorded first, so a worker attached meanwhile, or
        a page replaced after a crash, gets it too."""
        assert self.page_session is not None, "set_offline before the page was attached"
        self.offline = offline
        conditions = network_conditions(offline)
        await self.page_session.send("Network.emulateNetworkConditions", conditions)
        done = []
        for worker in list(self.workers.values()):
            try:
                await self.conn.send(
                    "Network.emulateNetworkConditions",
                    conditions,
                    session_id=worker.session_id,
                    timeout=_COMMAND_TIMEOUT,
                )
            except CdpError as exc:
                log.debug("offline mode not applied to %s: %s", worker.url, exc)
            else:
                done.append(worker)
        return done

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Handle events until the connection closes. Subscribes before reporting started."""
        async with (
            trio.open_nursery() as nursery,
            self.conn.listen(*_EVENTS, session_id="*", buffer=10_000) as events,
        ):
            self._events = events
            task_status.started()
            async for event in events:
                self._handle(event, nursery)

    async def caught_up(self) -> None:
        """Return once every event received so far is handled (a few scheduler passes at most).

        Chrome sends a page's Network events before its load event, but they reach this task's
        channel, not the caller's: a listing read right after a navigation waits for them."""
        for _ in range(_CATCH_UP_PASSES):
            if self._events is None:
                return
            # Idle: nothing buffered, and the task waits for more. An event handed straight to
            # the waiting task leaves the buffer empty while the task has yet to handle it.
            stats = self._events.statistics()
            if not stats.current_buffer_used and stats.tasks_waiting_receive:
                return
            await trio.lowlevel.checkpoint()

    def _context_of(self, session_id: str | None) -> str | None:
        if self.page_session is not None and session_id == self.page_session.session_id:
            return "page"
        if session_id in self.frames:
            return "frame"
        worker = self.workers.get(session_id or "")
        return None if worker is None else worker.context

    def _handle(self, event: CdpEvent, nursery: trio.Nursery) -> None:
        method, p = event.method, event.params
        context = self._context_of(event.session_id)
        if context is None:
            return  # the browser's own, or another page's (a closed popup)
        if method == "Target.attachedToTarget":
            self._adopt(p, nursery)
        elif method == "Target.detachedFromTarget":
            self.workers.pop(str(p.get("sessionId", "")), None)
            self.frames.pop(str(p.get("sessionId", "")), None)
        elif context == "frame":
            return  # an iframe's session is read by the snapshot; nothing is enabled on it
        elif method in NETWORK_EVENTS:
            assert event.session_id is not None
            self.network.observe(method, p, context, event.session_id)
        elif method in SERVICE_WORKER_EVENTS:
            if context == "page":
                self.registry.update(method, p)
        elif context != "page":  # the page's own console is the Page's pump's
            self._log(self.workers[str(event.session_id)], method, p)

    def _adopt(self, p: dict[str, Any], nursery: trio.Nursery) -> None:
        info = p.get("targetInfo") or {}
        session_id = str(p.get("sessionId", ""))
        context = _CONTEXTS.get(str(info.get("type", "")))
        if info.get("type") == "iframe":  # its own iframes and workers are attached as well
            self.frames[session_id] = self.conn.session(session_id)
            commands_: list[tuple[str, dict[str, Any]]] = [
                ("Target.setAutoAttach", _AUTO_ATTACH),
                ("Runtime.runIfWaitingForDebugger", {}),
            ]
            nursery.start_soon(self._send_in_order, session_id, commands_)
            return
        if context is None:  # not asked for (the filter keeps it out): let it run, unwatched
            commands: list[tuple[str, dict[str, Any]]] = [("Runtime.runIfWaitingForDebugger", {})]
            nursery.start_soon(self._send_in_order, session_id, commands)
            return
        url = str(info.get("url", ""))
        self.workers[session_id] = Worker(session_id, str(info.get("targetId", "")), context, url)
        commands = [
            ("Runtime.enable", {}),
            ("Log.enable", {}),
            ("Network.enable", _NETWORK_ENABLE),
        ]
        if self.offline:
            commands.append(("Network.emulateNetworkConditions", network_conditions(True)))
        commands += [
            ("Target.setAutoAttach", _AUTO_ATTACH),  # a worker's own workers (none for some)
            ("Runtime.runIfWaitingForDebugger", {}),
        ]
        nursery.start_soon(self._send_in_order, session_id, commands)

    async def _send_in_order(
        self, session_id: str, commands: list[tuple[str, dict[str, Any]]]
    ) -> None:
        # Pipelined, not awaited one by one: a service worker that has not started answers
        # nothing until it is let go (measured: Runtime.enable got no answer in 5 s), and the
        # last command is what lets it go. Each `start` returns once its command is queued
        # (`send` queues it before its first checkpoint), so they go out in this order.
        async with trio.open_nursery() as nursery:
            for method, params in commands:
                await nursery.start(self._send_one, session_id, method, params)

    async def _send_one(
        self,
        session_id: str,
        method: str,
        params: dict[str, Any],
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        task_status.started()
        with contextlib.suppress(CdpError):  # the worker may be gone already
            await self.conn.send(method, params, session_id=session_id, timeout=_COMMAND_TIMEOUT)

    def _log(self, worker: Worker, method: str, p: dict[str, Any]) -> None:
        if method == "Log.entryAdded" and p.get("entry", {}).get("source") == "worker":
            return  # a nested worker's console, echoed: its own session reports it
        self.console.add_event(method, p, context=worker.context, context_url=worker.url)
