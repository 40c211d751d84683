"""browser_snapshot and refs against real Chromium (headless shell) and the fixture pages.

Each test drives the tools through `manager.call_tool`, as a front end would; the ref checks
resolve refs with `resolve_ref` on the conversation's page, as the action tools do.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from pathlib import Path

import pytest

from browser_tool import BrowserSessionManager, CdpError, ToolError
from browser_tool.browser import _session as browser_session
from browser_tool.browser import resolve_ref
from fixtures_site import FixtureServer
from tests.support.checks import wait_group_gone
from tests.support.manager_calls import C, call, js, ok

pytestmark = pytest.mark.chrome


def ref_of(text: str, line_start: str) -> str:
    """The ref on the first line that starts (after indentation) with `line_start`."""
    for line in text.splitlines():
        if line.strip().startswith(line_start):
            found = re.search(r"\[ref=(e\d+)\]", line)
            assert found, line
            return found.group(1)
    raise AssertionError(f"no line starts with {line_start!r} in:\n{text}")


async def refused(manager: BrowserSessionManager, ref: str, element: str | None = None) -> str:
    session = await manager.get_or_create(C)
    with pytest.raises(ToolError) as caught:
        await resolve_ref(session.page, ref, element)
    return str(caught.value)


async def test_form_roles_names_values_and_states(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/snapshot_form.html"))
    text = await ok(manager, "browser_snapshot")
    lines = [re.sub(r" \[ref=e\d+\]", "", line).strip() for line in text.splitlines()]
    assert lines[:2] == [f"Page URL: {site.url}/snapshot_form.html", "Page title: Snapshot Form"]
    for expected in (
        '- link "Docs" -> /docs/',
        '- link "About" -> http://elsewhere.example/about',
        '- heading "Sign in" [level=1]',
        "- paragraph: Welcome back. Please sign in to continue.",
        '- textbox "Email" [required]: ada@example.com',
        '- textbox "Password"',
        '- checkbox "Remember me" [checked]',
        '- checkbox "Some of them" [mixed]',
        '- combobox "Plan": Pro',
        '- option "Pro" [selected]',
        '- textbox "Notes": first line',
        '- button "Sign in"',
        '- button "Unavailable" [disabled]',
        '- button "Bold" [pressed]',
        '- summary "More options"',
        '- generic "Editor"',
        '- heading "Results" [level=2]',
        "- text: Nested words",
    ):
        assert expected in lines, f"{expected!r} not in:\n{text}"
    # Everything a user acts on has a ref; headings and text have none.
    for start in ('link "Docs"', 'textbox "Email"', 'checkbox "Remember me"', 'combobox "Plan"'):
        ref_of(text, f"- {start}")
    ref_of(text, '- summary "More options"')
    ref_of(text, '- generic "Editor"')
    assert not any("[ref=" in line for line in text.splitlines() if "heading" in line)
    # A label's text is not repeated next to the field it names.
    assert "- text: Email" not in lines


async def test_refs_are_stable_and_resolve_to_their_element(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/snapshot_form.html"))
    first = await ok(manager, "browser_snapshot")
    second = await ok(manager, "browser_snapshot")
    assert first == second
    ref = ref_of(first, '- button "Sign in"')
    session = await manager.get_or_create(C)
    handle = await resolve_ref(session.page, ref)
    assert (handle.ref, handle.role, handle.name) == (ref, "button", "Sign in")
    got = await handle.session.send(
        "Runtime.callFunctionOn",
        {"objectId": handle.object_id, "functionDeclaration": "function() { return this.id; }"},
    )
    assert got["result"]["value"] == "submit"
    assert session.page.refs.describe(ref) == f'button "Sign in" [ref={ref}]'
    assert session.page.last_snapshot is not None
    assert session.page.last_snapshot.by_ref()[ref].name == "Sign in"


async def test_stale_unknown_malformed_and_navigated_refs_are_refused(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/snapshot_form.html"))
    text = await ok(manager, "browser_snapshot")
    gone = ref_of(text, '- button "Remove me"')
    kept = ref_of(text, '- button "Sign in"')
    await js(manager, "document.getElementById('gone').remove(); 1")
    message = await refused(manager, gone, "Remove me button")
    assert message == (
        f"Ref {gone} (Remove me button) is gone: the element was removed from the page; "
        "take a new snapshot (browser_snapshot) and use its refs."
    )
    assert "never issued" in await refused(manager, "e999")
    assert (
        await refused(manager, "button", "the button")
        == "Ref 'button' (the button) is not a ref: refs look like e12, from browser_snapshot."
    )
    await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
    message = await refused(manager, kept)
    assert f"it now shows {site.url}/index.html" in message
    assert "take a new snapshot" in message


async def test_same_and_cross_origin_iframes_are_inlined_with_refs(
    manager: BrowserSessionManager, site: FixtureServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Headless shell does not isolate sites by default (the cross-origin iframe stays in the
    # page's process, measured: no iframe target); --site-per-process makes it out-of-process.
    monkeypatch.setattr(browser_session, "js_heap_args", lambda megabytes: ("--site-per-process",))
    await ok(manager, "browser_navigate", url=site.url_for("/frames.html"))
    await js(
        manager,
        "new Promise(r => { const f = document.getElementById('cross');"
        " if (f.contentWindow && f.dataset.done) r(1); f.onload = () => r(1);"
        " setTimeout(() => r(0), 5000); })",
    )
    text = await ok(manager, "browser_snapshot")
    lines = [line for line in text.splitlines() if line.startswith("  - button")]
    assert len(lines) == 2, text  # one button in each iframe, nested under its iframe line
    assert '- iframe "Same origin"' in text
    assert '- iframe "Cross origin"' in text
    session = await manager.get_or_create(C)
    # The cross-origin iframe runs in its own process (site isolation), on its own session.
    assert len(session.page.workers.frames) == 1
    refs = re.findall(r'- button "Frame button" \[ref=(e\d+)\]', text)
    for ref in refs:
        handle = await resolve_ref(session.page, ref)
        got = await handle.session.send(
            "Runtime.callFunctionOn",
            {
                "objectId": handle.object_id,
                "functionDeclaration": "function() { return location.search; }",
            },
        )
        assert got["result"]["value"] in ("?same", "?cross")
    handles = [await resolve_ref(session.page, ref) for ref in refs]
    assert (
        handles[0].session is not handles[1].session or handles[0].frame_id != handles[1].frame_id
    )


async def test_open_shadow_root_content_is_present_and_refd(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/shadow.html"))
    text = await ok(manager, "browser_snapshot")
    assert "- paragraph: Shadow text" in text
    ref = ref_of(text, '- button "Shadow button"')
    session = await manager.get_or_create(C)
    assert (await resolve_ref(session.page, ref)).name == "Shadow button"


async def test_selector_ref_and_depth_limit_the_snapshot(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/snapshot_form.html"))
    whole = await ok(manager, "browser_snapshot")
    part = await ok(manager, "browser_snapshot", selector="#login")
    assert '- textbox "Email"' in part
    assert "heading" not in part
    assert ref_of(part, '- button "Sign in"') == ref_of(whole, '- button "Sign in"')
    plan = ref_of(whole, '- combobox "Plan"')
    by_ref = (await ok(manager, "browser_snapshot", ref=plan)).splitlines()[2:]
    assert [line.split(" [ref")[0] for line in by_ref] == [
        '- combobox "Plan"',
        '  - option "Free"',
        '  - option "Pro" [selected]',
    ]
    top = (await ok(manager, "browser_snapshot", depth=0)).splitlines()[2:]
    assert top == ["- banner", "- main"]
    missing = await call(manager, "browser_snapshot", selector="#nope")
    assert missing.is_error
    assert missing.output == "Selector '#nope' not found"


async def test_a_10000_element_page_is_capped_inline_and_whole_in_a_file(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/big.html"))
    text = await ok(manager, "browser_snapshot", timeout="30s")
    session = await manager.get_or_create(C)
    limit = session.page.settings.snapshot_inline_limit
    assert len(text) <= limit
    note = text.splitlines()[-1]
    found = re.fullmatch(
        r"\[([\d,]+) later lines left out here; all ([\d,]+) lines .* are in (.+)\]", note
    )
    assert found, note
    whole = Path(found.group(3)).read_text()
    assert '- button "Buy 2499"' in whole
    assert whole.startswith(text.splitlines()[0])


async def test_a_ref_from_before_a_crash_came_from_another_page(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/snapshot_form.html"))
    ref = ref_of(await ok(manager, "browser_snapshot"), '- button "Sign in"')
    session = await manager.get_or_create(C)
    crashed = session.page.crashed
    with contextlib.suppress(CdpError):  # the page may die before it answers
        await session.page.session.send("Page.crash", timeout=10)
    await crashed.wait()
    await session.page.wait_usable()  # the replacement page is attached
    message = await refused(manager, ref, "Sign in button")
    assert message == (
        f"Ref {ref} (Sign in button) came from another page (the page was replaced, e.g. after "
        "a crash); take a new snapshot (browser_snapshot) and use its refs."
    )


async def test_a_new_browser_of_the_conversation_never_reuses_an_earlier_browsers_refs(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/login.html"))
    first = await ok(manager, "browser_snapshot")
    old = re.findall(r"\[ref=(e\d+)\]", first)
    assert old, first
    [info] = manager.list_sessions()
    assert info.pid is not None
    os.killpg(info.pid, signal.SIGKILL)
    assert await wait_group_gone(info.pid, within=10.0)

    await ok(manager, "browser_navigate", url=site.url_for("/login.html"))  # a fresh browser
    second = await ok(manager, "browser_snapshot")
    new = re.findall(r"\[ref=(e\d+)\]", second)
    assert len(new) == len(old)
    assert not set(new) & set(old), (old, new)  # numbered after the earlier browser's
    out = await call(manager, "browser_click", ref=old[0])
    assert out.is_error
    assert "came from an earlier browser of this conversation" in out.output
