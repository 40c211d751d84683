"""The three snapshot takers of `bench.snapshot_compare` behind one shape (navigate, snapshot,
close), the page count of interactive elements, the ref counting of a snapshot's text, and a
loopback static server for Debian's Python HTML docs.

- `api`: ours through the Python API (`BrowserSessionManager.call_tool`).
- `mcp`: ours through our MCP stdio door (`browser-tool mcp`, one process = one conversation).
- `peer`: Playwright MCP (`@playwright/mcp`, installed by `make bench` into bench/.node), over
  stdio, driving our Chromium binary (`--executable-path`, `--headless`, `--isolated`,
  `--no-sandbox`: the machine runs as root); it never downloads a browser.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Protocol

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from browser_tool import BrowserSessionManager

BENCH = Path(__file__).resolve().parent
PEER_BIN = BENCH / ".node" / "node_modules" / ".bin" / "playwright-mcp"
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")

# The page's interactive elements, counted by one expression (documented in README's
# "Performance"): visible (a box, not display:none/visibility:hidden) elements matching
# INTERACTIVE_SELECTOR, and the options of a shown select (what browser_select_option picks),
# in the document, every open shadow root and every same-origin iframe's document. A
# cross-origin iframe's document is out of a page script's reach: the expression returns its
# URL, and `ApiTaker.interactive_count` counts that document loaded on its own (one level).
INTERACTIVE_SELECTOR = ", ".join(
    [
        "a[href]",
        "button",
        "input:not([type=hidden])",
        "select",
        "textarea",
        "summary",
        "[contenteditable]:not([contenteditable=false])",
        *(
            f"[role={role}]"
            for role in [
                "button",
                "link",
                "checkbox",
                "radio",
                "switch",
                "tab",
                "menuitem",
                "menuitemcheckbox",
                "menuitemradio",
                "option",
                "combobox",
                "textbox",
                "searchbox",
                "slider",
                "spinbutton",
                "treeitem",
            ]
        ),
    ]
)
INTERACTIVE_SELECTOR_JS = repr(INTERACTIVE_SELECTOR)
COUNT_INTERACTIVE = (
    "(() => { const sel = %r; const seen = new Set(); const far = [];"
    " const shown = e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);"
    " return (r.width > 0 || r.height > 0) && s.visibility !== 'hidden'"
    " && s.display !== 'none'; };"
    " const walk = root => { for (const e of root.querySelectorAll('*')) {"
    " if (e.shadowRoot) walk(e.shadowRoot);"
    " if (e.tagName === 'IFRAME' && shown(e)) { let d = null; try { d = e.contentDocument; }"
    " catch (err) {} if (d) walk(d); else if (e.src) far.push(e.src); }"
    " if (e.matches(sel) && shown(e)) seen.add(e);"
    " if (e.tagName === 'OPTION' && e.closest('select') && shown(e.closest('select')))"
    " seen.add(e); } };"
    " walk(document); return [seen.size, ...far].join(' '); })()"
).replace("%r", INTERACTIVE_SELECTOR_JS)

# Roles a user acts on, as either snapshot names them (Chrome's accessibility roles and the
# ARIA roles Playwright computes; the DPUB link roles, e.g. a footnote's doc-noteref, are
# links); compared lower-cased.
INTERACTIVE_ROLES = frozenset(
    [
        "button",
        "link",
        "textbox",
        "searchbox",
        "checkbox",
        "radio",
        "combobox",
        "listbox",
        "option",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "treeitem",
        "disclosuretriangle",
        "summary",
        "colorwell",
        "date",
        "datetime",
        "inputtime",
        "time",
        "doc-noteref",
        "doc-backlink",
        "doc-biblioref",
        "doc-glossref",
    ]
)
_REF_LINE = re.compile(r"^\s*-\s+([A-Za-z-]+)\b.*\[ref=[^\]]+\]")
_PATH = re.compile(r"(/[^\s\])]+)")
_PEER_FILE = re.compile(r"\]\(([^)]+\.ya?ml)\)")


def interactive_refs(text: str) -> int:
    """The snapshot's lines that carry a ref and whose role is interactive."""
    return sum(
        1
        for line in text.splitlines()
        if (m := _REF_LINE.match(line)) and m.group(1).lower() in INTERACTIVE_ROLES
    )


def whole_text(inline: str) -> str:
    """The whole snapshot: the file an inline part names (ours: the spilled output; the
    peer: a linked .yml), else the inline text itself."""
    for match in [*_PEER_FILE.finditer(inline), *_PATH.finditer(inline)]:
        path = Path(match.group(1))
        if path.is_file():
            return path.read_text(errors="replace")
    return inline


class Taker(Protocol):
    async def navigate(self, url: str) -> None: ...
    async def snapshot(self) -> str: ...


class ApiTaker:
    def __init__(self, manager: BrowserSessionManager, conversation: str = "bench-snap") -> None:
        self.manager, self.conversation = manager, conversation

    async def call(self, name: str, args: dict[str, Any]) -> str:
        out = await self.manager.call_tool(self.conversation, name, args)
        if out.is_error:
            raise RuntimeError(f"{name}: {out.output}")
        return out.output

    async def navigate(self, url: str) -> None:
        await self.call("browser_navigate", {"url": url})

    async def snapshot(self) -> str:
        return await self.call("browser_snapshot", {})

    async def _count_here(self) -> tuple[int, list[str]]:
        text = await self.call("browser_eval", {"expression": COUNT_INTERACTIVE})
        count, *far = json.loads(text.split(">", 1)[1].rsplit("</", 1)[0]).split()
        return int(count), far

    async def interactive_count(self, url: str) -> int:
        """The interactive elements of the page at `url` and of its cross-origin iframes'
        documents (each loaded on its own). Leaves this taker on another page."""
        await self.navigate(url)
        total, far = await self._count_here()
        for frame_url in far:
            await self.navigate(frame_url)
            total += (await self._count_here())[0]
        return total


class McpTaker:
    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, name: str, args: dict[str, Any]) -> str:
        out = await self.session.call_tool(name, args)
        text = "\n".join(c.text for c in out.content if c.type == "text")
        if out.is_error:
            raise RuntimeError(f"{name}: {text[:500]}")
        return text

    async def navigate(self, url: str) -> None:
        await self.call("browser_navigate", {"url": url})

    async def snapshot(self) -> str:
        return await self.call("browser_snapshot", {})


@asynccontextmanager
async def mcp_taker(params: StdioServerParameters) -> AsyncIterator[McpTaker]:
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield McpTaker(session)


def ours_mcp_params(venv_bin: Path, state_dir: Path, chrome: str) -> StdioServerParameters:
    env = {"BROWSER_TOOL_STATE_DIR": str(state_dir), "BROWSER_TOOL_CHROME": chrome}
    return StdioServerParameters(
        command=str(venv_bin / "browser-tool"),
        args=["mcp", "--conversation-id", "bench-snap-mcp"],
        env={**env, "PATH": "/usr/bin:/bin"},
    )


def peer_params(chrome: str, output_dir: Path) -> StdioServerParameters:
    args = ["--headless", "--isolated", "--no-sandbox", "--executable-path", chrome]
    args += ["--output-dir", str(output_dir)]
    return StdioServerParameters(
        command=str(PEER_BIN),
        args=args,
        env={"PATH": "/usr/bin:/bin", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
    )


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving_directory(root: Path) -> Iterator[str]:
    """A loopback static server for `root` on a free port; yields its base URL."""
    handler = functools.partial(_Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, name="bench-docs", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
