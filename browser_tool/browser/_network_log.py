"""Where each response came from: a bounded log of the responses the page and its workers got.

Fed with raw `Network` events (pycdp_old cannot parse Network events of loopback requests on
the Chromium we drive, DESIGN.md §3), so it works on plain dicts and imports no trio. Network
is enabled on every context from the start of the session, so nothing is missed between calls.

Chrome says where a response came from in several places: `response.fromServiceWorker` (with
`serviceWorkerResponseSource`: cache-storage, http-cache, network, fallback-code),
`fromPrefetchCache`, `fromDiskCache`, and, for the memory cache, a separate
`Network.requestServedFromCache` event before the response. They are read in the order Chrome's
own DevTools reads them (prefetch cache, memory cache, service worker, disk cache): a service
worker's response also says `fromDiskCache` when the worker read it from Cache Storage.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass
from typing import Any

#: Every source a recorded response can have, in the order counts are given.
SOURCES = ("network", "service_worker", "disk_cache", "memory_cache", "prefetch_cache", "failed")
NETWORK_EVENTS = (
    "Network.requestWillBeSent",
    "Network.requestServedFromCache",
    "Network.responseReceived",
    "Network.loadingFailed",
)
# URLs loaded from nowhere (Chrome's own error page draws its icons from data: URLs).
_LOCAL_SCHEMES = ("data:", "blob:")
_URL_SHOWN = 300  # characters of a URL a listing shows
# Requests seen but not answered yet: bounded, so a page that never finishes its requests
# (long polls, aborted loads) cannot grow them without end.
_OPEN_REQUESTS = 2000


@dataclass(frozen=True)
class NetworkRecord:
    seq: int
    url: str
    status: int | None  # None when the request failed
    resource_type: str  # Document, Script, Stylesheet, Fetch, ... as Chrome names it
    source: str  # one of SOURCES
    detail: str  # the worker's own source ("cache-storage"), or the error of a failed request
    context: str  # "page", "service_worker" or "worker": who made the request
    time: float  # seconds since the epoch

    def describe(self) -> str:
        """One line: '200 Script service_worker (cache-storage) http://...'."""
        status = "---" if self.status is None else str(self.status)
        source = f"{self.source} ({self.detail})" if self.detail else self.source
        made_by = "" if self.context == "page" else f" [requested by the {self.context}]"
        url = self.url if len(self.url) <= _URL_SHOWN else f"{self.url[:_URL_SHOWN]}..."
        return f"{status} {self.resource_type} {source} {url}{made_by}"


class NetworkLog:
    """The last `capacity` responses (and failed requests); older ones are dropped and counted."""

    def __init__(self, capacity: int) -> None:
        self._records: collections.deque[NetworkRecord] = collections.deque(maxlen=capacity)
        self._open: collections.OrderedDict[tuple[str, str], tuple[str, bool]] = (
            collections.OrderedDict()
        )
        self._next_seq = 1
        self.capacity = capacity
        self.dropped = 0

    def observe(self, method: str, params: dict[str, Any], context: str, session_id: str) -> None:
        """Take one Network event of `context` (whose CDP session is `session_id`)."""
        key = (session_id, str(params.get("requestId", "")))
        if method == "Network.requestWillBeSent":
            url = str((params.get("request") or {}).get("url", ""))
            if url.startswith(_LOCAL_SCHEMES):
                return
            self._open[key] = (url, False)
            self._open.move_to_end(key)
            while len(self._open) > _OPEN_REQUESTS:
                self._open.popitem(last=False)
        elif method == "Network.requestServedFromCache":
            if key in self._open:
                self._open[key] = (self._open[key][0], True)
        elif method == "Network.responseReceived":
            _, from_memory = self._open.pop(key, ("", False))
            response = params.get("response") or {}
            if str(response.get("url", "")).startswith(_LOCAL_SCHEMES):
                return
            source, detail = _source_of(response, from_memory)
            status = response.get("status")
            self._add(
                str(response.get("url", "")),
                int(status) if isinstance(status, (int, float)) else None,
                str(params.get("type", "Other")),
                source,
                detail,
                context,
            )
        elif method == "Network.loadingFailed":
            url, _ = self._open.pop(key, ("", False))
            if url and not params.get("canceled"):
                error = str(params.get("errorText", "failed"))
                self._add(url, None, str(params.get("type", "Other")), "failed", error, context)

    def recent(self, limit: int) -> list[NetworkRecord]:
        """The newest `limit` records, oldest first."""
        return list(self._records)[-limit:] if limit > 0 else []

    def counts(self) -> dict[str, int]:
        """How many records of each source the buffer holds, every source named."""
        counted = collections.Counter(record.source for record in self._records)
        return {source: counted[source] for source in SOURCES}

    def clear(self) -> int:
        count = len(self._records)
        self._records.clear()
        return count

    def __len__(self) -> int:
        return len(self._records)

    def _add(
        self,
        url: str,
        status: int | None,
        resource_type: str,
        source: str,
        detail: str,
        context: str,
    ) -> None:
        if len(self._records) == self._records.maxlen:
            self.dropped += 1
        record = NetworkRecord(
            self._next_seq, url, status, resource_type, source, detail, context, time.time()
        )
        self._records.append(record)
        self._next_seq += 1


def _source_of(response: dict[str, Any], from_memory: bool) -> tuple[str, str]:
    if response.get("fromPrefetchCache"):
        return "prefetch_cache", ""
    if from_memory:
        return "memory_cache", ""
    if response.get("fromServiceWorker"):
        return "service_worker", str(response.get("serviceWorkerResponseSource") or "")
    if response.get("fromDiskCache"):
        return "disk_cache", ""
    return "network", ""
