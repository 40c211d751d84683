"""browser_get_service_workers: the service workers of the current page's origin.

Two views are joined: the page's own (`navigator.serviceWorker`: its registrations and the
worker that controls it) and Chrome's `ServiceWorker` domain (each version's status and
whether it is running), kept by the browser layer as Chrome reports it. Just after a page
registers a worker, the page can know of it before Chrome's report has arrived; the call then
waits a moment for it, and falls back to the page's view.
"""

from __future__ import annotations

from typing import Any

import trio

from .._errors import ToolError
from ..browser import Page, ServiceWorkerRegistration, ServiceWorkerVersion
from ._context import ToolContext
from ._output import ToolOutput, spill_large_text

# How long to wait for Chrome's report of a registration the page already lists.
_REPORT_WAIT = 2.0
_PAGE_VIEW = """(async () => {
  const page = {url: location.href, origin: location.origin};
  if (!("serviceWorker" in navigator)) return {...page, available: false, secure: isSecureContext};
  let registrations;
  try {
    registrations = await navigator.serviceWorker.getRegistrations();
  } catch (error) {
    return {...page, available: false, secure: isSecureContext, error: String(error)};
  }
  const controller = navigator.serviceWorker.controller;
  const mine = controller ? await navigator.serviceWorker.getRegistration() : undefined;
  const worker = (w) => w && {url: w.scriptURL, state: w.state};
  return {...page, available: true, controller: controller ? controller.scriptURL : null,
    controllerScope: mine ? mine.scope : null,
    registrations: registrations.map((r) => ({scope: r.scope,
      workers: [r.installing, r.waiting, r.active].filter(Boolean).map(worker)}))};
})()"""


async def service_workers(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = ctx.existing_browser()
    if session is None:
        return ToolOutput.ok(
            "No browser is running in this conversation, so no page and no service worker. "
            "Navigate to a page first."
        )
    with trio.move_on_at(ctx.deadline):
        view = await _page_view(session.page)
        text = await _describe(session.page, view, ctx.deadline)
        return ToolOutput.ok(
            spill_large_text(
                text,
                ctx.dirs().outputs,
                label="service-workers",
                limit=ctx.settings.inline_text_limit,
            )
        )
    raise ctx.timeout_error(
        "reading the page's service workers: the "
        "page did not answer (a script may be keeping it busy, or a navigation has not "
        "committed yet)."
    )


async def _page_view(page: Page) -> dict[str, Any]:
    params = {"expression": _PAGE_VIEW, "awaitPromise": True, "returnByValue": True}
    result = await page.session.send("Runtime.evaluate", params)
    value = (result.get("result") or {}).get("value")
    if "exceptionDetails" in result or not isinstance(value, dict):
        raise ToolError(f"Could not read the page's service workers: {result!r:.300}")
    return value


async def _describe(page: Page, view: dict[str, Any], deadline: float) -> str:
    url, origin = str(view.get("url", "")), str(view.get("origin", "null"))
    if not origin.startswith(("http://", "https://")):
        return (
            f"The page ({url}) has no web origin, so no service worker: service workers belong "
            "to http(s) pages. Navigate to one first."
        )
    if not view.get("available"):
        why = "it is not a secure context" if not view.get("secure") else view.get("error")
        return (
            f"Service workers are not available on this page ({url}): {why}. They need HTTPS, "
            "or http://localhost / http://127.0.0.1."
        )
    registry = page.workers.registry
    listed = {str(r["scope"]): r for r in view.get("registrations", [])}

    def missing() -> bool:
        return not set(listed) <= {r.scope for r in registry.for_origin(origin)}

    with trio.move_on_at(min(deadline, trio.current_time() + _REPORT_WAIT)):
        while missing():
            await registry.wait_changed()
    reported = {r.scope: r for r in registry.for_origin(origin)}
    controller, controller_scope = view.get("controller"), view.get("controllerScope")
    scopes = sorted(set(listed) | set(reported))
    lines = []
    for scope in scopes:
        versions = _versions(reported.get(scope), listed.get(scope))
        in_control = _controlling(versions, controller) if scope == controller_scope else None
        lines.append(f"- scope {scope}")
        for version in versions:
            running = f", {version.running_status}" if version.running_status else ""
            controls = ", controls this page" if version is in_control else ""
            lines.append(f"  - {version.status}{running}{controls}: script {version.script_url}")
    if controller:
        control = f"this page ({url}) is controlled by {controller}"
    else:
        control = f"this page ({url}) is not controlled by a service worker"
        if any(url.startswith(scope) for scope in scopes):
            control += " yet (the worker whose scope covers it takes control after a reload)"
    if not scopes:
        return f"No service worker is registered for {origin}; {control}."
    plural = "registration" if len(scopes) == 1 else "registrations"
    return "\n".join([f"{len(scopes)} service worker {plural} for {origin}; {control}.", *lines])


def _versions(
    reported: ServiceWorkerRegistration | None, listed: dict[str, Any] | None
) -> list[ServiceWorkerVersion]:
    """Chrome's versions when it reported the registration, else the page's (running: '')."""
    if reported is not None and reported.versions:
        return list(reported.versions)
    workers = (listed or {}).get("workers", [])
    return [ServiceWorkerVersion("", str(w["url"]), str(w["state"]), "") for w in workers]


def _controlling(
    versions: list[ServiceWorkerVersion], controller: object
) -> ServiceWorkerVersion | None:
    """The version running the page's controller: its script, active (or becoming so)."""
    for status in ("activated", "activating"):
        for version in versions:
            if version.status == status and version.script_url == controller:
                return version
    return None
