"""The snapshot's node model, and its making from Chrome's accessibility tree: which nodes are
folded, which get refs, and the text a model reads. Pure: no CDP here (`_snapshot.py` reads the
trees and hands them over as recorded dicts).

Folded: ignored nodes, unnamed generic/none/presentation wrappers and InlineTextBox (their
children move up); adjacent static text is merged; a node whose children are only text that
repeats its name loses them; an unnamed node whose children are only text takes that text as
its value (`- paragraph: text`). Refs go to every node a user could act on (by role, or
focusable, or editable); headings and text get none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# Roles a user acts on: each such node gets a ref, as does any focusable or editable node.
ACTIONABLE_ROLES = frozenset(
    {
        "button",
        "link",
        "textbox",
        "searchbox",
        "combobox",
        "listbox",
        "option",
        "MenuListOption",
        "checkbox",
        "radio",
        "switch",
        "slider",
        "spinbutton",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "tab",
        "treeitem",
        "DisclosureTriangle",
        "gridcell",
        "textarea",
    }
)
_FOLDED = frozenset(
    {
        "generic",
        "none",
        "presentation",
        "LabelText",
        "MenuListPopup",
        "LineBreak",
        "Unknown",
        "rowgroup",
    }
)
# Inline formatting: with nothing to act on inside, it reads as part of its sentence.
_INLINE = frozenset(
    {
        "code",
        "emphasis",
        "strong",
        "subscript",
        "superscript",
        "mark",
        "time",
        "insertion",
        "deletion",
        "abbr",
    }
)
_NO_SPACE_BEFORE = tuple(",.;:!?)]}")
_DROPPED = frozenset({"InlineTextBox", "ListMarker"})  # with their children
_RENAMED = {"Iframe": "iframe", "DisclosureTriangle": "summary"}
_TEXT = "StaticText"
STATE_ORDER = ("checked", "mixed", "disabled", "expanded", "selected", "pressed", "required")
_STATES = (*STATE_ORDER, "focused")
_VALUE_ROLES = frozenset(
    {"textbox", "searchbox", "combobox", "slider", "spinbutton", "textarea", "progressbar"}
)


@dataclass(frozen=True)
class SnapshotNode:
    ref: str | None
    role: str
    name: str
    value: str | None
    states: tuple[str, ...]  # in the order of _STATES
    depth: int
    url: str | None  # links
    level: int | None = None  # headings

    def line(self) -> str:
        parts = [f"{'  ' * self.depth}- {self.role}"]
        if self.name:
            parts.append(_quote(self.name))
        parts.extend(f"[{state}]" for state in self.states)
        if self.level is not None:
            parts.append(f"[level={self.level}]")
        if self.ref is not None:
            parts.append(f"[ref={self.ref}]")
        text = " ".join(parts)
        if self.value:
            text += f": {self.value}"
        if self.url:
            text += f" -> {self.url}"
        return text


@dataclass(frozen=True)
class Snapshot:
    url: str
    title: str
    nodes: tuple[SnapshotNode, ...]  # document order

    def header(self) -> str:
        return f"Page URL: {self.url}\nPage title: {self.title}"

    def lines(self) -> list[str]:
        return [node.line() for node in self.nodes]

    def by_ref(self) -> dict[str, SnapshotNode]:
        return {node.ref: node for node in self.nodes if node.ref is not None}


@dataclass
class Item:
    """A node being folded: what it shows, and the AX node's backend DOM node id."""

    role: str
    name: str
    backend_id: int | None
    value: str | None = None
    states: tuple[str, ...] = ()
    url: str | None = None
    level: int | None = None
    actionable: bool = False
    origin: tuple[str, str, str] = ("", "", "")  # session id, frame id, document (loaderId)
    children: list[Item] = field(default_factory=list)


def shorten_url(url: str, page_url: str) -> str:
    """A link's URL as a page would likely have written it: `#part` on the same page, the path
    after the page's directory in the same directory (below the site root), the path on the
    same origin, else the whole URL."""
    parts = urlsplit(page_url)
    if parts.scheme not in ("http", "https"):
        return url
    origin = f"{parts.scheme}://{parts.netloc}"
    page = page_url.split("#", 1)[0]
    directory = page.split("?", 1)[0].rsplit("/", 1)[0] + "/"
    if url.startswith(page + "#"):
        return url[len(page) :]
    if directory != origin + "/" and url.startswith(directory) and len(url) > len(directory):
        return url[len(directory) :]
    if url.startswith(origin + "/"):
        return url[len(origin) :]
    return url


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _value(node: dict[str, Any], key: str) -> Any:
    return (node.get(key) or {}).get("value")


def _props(node: dict[str, Any]) -> dict[str, Any]:
    return {p.get("name"): (p.get("value") or {}).get("value") for p in node.get("properties", [])}


def _clean(text: object) -> str:
    return " ".join(str(text or "").split())


def fold_tree(
    nodes: list[dict[str, Any]],
    *,
    short_url: Callable[[str], str] = lambda url: url,
    embedded: Callable[[int], list[Item] | None] = lambda backend_id: None,
    origin: tuple[str, str, str] = ("", "", ""),
    root_backend: int | None = None,
) -> list[Item] | None:
    """The folded items under the root(s) of one frame's AX nodes (`getFullAXTree` dicts), or
    under the node of DOM node `root_backend` (None when no AX node has it). `embedded(id)`
    gives the folded content of the frame the iframe element of backend node `id` shows."""
    by_id = {str(n.get("nodeId")): n for n in nodes}
    if root_backend is not None:
        roots = [n for n in nodes if n.get("backendDOMNodeId") == root_backend][:1]
        if not roots:
            return None
    else:
        roots = [n for n in nodes if str(n.get("parentId", "")) not in by_id]
    folder = _Folder(by_id, short_url, embedded, origin)
    out: list[Item] = []
    for root in roots:
        out.extend(folder.fold(root))
    return _merge_text(out)


@dataclass(frozen=True)
class _Folder:
    by_id: dict[str, dict[str, Any]]
    short_url: Callable[[str], str]
    embedded: Callable[[int], list[Item] | None]
    origin: tuple[str, str, str]

    def fold(self, node: dict[str, Any]) -> list[Item]:
        return _fold(node, self)


def _fold(node: dict[str, Any], f: _Folder) -> list[Item]:
    role = str(_value(node, "role") or "")
    if role in _DROPPED:
        return []
    name = _clean(_value(node, "name"))
    backend = node.get("backendDOMNodeId")
    if role == _TEXT:  # its children are InlineTextBoxes: not read at all (a third of the tree)
        return [Item("text", name, backend)] if name and not node.get("ignored") else []
    children: list[Item] = []
    for child_id in node.get("childIds", []):
        child = f.by_id.get(str(child_id))
        if child is not None:
            children.extend(_fold(child, f))
    if role == "Iframe" and isinstance(backend, int):
        inner = f.embedded(backend)
        if inner is not None:
            children = inner
    children = _merge_text(children)
    if node.get("ignored") or role in ("RootWebArea", "WebArea"):
        return children
    props = _props(node)
    # An editing host (a contenteditable element) is focusable; its editable descendants are not.
    editing_host = bool(props.get("editable") and props.get("focusable"))
    if role in _FOLDED and not name and not editing_host:
        return children
    states = tuple(s for s in _STATES if _state(props, s))
    item = Item(
        role=_RENAMED.get(role, role),
        name=name,
        backend_id=backend if isinstance(backend, int) else None,
        states=states,
        origin=f.origin,
        children=children,
    )
    value = _clean(_value(node, "value"))
    if value and role in _VALUE_ROLES and value != name:
        item.value = value
    if role == "link" and props.get("url"):
        item.url = f.short_url(str(props["url"]))
    if role == "heading" and isinstance(props.get("level"), int):
        item.level = props["level"]
    item.actionable = (
        role in ACTIONABLE_ROLES
        or bool(props.get("focusable") and role not in ("RootWebArea", "Iframe", "generic"))
        or bool(props.get("editable") and role != _TEXT)
        or editing_host
    )
    if role in _INLINE and not item.actionable:
        if _has_actionable(children):
            return children
        text = name or _plain_text(children)
        return [Item("text", text, item.backend_id)] if text else []
    texts = [c.name for c in children if c.role == "text"]
    if children and len(texts) == len(children):
        joined = " ".join(texts)
        if joined in (name, item.value) or (not name and item.value is None):
            item.children = []
            if not name and item.value is None:
                item.value = joined
    elif name and children and _plain_text(children) == name:
        if _has_actionable(children):
            item.name = ""  # a cell "abs()" holding a link "abs()": the link says it
        else:
            item.children = []  # a cell "Total" holding a paragraph "Total"
    if role == "paragraph" and not name and item.value is None and len(item.children) == 1:
        return item.children  # a paragraph around one link or one list says nothing more
    if not (item.actionable or name or item.value or item.children or states or item.url):
        return []  # an empty list item, paragraph or row says nothing
    return [item]


def _has_actionable(items: list[Item]) -> bool:
    return any(i.actionable or _has_actionable(i.children) for i in items)


def _plain_text(items: list[Item]) -> str:
    """The text a run of items reads as, as one sentence."""
    out = ""
    for item in items:
        words = [w for w in (item.name, item.value or "", _plain_text(item.children)) if w]
        out = _join(out, " ".join(words))
    return out


def _join(left: str, right: str) -> str:
    if not left or not right:
        return left or right
    tight = right.startswith(_NO_SPACE_BEFORE) or left.endswith(("(", "[", "{"))
    return left + right if tight else f"{left} {right}"


def _has_alnum(text: str) -> bool:
    return any(c.isalnum() for c in text)


def _state(props: dict[str, Any], state: str) -> bool:
    if state == "checked":
        return props.get("checked") in (True, "true")
    if state == "mixed":
        return props.get("checked") == "mixed" or props.get("pressed") == "mixed"
    if state == "pressed":
        return props.get("pressed") in (True, "true")
    return props.get(state) is True


def _merge_text(items: list[Item]) -> list[Item]:
    """Adjacent text merged; a text that only repeats a neighbour's name (a label) dropped."""
    out: list[Item] = []
    for item in items:
        if item.role == "text" and out and out[-1].role == "text":
            out[-1] = Item("text", _join(out[-1].name, item.name), out[-1].backend_id)
        else:
            out.append(item)
    # A lone separator ("|", "»") between links says nothing a model needs.
    if any(i.role != "text" for i in out):
        out = [i for i in out if i.role != "text" or len(i.name) > 3 or _has_alnum(i.name)]
    names = [item.name if item.role != "text" else None for item in out]
    return [
        item
        for i, item in enumerate(out)
        if item.role != "text"
        or item.name
        not in {names[i - 1] if i else None, names[i + 1] if i + 1 < len(out) else None}
    ]


def flatten(
    items: Iterable[Item], assign: Callable[[Item], str | None], *, max_depth: int | None = None
) -> tuple[SnapshotNode, ...]:
    """The items in document order, with depths and the refs `assign` gives actionable ones."""
    out: list[SnapshotNode] = []

    def walk(item: Item, depth: int) -> None:
        if max_depth is not None and depth > max_depth:
            return
        ref = assign(item) if item.actionable else None
        if item.role == "text":
            out.append(SnapshotNode(None, "text", "", item.name, (), depth, None))
        else:
            out.append(
                SnapshotNode(
                    ref, item.role, item.name, item.value, item.states, depth, item.url, item.level
                )
            )
        for child in item.children:
            walk(child, depth + 1)

    for item in items:
        walk(item, 0)
    return tuple(out)
