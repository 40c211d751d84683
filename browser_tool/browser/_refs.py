"""Refs: the short names (`e12`) a snapshot gives the elements a model may act on, and their
resolution back to the live node for one action.

A ref names one node of one document: the CDP session of the target that holds it (the page's,
or an out-of-process iframe's), the frame, the frame's document when the ref was issued (its
loaderId) and the node's backendNodeId. Refs count up per Page and are never re-used for another
node; a node keeps its ref across snapshots while it lives. Resolution never lands on another
element: it checks, in order, that the ref is well-formed, was issued on this Page, comes from
the page's current session, that its frame still shows the same document, and that the node is
still connected; each failure says which and asks for a new snapshot.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .._errors import CdpCommandError, CdpConnectionError, ToolError
from ..cdp import CdpSession

_REF = re.compile(r"e[1-9][0-9]{0,9}")
_TAKE_NEW = "take a new snapshot (browser_snapshot) and use its refs"
_IS_CONNECTED = "function() { return this.isConnected; }"


@dataclass(frozen=True)
class RefEntry:
    """What a ref was issued for."""

    ref: str
    page_session_id: str  # the page's own session when issued (a replaced page has another)
    session_id: str  # the session holding the node (the page's, or an OOPIF's)
    frame_id: str
    document: str  # the frame's loaderId when issued
    backend_node_id: int
    role: str
    name: str


@dataclass(frozen=True)
class ElementHandle:
    """A ref resolved against the live page, for one action."""

    ref: str
    session: CdpSession
    frame_id: str
    backend_node_id: int
    object_id: str  # Runtime remote object of the node, in its frame's context
    role: str
    name: str


class RefTable:
    """The refs issued on one Page (`Page.refs`); it survives a crash replacement, so a ref from
    before the crash is known and refused as coming from another page."""

    def __init__(self) -> None:
        self._by_ref: dict[str, RefEntry] = {}
        self._by_node: dict[tuple[str, str, str, int], str] = {}
        self._count = 0
        self.page_session_id = ""  # set by the snapshot: the page session refs belong to
        # Refs of the conversation's earlier browsers: numbered up to `_earlier`, their count
        # kept in `_floor_file` in the conversation's dir, so a new browser never re-uses one.
        self._floor_file: Path | None = None
        self._earlier = 0
        self._saved = 0
        # Issue 20 (tabs share one table): names the open tab whose page session is the given
        # one ("tab 1 (https://...)"), or None; set by the session's Tabs.
        self.tab_of: Callable[[str], str | None] = lambda page_session_id: None

    @property
    def continues(self) -> bool:
        """Whether `continue_after` has been called (it is called once per page)."""
        return self._floor_file is not None

    def continue_after(self, floor_file: Path) -> None:
        """Number new refs after those the conversation's earlier browsers issued, whose count
        `floor_file` keeps (missing: none), so a ref from before a browser restart is refused,
        never re-used for another element. `save` keeps the count there."""
        if self._floor_file is not None:
            return
        self._floor_file = floor_file
        with contextlib.suppress(OSError, ValueError):
            self._earlier = int(floor_file.read_text())
        self._count = max(self._count, self._earlier)
        self._saved = self._count

    def save(self) -> None:
        """Write the count of refs issued to the floor file, if it changed (never raises)."""
        if self._floor_file is None or self._count == self._saved:
            return
        with contextlib.suppress(OSError):
            self._floor_file.write_text(str(self._count))
        self._saved = self._count

    def from_earlier_browser(self, ref: str) -> bool:
        """Whether `ref` (not issued here) was issued by an earlier browser of the conversation."""
        return ref not in self._by_ref and 0 < int(ref[1:]) <= self._earlier

    def ref_for(
        self,
        session_id: str,
        frame_id: str,
        document: str,
        backend_node_id: int,
        role: str,
        name: str,
    ) -> str:
        """The node's ref: the same ref as before while the node lives, else a new one."""
        key = (session_id, frame_id, document, backend_node_id)
        ref = self._by_node.get(key)
        if ref is None:
            self._count += 1
            ref = f"e{self._count}"
            self._by_node[key] = ref
        self._by_ref[ref] = RefEntry(
            ref, self.page_session_id, session_id, frame_id, document, backend_node_id, role, name
        )
        return ref

    def entry(self, ref: str) -> RefEntry | None:
        return self._by_ref.get(ref)

    def describe(self, ref: str) -> str:
        """'button "Sign in" [ref=e12]' (or just '[ref=e12]' for an unknown ref)."""
        entry = self._by_ref.get(ref)
        if entry is None:
            return f"[ref={ref}]"
        name = f" {_quote(entry.name)}" if entry.name else ""
        return f"{entry.role}{name} [ref={ref}]"


class _Frames(Protocol):
    @property
    def frames(self) -> Mapping[str, CdpSession]: ...


class RefPage(Protocol):
    """What resolution needs of a Page (the Page itself imports this module)."""

    @property
    def refs(self) -> RefTable: ...
    @property
    def session(self) -> CdpSession: ...
    @property
    def workers(self) -> _Frames: ...


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _refused(ref: str, element: str | None, why: str) -> ToolError:
    what = f"Ref {ref}" + (f" ({element})" if element else "")
    return ToolError(f"{what} {why}; {_TAKE_NEW}.")


async def resolve_ref(page: RefPage, ref: str, element: str | None = None) -> ElementHandle:
    """The live element of `ref`, for one action. Raises ToolError saying why not (see the
    module docstring), echoing the model's description `element` when given; CdpError when the
    page does not answer."""
    if not isinstance(ref, str) or not _REF.fullmatch(ref):
        shown = f" ({element})" if element else ""
        raise ToolError(
            f"Ref {ref!r}{shown} is not a ref: refs look like e12, from browser_snapshot."
        )
    entry = page.refs.entry(ref)
    if entry is None:
        if page.refs.from_earlier_browser(ref):
            raise _refused(
                ref,
                element,
                "came from an earlier browser of this conversation, which is gone (it crashed, "
                "was reaped or restarted)",
            )
        raise _refused(ref, element, "was never issued on this page")
    page_session = page.session
    if entry.page_session_id != page_session.session_id and (
        tab := page.refs.tab_of(entry.page_session_id)
    ):
        raise ToolError(
            f"Ref {ref}{f' ({element})' if element else ''} is on {tab}, not on the current "
            "tab; select that tab (browser_tabs select) or take a new snapshot of this one."
        )
    if entry.page_session_id != page_session.session_id:
        raise _refused(
            ref, element, "came from another page (the page was replaced, e.g. after a crash)"
        )
    session = _session_of(page, page_session, entry.session_id)
    if session is None:
        raise _refused(ref, element, "is in a frame that is gone (it navigated or was removed)")
    url = await _frame_document(session, entry)
    if url is not None:
        raise _refused(ref, element, f"is from a document its frame left (it now shows {url})")
    try:
        resolved = await session.send("DOM.resolveNode", {"backendNodeId": entry.backend_node_id})
        object_id = str(resolved["object"]["objectId"])
        connected = await session.send(
            "Runtime.callFunctionOn",
            {"objectId": object_id, "functionDeclaration": _IS_CONNECTED, "returnByValue": True},
        )
    except (CdpCommandError, KeyError):
        raise _refused(ref, element, "is gone: the element was removed from the page") from None
    except CdpConnectionError:
        if session is page_session:
            raise  # the page itself went away: a crash, reported as such
        raise _refused(ref, element, "is in a frame that is gone") from None
    if connected.get("result", {}).get("value") is not True:
        raise _refused(ref, element, "is gone: the element was removed from the page")
    return ElementHandle(
        ref, session, entry.frame_id, entry.backend_node_id, object_id, entry.role, entry.name
    )


def _session_of(page: RefPage, page_session: CdpSession, session_id: str) -> CdpSession | None:
    if session_id == page_session.session_id:
        return page_session
    return page.workers.frames.get(session_id)


async def _frame_document(session: CdpSession, entry: RefEntry) -> str | None:
    """None while the ref's frame shows the document it was issued in; else the URL it shows
    now ("nothing" when the frame is gone)."""
    try:
        tree = await session.send("Page.getFrameTree")
    except CdpConnectionError:
        return "nothing: the frame is gone"
    stack = [tree.get("frameTree", {})]
    while stack:
        node = stack.pop()
        frame = node.get("frame", {})
        if frame.get("id") == entry.frame_id:
            if frame.get("loaderId") == entry.document:
                return None
            return str(frame.get("url", ""))
        stack.extend(node.get("childFrames", []))
    return "nothing: the frame is gone"
