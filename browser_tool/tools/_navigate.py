"""browser_navigate: go to a URL, wait for the load event; a download is saved and reported."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import trio

from .._errors import InvalidInputError, ToolError
from .._tasks import first_of
from ..browser import Page, place_download
from ._context import ToolContext
from ._output import ToolOutput

BLOCKED_SCHEMES = ("file", "chrome", "devtools", "view-source", "chrome-extension", "javascript")
# After Page.navigate answers net::ERR_ABORTED, how long a download announcement may still be in
# flight. Chrome sends Browser.downloadWillBegin before the abort, so this is a safety margin.
_DOWNLOAD_GRACE = 1.0

_NET_ERRORS = {
    "net::ERR_CONNECTION_REFUSED": "Failed to connect to {host}",
    "net::ERR_NAME_NOT_RESOLVED": "Could not resolve host {hostname}",
    "net::ERR_CONNECTION_TIMED_OUT": "Connection to {host} timed out",
    "net::ERR_TIMED_OUT": "Connection to {host} timed out",
    "net::ERR_CONNECTION_RESET": "Connection to {host} was reset",
    "net::ERR_CONNECTION_CLOSED": "{host} closed the connection",
    "net::ERR_EMPTY_RESPONSE": "{host} closed the connection without sending a response",
    "net::ERR_ADDRESS_UNREACHABLE": "{host} is unreachable",
    "net::ERR_INTERNET_DISCONNECTED": "No network connection",
    "net::ERR_ABORTED": "Navigation to {url} was aborted",
    "net::ERR_UNSAFE_PORT": "Chrome blocks the port of {url} as unsafe",
    "net::ERR_INVALID_URL": "Invalid URL {url}",
}


def check_url(url: str, allowed_schemes: tuple[str, ...]) -> str:
    """Return the URL to load, or raise InvalidInputError/ToolError saying why not."""
    url = url.strip()
    scheme = urlsplit(url).scheme.lower()
    host_and_port = re.match(r"^[^/:]+:\d", url) is not None  # "localhost:8000" has no scheme
    if not scheme or host_and_port or not re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme):
        raise InvalidInputError(
            "url", 'must be an absolute URL with a scheme, like "https://example.com"', url
        )
    if scheme in BLOCKED_SCHEMES and scheme not in allowed_schemes:
        raise ToolError(
            f"URL scheme '{scheme}:' is not allowed: {url}. Only web URLs (http, https, data, "
            "about) can be opened unless the operator allows more "
            "(BROWSER_TOOL_ALLOWED_URL_SCHEMES)."
        )
    return url


def describe_net_error(error_text: str, url: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc or url
    template = _NET_ERRORS.get(error_text)
    if template is None and error_text.startswith("net::ERR_CERT"):
        template = "TLS certificate error for {host}"
    detail = (template or "Navigation to {url} failed").format(
        host=host, hostname=parts.hostname or host, url=url
    )
    return f"{error_text}: {detail}"


async def navigate(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    url = check_url(args["url"], ctx.settings.allowed_url_schemes)
    page = (await ctx.browser()).page
    try:
        return await _navigate(page, url, ctx)
    except trio.Cancelled:
        # The caller gave up (a client hung up). A pending navigation holds back every script
        # on the page until it commits, so stop it before the next call needs the page.
        await page.send_best_effort("Page.stopLoading")
        raise


async def _navigate(page: Page, url: str, ctx: ToolContext) -> ToolOutput:
    crashed = page.crashed
    download_seen = page.new_download_watch()
    cdp = page.session
    with trio.move_on_at(ctx.deadline) as deadline:
        async with cdp.listen("Page.lifecycleEvent", buffer=1000) as lifecycle:
            result = await cdp.send("Page.navigate", {"url": url})
            error_text = result.get("errorText")
            if error_text:
                if error_text == "net::ERR_ABORTED":
                    with trio.move_on_after(_DOWNLOAD_GRACE):
                        await download_seen.wait()
                if page.downloads and download_seen.is_set():
                    return await _finish_download(page)
                raise ToolError(describe_net_error(error_text, url))
            loader_id = result.get("loaderId")
            if not loader_id:
                return ToolOutput.ok("done")  # same-document navigation (e.g. a #fragment)
            frame_id = result.get("frameId")

            async def loaded() -> None:
                async for event in lifecycle:
                    p = event.params
                    if (
                        p.get("name") == "load"
                        and p.get("loaderId") == loader_id
                        and p.get("frameId") == frame_id
                    ):
                        return

            outcome = await first_of(
                loaded=loaded, crashed=crashed.wait, download=download_seen.wait
            )
        if outcome == "crashed":
            raise page.crash_error()
        if outcome == "download":
            return await _finish_download(page)
        return ToolOutput.ok("done")
    if deadline.cancelled_caught:
        await page.send_best_effort("Page.stopLoading")
        raise ctx.timeout_error(f"waiting for page load of {url}")
    raise AssertionError("unreachable")


async def _finish_download(page: Page) -> ToolOutput:
    download = list(page.downloads.values())[-1]
    await download.done.wait()
    if download.state != "completed":
        raise ToolError(f"Download of {download.url} was {download.state}")
    path = place_download(page.downloads_dir, download)
    size = path.stat().st_size
    return ToolOutput.ok(
        f"The navigation started a download: saved {download.suggested_filename!r} "
        f"({size:,} bytes) as {path}"
    )
