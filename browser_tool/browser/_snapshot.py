"""Capture of the page's accessibility snapshot: Chrome's own AX tree of every frame (the main
frame, same-process iframes, and out-of-process iframes through their sessions), folded
(`_ax_tree.py`) and given refs from the Page's RefTable.

Each frame's tree comes from `Accessibility.getFullAXTree {frameId}` on the session that holds
the frame; an iframe element is joined to the frame it shows with `DOM.getFrameOwner` on the
parent's session. Open shadow roots need nothing: the AX tree is the flattened tree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._errors import CdpCommandError, CdpConnectionError, ToolError
from ..cdp import CdpSession
from ._ax_tree import Item, Snapshot, SnapshotNode, flatten, fold_tree, shorten_url
from ._refs import resolve_ref

if TYPE_CHECKING:
    from ._page import Page

__all__ = ["Snapshot", "SnapshotNode", "capture_snapshot"]

# What a frame's session answers when the frame went away meanwhile (an iframe's target
# detaches: its session's commands fail with CdpConnectionError, which must not be taken for
# the page's crash).
_GONE = (CdpCommandError, CdpConnectionError)
_FIND_JS = """(() => {
  try { return document.querySelector(%s); }
  catch (e) { return String(e.message || e); }
})()"""


@dataclass(frozen=True)
class _Frame:
    session: CdpSession
    frame_id: str
    parent_id: str | None
    document: str  # loaderId
    url: str


async def capture_snapshot(
    page: Page,
    *,
    root_ref: str | None = None,
    selector: str | None = None,
    depth: int | None = None,
) -> Snapshot:
    """The page's snapshot (or the subtree of `root_ref` or of the first element `selector`
    matches in the main frame), cut below `depth`. Raises ToolError for a bad selector or ref;
    CdpError when the page does not answer. The caller bounds it by its deadline."""
    session = page.session
    refs = page.refs
    refs.page_session_id = session.session_id
    frames = await _frames(session, list(page.workers.frames.values()))
    main = next(f for f in frames.values() if f.parent_id is None and f.session is session)
    trees = await _ax_trees(frames)
    owners = await _owners(frames)

    def short_url(url: str) -> str:
        return shorten_url(url, main.url)

    def fold(frame: _Frame, root_backend: int | None = None) -> list[Item] | None:
        def embedded(backend_id: int) -> list[Item] | None:
            child = owners.get((frame.frame_id, backend_id))
            return None if child is None else fold(frames[child])

        key = (frame.session.session_id, frame.frame_id, frame.document)
        return fold_tree(
            trees.get(frame.frame_id, []),
            short_url=short_url,
            embedded=embedded,
            origin=key,
            root_backend=root_backend,
        )

    if root_ref is not None:
        handle = await resolve_ref(page, root_ref)
        frame = frames.get(handle.frame_id)
        if frame is None:  # it went away between the two reads
            raise ToolError(f"Ref {root_ref} is in a frame that is gone; take a new snapshot.")
        items = fold(frame, handle.backend_node_id)
    elif selector:
        backend = await _select(session, selector)
        items = fold(main, backend)
    else:
        items = fold(main)
    if items is None:
        raise ToolError("The element has no accessibility node (it is hidden or not rendered)")
    title = _title(trees.get(main.frame_id, []))

    def assign(item: Item) -> str | None:
        if item.backend_id is None:
            return None
        session_id, frame_id, document = item.origin
        return refs.ref_for(session_id, frame_id, document, item.backend_id, item.role, item.name)

    return Snapshot(main.url, title, flatten(items, assign, max_depth=depth))


def _title(nodes: list[dict[str, Any]]) -> str:
    for node in nodes:
        if (node.get("role") or {}).get("value") == "RootWebArea":
            return str((node.get("name") or {}).get("value") or "")
    return ""


async def _frames(page: CdpSession, oopifs: list[CdpSession]) -> dict[str, _Frame]:
    """Every frame by id, each with the session that holds its document."""
    frames: dict[str, _Frame] = {}
    for session in [page, *oopifs]:
        try:
            tree = await session.send("Page.getFrameTree")
        except _GONE:
            if session is page:
                raise
            continue  # an iframe target going away
        stack: list[tuple[dict[str, Any], str | None]] = [(tree.get("frameTree", {}), None)]
        while stack:
            node, parent = stack.pop()
            info = node.get("frame", {})
            frame_id = str(info.get("id", ""))
            known = frames.get(frame_id)
            # An out-of-process frame shows in its parent's tree too; its own session wins.
            if known is None or session is not page:
                parent_id = parent if known is None else known.parent_id
                frames[frame_id] = _Frame(
                    session,
                    frame_id,
                    parent_id if parent_id is not None else info.get("parentId"),
                    str(info.get("loaderId", "")),
                    str(info.get("url", "")),
                )
            stack.extend((child, frame_id) for child in node.get("childFrames", []))
    return frames


async def _ax_trees(frames: dict[str, _Frame]) -> dict[str, list[dict[str, Any]]]:
    trees: dict[str, list[dict[str, Any]]] = {}
    for frame in frames.values():
        try:
            got = await frame.session.send(
                "Accessibility.getFullAXTree", {"frameId": frame.frame_id}
            )
        except _GONE:
            if frame.parent_id is None:
                raise  # the main frame: the page itself does not answer
            continue  # a frame that went away meanwhile
        trees[frame.frame_id] = got.get("nodes", [])
    return trees


async def _owners(frames: dict[str, _Frame]) -> dict[tuple[str, int], str]:
    """(parent frame id, iframe element's backend node id) -> the child frame's id."""
    owners: dict[tuple[str, int], str] = {}
    for frame in frames.values():
        parent = frames.get(frame.parent_id or "")
        if parent is None:
            continue
        try:
            got = await parent.session.send("DOM.getFrameOwner", {"frameId": frame.frame_id})
        except _GONE:
            continue
        backend = got.get("backendNodeId")
        if isinstance(backend, int):
            owners[(parent.frame_id, backend)] = frame.frame_id
    return owners


async def _select(session: CdpSession, selector: str) -> int:
    found = await session.send("Runtime.evaluate", {"expression": _FIND_JS % json.dumps(selector)})
    result = found.get("result", {})
    if result.get("type") == "string":
        raise ToolError(f"Invalid selector {selector!r}: {result.get('value')}")
    object_id = result.get("objectId")
    if result.get("subtype") == "null" or not object_id:
        raise ToolError(f"Selector {selector!r} not found")
    described = await session.send("DOM.describeNode", {"objectId": object_id})
    return int(described["node"]["backendNodeId"])
