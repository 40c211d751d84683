"""What the browser layer keeps of a page's contexts, fed with raw CDP events as Chrome sends
them: the network log (where each response came from), the service worker registry, and the
console buffer's context tags. No Chrome; the events are copied from Chromium 156's."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from browser_tool.browser._console import ConsoleBuffer
from browser_tool.browser._network_log import NetworkLog
from browser_tool.browser._service_workers import ServiceWorkerRegistry

URL = "http://127.0.0.1:8000"


def respond(log: NetworkLog, request_id: str, url: str, **response: object) -> None:
    log.observe(
        "Network.requestWillBeSent", {"requestId": request_id, "request": {"url": url}}, "page", "S"
    )
    params: dict[str, Any] = {"requestId": request_id, "type": "Script"}
    params["response"] = {"url": url, "status": 200, **response}
    log.observe("Network.responseReceived", params, "page", "S")


def test_each_response_gets_its_source() -> None:
    log = NetworkLog(100)
    respond(log, "1", f"{URL}/net.js")
    respond(log, "2", f"{URL}/disk.js", fromDiskCache=True)
    # A worker's answer from Cache Storage says fromDiskCache too: the worker wins.
    sw = {"fromServiceWorker": True, "serviceWorkerResponseSource": "cache-storage"}
    respond(log, "3", f"{URL}/sw.js", fromDiskCache=True, **sw)
    respond(log, "4", f"{URL}/prefetch.js", fromPrefetchCache=True)
    log.observe(
        "Network.requestWillBeSent",
        {"requestId": "5", "request": {"url": f"{URL}/m.js"}},
        "page",
        "S",
    )
    log.observe("Network.requestServedFromCache", {"requestId": "5"}, "page", "S")
    log.observe(
        "Network.responseReceived",
        {"requestId": "5", "type": "Script", "response": {"url": f"{URL}/m.js", "status": 200}},
        "page",
        "S",
    )
    assert [(r.source, r.detail) for r in log.recent(10)] == [
        ("network", ""),
        ("disk_cache", ""),
        ("service_worker", "cache-storage"),
        ("prefetch_cache", ""),
        ("memory_cache", ""),
    ]
    assert log.counts() == {
        "network": 1,
        "service_worker": 1,
        "disk_cache": 1,
        "memory_cache": 1,
        "prefetch_cache": 1,
        "failed": 0,
    }
    assert log.recent(10)[2].describe() == (
        f"200 Script service_worker (cache-storage) {URL}/sw.js"
    )


def test_a_failed_request_is_recorded_with_its_error_and_who_made_it() -> None:
    log = NetworkLog(100)
    sent = {"requestId": "9", "request": {"url": f"{URL}/api"}}
    log.observe("Network.requestWillBeSent", sent, "service_worker", "W")
    failed = {"requestId": "9", "type": "Fetch", "errorText": "net::ERR_INTERNET_DISCONNECTED"}
    log.observe("Network.loadingFailed", failed, "service_worker", "W")
    # Same request id on another session: a different request, never seen sent; and a
    # request the page itself cancelled is no failure of the network.
    log.observe("Network.loadingFailed", failed, "page", "S")
    log.observe("Network.requestWillBeSent", {**sent, "requestId": "10"}, "page", "S")
    log.observe(
        "Network.loadingFailed", {**failed, "requestId": "10", "canceled": True}, "page", "S"
    )
    [record] = log.recent(10)
    assert record.describe() == (
        f"--- Fetch failed (net::ERR_INTERNET_DISCONNECTED) {URL}/api "
        "[requested by the service_worker]"
    )


def test_urls_loaded_from_nowhere_are_left_out_and_long_ones_cut() -> None:
    log = NetworkLog(100)
    icon = "data:image/png;base64," + "A" * 5000
    log.observe(
        "Network.requestWillBeSent", {"requestId": "1", "request": {"url": icon}}, "page", "S"
    )
    log.observe("Network.requestServedFromCache", {"requestId": "1"}, "page", "S")
    respond(log, "1", icon)
    respond(log, "2", f"{URL}/{'x' * 400}")
    [record] = log.recent(10)
    assert record.describe() == f"200 Script network {URL}/{'x' * (300 - len(URL) - 1)}..."


def test_the_log_is_bounded_counted_and_cleared() -> None:
    log = NetworkLog(3)
    for i in range(5):
        respond(log, str(i), f"{URL}/{i}")
    assert [r.url for r in log.recent(2)] == [f"{URL}/3", f"{URL}/4"]
    assert [r.seq for r in log.recent(10)] == [3, 4, 5]
    assert log.dropped == 2
    assert log.counts()["network"] == 3
    assert log.recent(0) == []
    assert log.clear() == 3
    assert len(log) == 0


def version(version_id: str, status: str, running: str = "running") -> dict[str, object]:
    return {
        "versionId": version_id,
        "registrationId": "0",
        "scriptURL": f"{URL}/pwa/sw.js",
        "status": status,
        "runningStatus": running,
        "controlledClients": [],
    }


def test_the_registry_follows_chromes_reports_for_one_origin() -> None:
    registry = ServiceWorkerRegistry()
    registrations = [
        {"registrationId": "0", "scopeURL": f"{URL}/pwa/", "isDeleted": False},
        {"registrationId": "1", "scopeURL": "http://127.0.0.1:9000/", "isDeleted": False},
    ]
    registry.update("ServiceWorker.workerRegistrationUpdated", {"registrations": registrations})
    registry.update(
        "ServiceWorker.workerVersionUpdated", {"versions": [version("0", "new", "stopped")]}
    )
    registry.update("ServiceWorker.workerVersionUpdated", {"versions": [version("0", "activated")]})
    [found] = registry.for_origin(URL)
    assert found.scope == f"{URL}/pwa/"
    assert [(v.status, v.running_status) for v in found.versions] == [("activated", "running")]
    assert [r.scope for r in registry.for_origin("http://127.0.0.1:9000")] == [
        "http://127.0.0.1:9000/"
    ]
    deleted = [{**registrations[0], "isDeleted": True}]
    registry.update("ServiceWorker.workerRegistrationUpdated", {"registrations": deleted})
    assert registry.for_origin(URL) == []
    registry.reset()
    assert registry.for_origin("http://127.0.0.1:9000") == []


async def test_a_report_wakes_whoever_waits_for_one(autojump_clock: trio.testing.MockClock) -> None:
    registry = ServiceWorkerRegistry()
    woken = []

    async def wait() -> None:
        await registry.wait_changed()
        woken.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.sleep(1)
        registry.update("ServiceWorker.workerVersionUpdated", {"versions": [version("0", "new")]})
    assert woken == [1.0]


def test_console_entries_name_their_context() -> None:
    buffer = ConsoleBuffer(10)
    buffer.page_url = f"{URL}/pwa/"
    buffer.add("log", "from the page", when=1.0)
    buffer.add(
        "log", "from the worker", when=2.0, context="service_worker", context_url=f"{URL}/pwa/sw.js"
    )
    buffer.add(
        "log", "from a dedicated worker", when=3.0, context="worker", context_url=f"{URL}/w.js"
    )
    page, sw, worker = buffer.recent(10)
    assert (worker.context, worker.context_url) == ("worker", f"{URL}/w.js")
    assert (page.context, page.context_url) == ("page", f"{URL}/pwa/")
    assert sw.to_json()["context"] == "service_worker"
    assert sw.to_json()["context_url"] == f"{URL}/pwa/sw.js"
    assert [e.text for e in buffer.recent(10, "service_worker")] == ["from the worker"]
    assert [e.text for e in buffer.recent(1, "page")] == ["from the page"]
    assert [e.context for e in buffer.recent(2)] == ["service_worker", "worker"]
