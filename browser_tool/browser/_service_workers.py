"""What the page's `ServiceWorker` domain reports: registrations and their versions.

Chrome sends the whole state when the domain is enabled and every change after that, as
`workerRegistrationUpdated` and `workerVersionUpdated` events. They are kept here as they
come, so a call reads the current state without asking Chrome and waiting for its answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import trio

SERVICE_WORKER_EVENTS = (
    "ServiceWorker.workerRegistrationUpdated",
    "ServiceWorker.workerVersionUpdated",
)


@dataclass(frozen=True)
class ServiceWorkerVersion:
    version_id: str
    script_url: str
    status: str  # new, installing, installed, activating, activated, redundant
    running_status: str  # stopped, starting, running, stopping


@dataclass(frozen=True)
class ServiceWorkerRegistration:
    registration_id: str
    scope: str
    versions: tuple[ServiceWorkerVersion, ...]


class ServiceWorkerRegistry:
    """The registrations Chrome reported to the page's session, and their versions."""

    def __init__(self) -> None:
        self._scopes: dict[str, str] = {}  # registration id -> scope URL
        self._versions: dict[str, tuple[str, ServiceWorkerVersion]] = {}  # id -> (reg id, v)
        self._changed = trio.Event()

    def reset(self) -> None:
        """Forget everything: a new page session is about to report the whole state again."""
        self._scopes.clear()
        self._versions.clear()
        self._wake()

    def update(self, method: str, params: dict[str, Any]) -> None:
        if method == "ServiceWorker.workerRegistrationUpdated":
            for registration in params.get("registrations") or []:
                registration_id = str(registration.get("registrationId", ""))
                if registration.get("isDeleted"):
                    self._scopes.pop(registration_id, None)
                    for version_id, (owner, _) in list(self._versions.items()):
                        if owner == registration_id:
                            del self._versions[version_id]
                else:
                    self._scopes[registration_id] = str(registration.get("scopeURL", ""))
        elif method == "ServiceWorker.workerVersionUpdated":
            for version in params.get("versions") or []:
                version_id = str(version.get("versionId", ""))
                self._versions[version_id] = (
                    str(version.get("registrationId", "")),
                    ServiceWorkerVersion(
                        version_id,
                        str(version.get("scriptURL", "")),
                        str(version.get("status", "new")),
                        str(version.get("runningStatus", "stopped")),
                    ),
                )
        else:
            return
        self._wake()

    def for_origin(self, origin: str) -> list[ServiceWorkerRegistration]:
        """The registrations whose scope is on `origin` ("http://host:port"), by scope."""
        found = []
        for registration_id, scope in self._scopes.items():
            if _origin_of(scope) != origin:
                continue
            versions = tuple(
                version for owner, version in self._versions.values() if owner == registration_id
            )
            found.append(ServiceWorkerRegistration(registration_id, scope, versions))
        return sorted(found, key=lambda registration: registration.scope)

    async def wait_changed(self) -> None:
        """Return at the next change Chrome reports."""
        await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
