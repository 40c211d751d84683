"""The action tools on real Chromium and the fixture pages, through `manager.call_tool`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import trio

from browser_tool import BrowserSessionManager, open_session_manager
from fixtures_site import DOWNLOAD_BODY, FixtureServer
from tests.support.checks import make_settings
from tests.support.manager_calls import C, call, find_ref, js, ok

pytestmark = pytest.mark.chrome


async def open_page(manager: BrowserSessionManager, url: str) -> str:
    await ok(manager, "browser_navigate", url=url)
    return await ok(manager, "browser_snapshot")


async def error(manager: BrowserSessionManager, tool: str, **args: object) -> str:
    out = await call(manager, tool, **args)
    assert out.is_error, out.output
    return out.output


async def test_unknown_malformed_and_stale_refs_are_refused_and_nothing_is_clicked(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    snap = await open_page(manager, site.url_for("/inputs.html"))
    count = find_ref(snap, "button", "Count")
    assert "was never issued" in await error(manager, "browser_click", ref="e999")
    assert "is not a ref" in await error(manager, "browser_click", ref="button")
    await js(manager, "document.getElementById('counter').remove(), 1")
    gone = await error(manager, "browser_click", ref=count, element="the counter")
    assert f"Ref {count} (the counter) is gone" in gone
    snap = await open_page(manager, site.url_for("/inputs.html"))
    agree = find_ref(snap, "checkbox", "Agree")
    await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
    assert "document its frame left" in await error(manager, "browser_click", ref=agree)
    assert await js(manager, "window.clicks ?? 0") == 0


async def test_click_says_what_changed_and_covering_element_is_named(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    snap = await open_page(manager, site.url_for("/inputs.html"))
    out = await ok(manager, "browser_click", ref=find_ref(snap, "button", "Count"))
    assert await js(manager, "window.clicks") == 1
    assert 'name was "Count"' in out, out
    agree = find_ref(snap, "checkbox", "Agree")
    out = await ok(manager, "browser_click", ref=agree)
    assert f'checkbox "Agree" [ref={agree}]: [] -> [checked]' in out, out
    snap = await open_page(manager, site.url_for("/overlay.html"))
    buy = find_ref(snap, "button", "Buy now")
    covered = await error(manager, "browser_click", ref=buy, timeout="1s")
    assert "another element would receive the click" in covered
    assert 'dialog "Cookie consent" [ref=' in covered, covered
    assert await js(manager, "window.clicks") == 0
    await ok(manager, "browser_click", ref=find_ref(snap, "button", "Accept cookies"))
    await ok(manager, "browser_click", ref=buy)
    assert await js(manager, "window.clicks") == 1


async def test_disabled_button_times_out_saying_so(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    snap = await open_page(manager, site.url_for("/disabled.html"))
    out = await error(manager, "browser_click", ref=find_ref(snap, "button", "Pay"), timeout="1s")
    assert out.startswith("Timeout after 1s"), out
    assert "it is disabled" in out, out
    out = await error(
        manager, "browser_click", ref=find_ref(snap, "button", "Refund"), timeout="1s"
    )
    assert "aria-disabled" in out
    out = await error(
        manager, "browser_click", ref=find_ref(snap, "button", "Moving"), timeout="1s"
    )
    assert "it is still moving" in out, out
    assert await js(manager, "window.clicks") == 0
    await ok(manager, "browser_click", ref=find_ref(snap, "button", "Far below"))
    assert await js(manager, "window.far") is True
    assert await js(manager, "window.scrollY") > 0  # type: ignore[operator]


async def test_type_replaces_text_press_key_and_slowly(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    snap = await open_page(manager, site.url_for("/inputs.html"))
    name = find_ref(snap, "textbox", "Name")
    out = await ok(manager, "browser_type", ref=name, text="Ada")
    assert f'[ref={name}]: "old" -> "Ada"' in out, out
    assert await js(manager, "document.getElementById('name').value") == "Ada"
    await ok(manager, "browser_press_key", key="Control+a")
    assert await js(manager, "document.getElementById('keys').textContent") == "key Control+a"
    await ok(manager, "browser_press_key", key="Escape")
    assert await js(manager, "document.getElementById('keys').textContent") == "key Escape"
    snap = await open_page(manager, site.url_for("/rerender.html"))
    out = await ok(
        manager, "browser_type", ref=find_ref(snap, "textbox", "Filter"), text="ap", slowly=True
    )
    assert await js(manager, "window.keydowns") >= 2  # type: ignore[operator]
    assert await js(manager, "document.getElementById('list').children.length") == 2
    assert '"" -> "ap"' in out, out


async def test_select_radio_hover_and_double_click(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    snap = await open_page(manager, site.url_for("/select.html"))
    color = find_ref(snap, "combobox", "Color")
    out = await ok(manager, "browser_select_option", ref=color, values=["Blue"])
    assert out.startswith("Selected 'Blue'"), out
    assert await js(manager, "document.getElementById('out').textContent") == "chose b"
    await ok(manager, "browser_select_option", ref=color, values=["g"])
    assert await js(manager, "document.getElementById('color').value") == "g"
    toppings = find_ref(snap, "listbox", "Toppings")
    await ok(manager, "browser_select_option", ref=toppings, values=["Ham", "Peppers"])
    chosen = "[...document.getElementById('toppings').selectedOptions].map(o => o.value)"
    assert await js(manager, chosen) == ["h", "p"]
    assert "no option 'Purple'" in await error(
        manager, "browser_select_option", ref=color, values=["Purple"]
    )
    snap = await open_page(manager, site.url_for("/inputs.html"))
    large = find_ref(snap, "radio", "Large")
    out = await ok(manager, "browser_click", ref=large)
    assert "[] -> [checked]" in out
    await ok(manager, "browser_hover", ref=find_ref(snap, "button", "Hover me"))
    hovered = "document.getElementById('hover-target')"
    assert await js(manager, f"{hovered}.dataset.hovered") == "yes"
    assert await js(manager, f"{hovered}.matches(':hover')") is True
    await ok(manager, "browser_click", ref=find_ref(snap, "button", "Double"), double_click=True)
    assert await js(manager, "document.getElementById('dbl').textContent") == "Double clicked"


async def test_file_upload_both_ways_and_outside_roots_refused(
    state_dir: Path, headless_shell: str, tmp_path: Path, site: FixtureServer
) -> None:
    first, second = tmp_path / "report.txt", tmp_path / "photo.txt"
    first.write_text("one")
    second.write_text("two")
    settings = make_settings(state_dir, upload_roots=(tmp_path,))
    async with open_session_manager(settings) as manager:
        snap = await open_page(manager, site.url_for("/upload.html"))
        chooser = find_ref(snap, "button", "Choose file")
        outside = await error(manager, "browser_file_upload", ref=chooser, paths=["/etc/hostname"])
        assert "Refusing to upload /etc/hostname" in outside
        missing = await error(
            manager, "browser_file_upload", ref=chooser, paths=[str(tmp_path / "nope.txt")]
        )
        assert "not found" in missing
        too_long = await error(
            manager, "browser_file_upload", ref=chooser, paths=[str(tmp_path / ("x" * 300))]
        )
        assert too_long.startswith(f"Cannot read {tmp_path}/xxx"), too_long
        out = await ok(manager, "browser_file_upload", ref=chooser, paths=[str(first)])
        assert "filled the file chooser it opened with report.txt" in out, out
        assert await js(manager, "document.getElementById('out2').textContent") == "report.txt"
        file_input = find_ref(snap, "button", "Document")
        out = await ok(
            manager, "browser_file_upload", ref=file_input, paths=[str(first), str(second)]
        )
        assert "Set the files of" in out, out
        names = "document.getElementById('out').textContent"
        assert await js(manager, names) == "report.txt,photo.txt"


async def test_wait_for_and_history(manager: BrowserSessionManager, site: FixtureServer) -> None:
    snap = await open_page(manager, site.url_for("/submit_nav.html"))
    out = await ok(manager, "browser_click", ref=find_ref(snap, "link", "Home"))
    assert "Navigated to " + site.url_for("/index.html") in out
    back = await ok(manager, "browser_navigate_back")
    assert "Navigated to " + site.url_for("/submit_nav.html") in back, back
    forward = await ok(manager, "browser_navigate_forward")
    assert "Navigated to " + site.url_for("/index.html") in forward, forward
    assert "no next page" in await error(manager, "browser_navigate_forward")
    assert await ok(manager, "browser_wait_for", text="Fixture") != ""
    gone = await error(manager, "browser_wait_for", text_gone="Fixture", timeout="500ms")
    assert gone.startswith("Timeout after 500ms")
    assert await ok(manager, "browser_wait_for", time=0.05) == "Waited 0.05s."
    camel = await error(manager, "browser_wait_for", textGone="x")
    assert "did you mean 'text_gone'?" in camel


async def test_popup_from_blank_link_is_reported(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    snap = await open_page(manager, site.url_for("/blank_link.html"))
    session = await manager.get_or_create(C)
    async with session.conn.listen("Target.targetCreated", session_id=None) as created:
        out = await ok(manager, "browser_click", ref=find_ref(snap, "link", "Open in a new tab"))
        with trio.fail_after(10):
            while (await created.receive()).params["targetInfo"]["type"] != "page":
                pass
    # Issue 20: the tab is announced by the click's result, or by the next call's if Chrome
    # announced it a moment after the click settled; the current tab stays where it was.
    out += await ok(manager, "browser_snapshot")
    assert "The page opened a new tab: tab 1" in out, out
    assert '- link "Open in a new tab"' in out


async def test_iframe_and_shadow_root_elements_take_clicks_and_typing(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    snap = await open_page(manager, site.url_for("/frames.html"))
    buttons = re.findall(r'- button "Frame button"[^\n]*\[ref=(e\d+)\]', snap)
    texts = re.findall(r'- textbox "Frame text"[^\n]*\[ref=(e\d+)\]', snap)
    assert len(buttons) == len(texts) == 2, snap  # the same-origin frame, then the other
    for button, text in zip(buttons, texts, strict=True):
        out = await ok(manager, "browser_type", ref=text, text="typed here")
        assert f'[ref={text}]: "in frame" -> "typed here"' in out, out
        await ok(manager, "browser_click", ref=button)
        after = await ok(manager, "browser_snapshot")
        assert re.search(rf'button "Frame button" \[focused\] \[ref={button}\]', after), after
    snap = await open_page(manager, site.url_for("/shadow.html"))
    await ok(manager, "browser_click", ref=find_ref(snap, "button", "Shadow button"))
    active = "document.getElementById('card').shadowRoot.activeElement?.textContent"
    assert await js(manager, active) == "Shadow button"


async def test_submit_navigates_and_a_dialog_is_reported(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    snap = await open_page(manager, site.url_for("/submit_nav.html"))
    out = await ok(
        manager, "browser_type", ref=find_ref(snap, "textbox", "Email"), text="ada", submit=True
    )
    assert out.startswith("Typed 'ada' into textbox \"Email\""), out
    assert "and pressed Enter." in out
    assert "Navigated to " + site.url_for("/welcome.html?email=ada") in out, out
    snap = await open_page(manager, site.url_for("/inputs.html"))
    out = await ok(manager, "browser_click", ref=find_ref(snap, "button", "Ask"))
    assert "A JavaScript confirm dialog appeared ('Delete it?') and was dismissed." in out, out
    assert await js(manager, "window.answer") is False
    out = await ok(manager, "browser_click", ref=find_ref(snap, "button", "Oops"))
    assert "Console error: boom on click" in out, out
    out = await ok(manager, "browser_hover", ref=find_ref(snap, "textbox", "Notes"))
    assert out.endswith("No visible change on the page."), out


async def test_iframe_elements_on_each_chrome_binary(
    state_dir: Path, chrome_path: str, site: FixtureServer
) -> None:
    # Full Chromium isolates sites: its cross-origin iframe is an out-of-process one, whose
    # coordinates are moved into the page's viewport (headless shell keeps it in-process).
    async with open_session_manager(make_settings(state_dir, chrome_path=chrome_path)) as manager:
        snap = await open_page(manager, site.url_for("/frames.html"))
        buttons = re.findall(r'- button "Frame button"[^\n]*\[ref=(e\d+)\]', snap)
        texts = re.findall(r'- textbox "Frame text"[^\n]*\[ref=(e\d+)\]', snap)
        assert len(buttons) == len(texts) == 2, snap
        out = await ok(manager, "browser_type", ref=texts[1], text="typed here")
        assert f'[ref={texts[1]}]: "in frame" -> "typed here"' in out, out
        await ok(manager, "browser_click", ref=buttons[1])
        after = await ok(manager, "browser_snapshot")
        assert re.search(rf'button "Frame button" \[focused\] \[ref={buttons[1]}\]', after), after


async def test_click_on_a_download_link_says_where_the_file_was_saved(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    snap = await open_page(manager, site.url_for("/download.html"))
    out = await ok(manager, "browser_click", ref=find_ref(snap, "link", "Download report.txt"))
    assert "Downloaded 'report.txt' (" in out, out
    assert "Navigated" not in out, out
    saved = Path(out.rsplit("saved as ", 1)[1].strip())
    assert saved.name == "report.txt"
    assert saved.read_bytes() == DOWNLOAD_BODY
