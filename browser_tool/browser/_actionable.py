"""Before an action: the element a ref names, scrolled into view, visible, stable, enabled and
the one a click at its centre would reach; else an error that says which of these it is not.

Every check reads the page; none acts on it. Coordinates come from `DOM.getContentQuads` in
the node's own frame's viewport; for an out-of-process iframe they are moved into the page's
viewport (the iframe element's content box in the page) so that mouse events go to the page.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import trio

from .._errors import CdpCommandError, ToolError
from ..cdp import CdpSession
from ._page import Page
from ._refs import ElementHandle, resolve_ref

_POLL = 0.05  # between two looks at an element that is not ready yet

_DISABLED = """function() {
  if (this.matches && this.matches(':disabled')) return 'disabled';
  for (let n = this; n; n = n.parentElement || (n.getRootNode && n.getRootNode().host)) {
    if (n.getAttribute && n.getAttribute('aria-disabled') === 'true') return 'aria-disabled';
  }
  return '';
}"""
_FRAME = "function() { return new Promise(r => requestAnimationFrame(() => r(true))); }"
_CONTAINS = """function(hit) {
  for (let n = hit; n; n = n.parentNode || n.host) { if (n === this) return true; }
  return false;
}"""


@dataclass(frozen=True)
class ActionTarget:
    """A resolved element ready for input: its page-viewport centre, and how to name it."""

    handle: ElementHandle
    x: float
    y: float
    text: str  # 'button "Sign in" [ref=e12]', with the model's own description if given
    dx: float = 0.0  # the element's frame's viewport in the page's (out-of-process iframes)
    dy: float = 0.0


def describe(page: Page, handle: ElementHandle, element: str | None) -> str:
    own = page.refs.describe(handle.ref)
    return f"{own} ({element})" if element else own


async def resolve_actionable(
    page: Page, ref: str, element: str | None, *, deadline: float, timeout_text: str
) -> ActionTarget:
    """Resolve `ref` and wait until its element can take a click. Raises ToolError saying why
    not (ref refused, not visible, moving, disabled, covered by another element) by `deadline`."""
    handle = await resolve_ref(page, ref, element)
    session = handle.session
    what = describe(page, handle, element)
    reason = "it did not become ready"
    with trio.move_on_at(deadline):
        # A node with no layout box cannot scroll: the visibility check below says so.
        with contextlib.suppress(CdpCommandError):
            await session.send(
                "DOM.scrollIntoViewIfNeeded", {"backendNodeId": handle.backend_node_id}
            )
        previous: tuple[float, ...] | None = None
        while True:
            quad = await _first_quad(session, handle.backend_node_id)
            disabled = await _call(session, handle.object_id, _DISABLED)
            if quad is None:
                reason = "it is not visible (it has no box on the page)"
                previous = None
            elif disabled:
                reason = f"it is disabled ({disabled})"
            elif previous != quad:
                if previous is not None:  # a first look (or one after a cover) proves nothing
                    reason = "it is still moving (its box changed between two animation frames)"
                previous = quad
                await _call(session, handle.object_id, _FRAME, await_promise=True)
                continue
            else:
                x = sum(quad[0::2]) / 4
                y = sum(quad[1::2]) / 4
                cover = await _covering(page, handle, x, y)
                if cover is None:
                    dx, dy = await _frame_offset(page, handle)
                    return ActionTarget(handle, x + dx, y + dy, what, dx, dy)
                reason = f"another element would receive the click: {cover}"
                previous = None
            await trio.sleep(_POLL)
    raise ToolError(
        f"Timeout after {timeout_text} waiting for {what} to be actionable: {reason}. "
        "Nothing was done."
    )


async def _call(
    session: CdpSession, object_id: str, fn: str, *, await_promise: bool = False, args: Any = None
) -> Any:
    params: dict[str, Any] = {
        "objectId": object_id,
        "functionDeclaration": fn,
        "returnByValue": True,
        "awaitPromise": await_promise,
    }
    if args is not None:
        params["arguments"] = args
    result = await session.send("Runtime.callFunctionOn", params)
    return result.get("result", {}).get("value")


async def _first_quad(session: CdpSession, backend_node_id: int) -> tuple[float, ...] | None:
    try:
        found = await session.send("DOM.getContentQuads", {"backendNodeId": backend_node_id})
    except CdpCommandError:
        return None
    for quad in found.get("quads", []):
        xs, ys = quad[0::2], quad[1::2]
        if max(xs) - min(xs) >= 1 and max(ys) - min(ys) >= 1:
            return tuple(float(v) for v in quad)
    return None


async def _covering(page: Page, handle: ElementHandle, x: float, y: float) -> str | None:
    """None when a click at (x, y) in the element's frame reaches it or its content; else a
    description of the element that would get it (role, name, ref)."""
    session = handle.session
    # getNodeForLocation takes document coordinates: the viewport point plus the scroll offset.
    sx, sy = 0.0, 0.0
    with contextlib.suppress(CdpCommandError, KeyError):
        viewport = (await session.send("Page.getLayoutMetrics"))["cssVisualViewport"]
        sx, sy = float(viewport["pageX"]), float(viewport["pageY"])
    try:
        hit = await session.send(
            "DOM.getNodeForLocation",
            {"x": round(x + sx), "y": round(y + sy), "includeUserAgentShadowDOM": False},
        )
    except CdpCommandError:
        return "nothing (the point is outside the page)"
    hit_id = int(hit.get("backendNodeId", 0))
    if hit_id == handle.backend_node_id:
        return None
    try:
        resolved = await session.send("DOM.resolveNode", {"backendNodeId": hit_id})
        hit_object = resolved["object"]["objectId"]
        inside = await _call(session, handle.object_id, _CONTAINS, args=[{"objectId": hit_object}])
    except CdpCommandError:
        inside = False  # another frame's node, or gone: not ours
    if inside:
        return None
    return await name_node(page, session, hit_id, str(hit.get("frameId", handle.frame_id)))


async def name_node(page: Page, session: CdpSession, backend_node_id: int, frame_id: str) -> str:
    """`role "name" [ref=eN]` of the nearest node at or above `backend_node_id` that the
    accessibility tree names or gives a role."""
    try:
        tree = await session.send(
            "Accessibility.getPartialAXTree",
            {"backendNodeId": backend_node_id, "fetchRelatives": True},
        )
    except CdpCommandError:
        return "an element the accessibility tree does not show"
    nodes = {n["nodeId"]: n for n in tree.get("nodes", [])}
    node = next((n for n in nodes.values() if n.get("backendDOMNodeId") == backend_node_id), None)
    while node is not None:
        role = str((node.get("role") or {}).get("value", ""))
        name = str((node.get("name") or {}).get("value", ""))
        if not node.get("ignored") and (name or role not in ("generic", "none", "")):
            backend = int(node.get("backendDOMNodeId", backend_node_id))
            document = await _loader_of(session, frame_id)
            ref = page.refs.ref_for(session.session_id, frame_id, document, backend, role, name)
            return page.refs.describe(ref)
        node = nodes.get(node.get("parentId", ""))
    return "an element the accessibility tree does not name"


async def _frame_offset(page: Page, handle: ElementHandle) -> tuple[float, float]:
    """How far the element's frame's viewport lies from the page's: zero unless the element
    is in an out-of-process iframe (then: the iframe element's content box in the page)."""
    if handle.session is page.session:
        return 0.0, 0.0
    tree = await handle.session.send("Page.getFrameTree")
    root = tree["frameTree"]["frame"]["id"]  # the out-of-process iframe's own frame
    owner = await page.session.send("DOM.getFrameOwner", {"frameId": root})
    box = await page.session.send("DOM.getBoxModel", {"backendNodeId": owner["backendNodeId"]})
    content = box["model"]["content"]
    return float(content[0]), float(content[1])


async def _loader_of(session: CdpSession, frame_id: str) -> str:
    """The loaderId of the document `frame_id` shows (what refs are issued against)."""
    tree = await session.send("Page.getFrameTree")
    stack = [tree.get("frameTree", {})]
    while stack:
        node = stack.pop()
        frame = node.get("frame", {})
        if frame.get("id") == frame_id:
            return str(frame.get("loaderId", ""))
        stack.extend(node.get("childFrames", []))
    return ""
