"""Folding and rendering of the snapshot from recorded accessibility nodes (no Chrome)."""

from __future__ import annotations

from typing import Any

from browser_tool.browser import RefTable
from browser_tool.browser._ax_tree import Item, flatten, fold_tree, shorten_url

_ids = iter(range(1, 10_000))


def ax(
    role: str,
    name: str = "",
    *children: dict[str, Any],
    value: str | None = None,
    ignored: bool = False,
    **props: object,
) -> dict[str, Any]:
    """One AX node (as Accessibility.getFullAXTree gives it) with its subtree, flattened later."""
    node: dict[str, Any] = {
        "nodeId": str(next(_ids)),
        "ignored": ignored,
        "role": {"type": "role", "value": role},
        "name": {"type": "computedString", "value": name},
        "properties": [{"name": k, "value": {"value": v}} for k, v in props.items()],
        "backendDOMNodeId": next(_ids),
        "_children": list(children),
    }
    if value is not None:
        node["value"] = {"type": "string", "value": value}
    return node


def nodes_of(root: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def walk(node: dict[str, Any], parent: str | None) -> None:
        children = node.pop("_children")
        node["childIds"] = [child["nodeId"] for child in children]
        if parent is not None:
            node["parentId"] = parent
        out.append(node)
        for child in children:
            walk(child, node["nodeId"])

    walk(root, None)
    return out


def render(root: dict[str, Any], **kwargs: Any) -> list[str]:
    table = RefTable()
    items = fold_tree(nodes_of(root), **kwargs)
    assert items is not None

    def assign(item: Item) -> str | None:
        assert item.backend_id is not None
        return table.ref_for("s", "f", "d", item.backend_id, item.role, item.name)

    return [node.line() for node in flatten(items, assign)]


def text(value: str) -> dict[str, Any]:
    return ax("StaticText", value, ax("InlineTextBox", value))


def test_wrappers_fold_text_merges_and_labels_are_not_repeated() -> None:
    page = ax(
        "RootWebArea",
        "Title",
        ax(
            "generic",
            "",
            ax("heading", "Results", text("Results"), level=2),
            ax("paragraph", "", text("Hello"), text("world")),
            ax("generic", "", ax("none", "", text("Loose"), text("words"))),
            ax(
                "LabelText",
                "",
                text("Email"),
                ax("textbox", "Email", text("ada@example.com"), value="ada@example.com"),
            ),
            ax("generic", "", ignored=True),
            ax(
                "list",
                "",
                ax(
                    "listitem",
                    "",
                    ax("ListMarker", "•"),
                    ax("link", "Docs", text("Docs"), url="https://x.test/docs/"),
                ),
            ),
        ),
    )
    assert render(page, short_url=lambda url: url.removeprefix("https://x.test")) == [
        '- heading "Results" [level=2]',
        "- paragraph: Hello world",
        "- text: Loose words",
        '- textbox "Email" [ref=e1]: ada@example.com',
        "- list",
        "  - listitem",
        '    - link "Docs" [ref=e2] -> /docs/',
    ]


def test_states_in_a_fixed_order_and_refs_for_what_can_be_acted_on() -> None:
    page = ax(
        "RootWebArea",
        "",
        ax("checkbox", "Remember me", checked="true", focused=True),
        ax("checkbox", "Some", checked="mixed"),
        ax("button", "Menu", expanded=True, disabled=True),
        ax("button", "Bold", pressed="true"),
        ax("textbox", "Name", required=True),
        ax("generic", "Editor", text("Edit me"), focusable=True, editable="richtext"),
        ax("DisclosureTriangle", "More"),
        ax("heading", "Plain", level=1),
    )
    assert render(page) == [
        '- checkbox "Remember me" [checked] [focused] [ref=e1]',
        '- checkbox "Some" [mixed] [ref=e2]',
        '- button "Menu" [disabled] [expanded] [ref=e3]',
        '- button "Bold" [pressed] [ref=e4]',
        '- textbox "Name" [required] [ref=e5]',
        '- generic "Editor" [ref=e6]',
        "  - text: Edit me",
        '- summary "More" [ref=e7]',
        '- heading "Plain" [level=1]',
    ]


def test_an_iframe_shows_the_frame_it_embeds_and_names_are_quoted() -> None:
    frame = ax("Iframe", "Child")
    inner = [Item("button", 'Say "hi"', 99, actionable=True)]
    page = ax("RootWebArea", "", frame)
    owner = frame["backendDOMNodeId"]
    lines = render(page, embedded=lambda backend: inner if backend == owner else None)
    assert lines == ['- iframe "Child"', '  - button "Say \\"hi\\"" [ref=e1]']


def test_a_subtree_and_a_depth() -> None:
    form = ax("form", "", ax("group", "", ax("button", "Deep")))
    page = nodes_of(ax("RootWebArea", "", ax("heading", "Top", level=1), form))
    table = RefTable()
    items = fold_tree(page, root_backend=form["backendDOMNodeId"])
    assert items is not None
    assert [n.line() for n in flatten(items, lambda i: "e1", max_depth=1)] == [
        "- form",
        "  - group",
    ]
    assert fold_tree(page, root_backend=-1) is None
    assert table.describe("e5") == "[ref=e5]"


def test_ref_table_keeps_a_nodes_ref_and_never_reuses_one() -> None:
    table = RefTable()
    first = table.ref_for("s", "f", "doc1", 7, "button", "OK")
    assert table.ref_for("s", "f", "doc1", 7, "button", "OK") == first
    other_document = table.ref_for("s", "f", "doc2", 7, "button", "OK")
    assert (first, other_document) == ("e1", "e2")
    assert table.describe("e1") == 'button "OK" [ref=e1]'


def test_link_urls_are_shown_as_a_page_would_write_them() -> None:
    page = "http://h.test/library/stdtypes.html?x=1#top"
    assert shorten_url("http://h.test/library/stdtypes.html?x=1#str.join", page) == "#str.join"
    assert shorten_url("http://h.test/library/functions.html#len", page) == "functions.html#len"
    assert shorten_url("http://h.test/index.html", page) == "/index.html"
    assert shorten_url("https://other.test/a", page) == "https://other.test/a"
    assert shorten_url("http://h.test/docs/", "http://h.test/form.html") == "/docs/"
    assert shorten_url("http://h.test/docs/", "about:blank") == "http://h.test/docs/"


def test_inline_formatting_reads_as_its_sentence_and_empty_lines_go() -> None:
    page = ax(
        "RootWebArea",
        "",
        ax(
            "paragraph",
            "",
            text("The"),
            ax("code", "", text("+")),
            text("operator, like"),
            ax("emphasis", "", text("x")),
            text(", adds."),
            ax("link", "more", text("more"), url="https://x.test/more"),
        ),
        ax("list", "", ax("listitem", ""), ax("listitem", "", text("|"))),
        ax(
            "navigation",
            "",
            ax("link", "index", text("index"), url="https://x.test/i"),
            text("|"),
            ax("link", "modules", text("modules"), url="https://x.test/m"),
        ),
        ax(
            "table",
            "",
            ax(
                "row",
                "",
                ax("cell", "Total", ax("paragraph", "", text("Total"))),
                ax("cell", "abs()", ax("paragraph", "", ax("link", "abs()", text("abs()")))),
            ),
        ),
    )
    assert render(page) == [
        "- paragraph",
        "  - text: The + operator, like x, adds.",
        '  - link "more" [ref=e1] -> https://x.test/more',
        "- list",
        "  - listitem: |",
        "- navigation",
        '  - link "index" [ref=e2] -> https://x.test/i',
        '  - link "modules" [ref=e3] -> https://x.test/m',
        "- table",
        "  - row",
        '    - cell "Total"',
        "    - cell",
        '      - link "abs()" [ref=e4]',
    ]
