"""Storage state on real Chrome (issue 21, part 3): read from one conversation, loaded into
another before its first call (kept in its dir, loaded at launch) and between calls (loaded
at once), in both isolation modes; the shape is Playwright's `storage_state`."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from browser_tool import BrowserSessionManager, ConflictError, InvalidInputError
from browser_tool import open_session_manager as open_manager
from fixtures_site import FixtureServer
from tests.support.checks import make_settings

pytestmark = pytest.mark.chrome


async def evaluate(manager: BrowserSessionManager, cid: str, expression: str) -> object:
    out = await manager.call_tool(cid, "browser_eval", {"expression": expression})
    assert not out.is_error, out.output
    return json.loads(out.output.removeprefix("<javascript_result>").split("</")[0])


async def visit(manager: BrowserSessionManager, cid: str, url: str) -> None:
    out = await manager.call_tool(cid, "browser_navigate", {"url": url})
    assert not out.is_error, out.output


def cookie_names(state: dict[str, Any]) -> set[tuple[str, str]]:
    return {(c["name"], c["value"]) for c in state["cookies"]}


def storage_of(state: dict[str, Any], origin: str) -> dict[str, str]:
    [entry] = [o for o in state["origins"] if o["origin"] == origin]
    return {item["name"]: item["value"] for item in entry["localStorage"]}


@pytest.mark.parametrize("isolation", ["process", "context"])
async def test_storage_state_round_trips_between_conversations(
    state_dir: Path, headless_shell: str, site: FixtureServer, isolation: str
) -> None:
    origin = site.url.rstrip("/")
    async with open_manager(make_settings(state_dir, isolation=isolation)) as manager:
        with pytest.raises(ConflictError, match="no running browser") as caught:
            await manager.storage_state("a")
        assert caught.value.code == "no_browser"
        await visit(manager, "a", site.url_for("storage.html?v=round"))
        await visit(manager, "a", site.url_for("signin.html?user=dee"))
        await visit(manager, "a", "about:blank")  # the origins are found in the history
        state = await manager.storage_state("a")
        assert {("fixture_cookie", "round"), ("signed_in", "dee")} <= cookie_names(state)
        [signed_in] = [c for c in state["cookies"] if c["name"] == "signed_in"]
        assert signed_in["expires"] > 0
        assert (signed_in["domain"], signed_in["path"], signed_in["sameSite"]) == (
            "127.0.0.1",
            "/",
            "Lax",
        )
        assert storage_of(state, origin) == {"fixture_key": "round", "user": "dee"}

        # Before its first call: kept (0600) and loaded when its browser starts.
        assert await manager.load_storage_state("b", state) == "pending"
        [kept] = list((state_dir / "sessions").glob("b-*/storage-state.json"))
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
        assert await manager.storage_state("b") == state  # read back while it waits
        await visit(manager, "b", site.url_for("signin.html"))
        assert await evaluate(manager, "b", "document.title") == "Signed in as dee"
        assert await evaluate(manager, "b", "localStorage.fixture_key") == "round"
        assert not kept.exists()

        # Between calls: loaded at once into the running browser.
        await visit(manager, "c", "about:blank")
        assert await manager.load_storage_state("c", state) == "applied"
        await visit(manager, "c", site.url_for("signin.html"))
        assert await evaluate(manager, "c", "document.title") == "Signed in as dee"

        # What b holds now reads back as what was loaded (b never visited storage.html).
        again = await manager.storage_state("b")
        assert cookie_names(again) == cookie_names(state)
        assert storage_of(again, origin) == storage_of(state, origin)
        # Another conversation is untouched.
        await visit(manager, "d", site.url_for("signin.html"))
        assert await evaluate(manager, "d", "document.title") == "Signed out"
        for cid in "abcd":
            await manager.kill_session(cid)


async def test_a_playwright_state_with_https_origins_loads_without_network(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    state = {
        "cookies": [
            {
                "name": "sid",
                "value": "x1",
                "domain": ".example.com",
                "path": "/",
                "expires": -1,
                "httpOnly": True,
                "secure": True,
                "sameSite": "None",
            }
        ],
        "origins": [
            {"origin": "https://app.example.com", "localStorage": [{"name": "t", "value": "v"}]}
        ],
    }
    await visit(manager, "p", "about:blank")
    assert await manager.load_storage_state("p", state) == "applied"
    back = await manager.storage_state("p")
    assert back["cookies"] == state["cookies"]
    assert back["origins"] == state["origins"]
    await manager.kill_session("p")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([], "storage_state"),
        ({"cookies": {}}, "cookies"),
        ({"cookies": [{"name": "a", "value": "b"}]}, "cookies[0].domain"),
        ({"cookies": [{"name": "a", "value": "b", "domain": "x", "expires": "soon"}]}, "expires"),
        ({"cookies": [{"name": "a", "value": "b", "domain": "x", "sameSite": "lax"}]}, "sameSite"),
        ({"cookies": [{"name": 1, "value": "b", "domain": "x"}]}, "cookies[0].name"),
        # Chrome refuses these (a control character, ';', '=' in a name, neither name nor
        # value): refused here too, before a launch that would fail the next call with them.
        ({"cookies": [{"name": "a\tb", "value": "v", "domain": "x"}]}, "cookies[0].name"),
        ({"cookies": [{"name": "a=b", "value": "v", "domain": "x"}]}, "cookies[0].name"),
        ({"cookies": [{"name": "a", "value": "v;w", "domain": "x"}]}, "cookies[0].value"),
        ({"cookies": [{"name": "a", "value": "v\x7f", "domain": "x"}]}, "cookies[0].value"),
        ({"cookies": [{"name": "", "value": "", "domain": "x"}]}, "cookies[0].name"),
        ({"origins": [{"origin": "file:///etc"}]}, "origins[0].origin"),
        ({"origins": [{"origin": "https://a.test/path"}]}, "origins[0].origin"),
        ({"origins": [{"origin": "https://a.test", "localStorage": [{"name": "k"}]}]}, "value"),
    ],
)
async def test_bad_storage_states_are_refused_naming_the_field(
    manager: BrowserSessionManager, state_dir: Path, body: object, field: str
) -> None:
    with pytest.raises(InvalidInputError, match=field.replace("[", r"\[").replace("]", r"\]")):
        await manager.load_storage_state("q", body)
    assert not list((state_dir / "sessions").glob("q-*"))


async def test_states_loaded_before_the_launch_add_up_as_loads_into_a_browser_do(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    origin = site.url.rstrip("/")

    def state(cookie: str, key: str) -> dict[str, Any]:
        return {
            "cookies": [{"name": cookie, "value": "1", "domain": "127.0.0.1", "path": "/"}],
            "origins": [{"origin": origin, "localStorage": [{"name": key, "value": "1"}]}],
        }

    assert await manager.load_storage_state("m", state("first", "k1")) == "pending"
    assert await manager.load_storage_state("m", state("second", "k2")) == "pending"
    await visit(manager, "m", site.url_for("index.html"))
    assert await evaluate(manager, "m", "document.cookie") == "first=1; second=1"
    assert await evaluate(manager, "m", "[localStorage.k1, localStorage.k2]") == ["1", "1"]
    await manager.kill_session("m")


async def test_a_cookie_chrome_refuses_leaves_a_kept_state_and_the_next_call_alone(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    good = {"cookies": [{"name": "good", "value": "1", "domain": "127.0.0.1", "path": "/"}]}
    assert await manager.load_storage_state("n", good) == "pending"
    bad = {"cookies": [{"name": "bad\u0000", "value": "1", "domain": "127.0.0.1"}]}
    with pytest.raises(InvalidInputError, match=r"cookies\[0\]\.name"):
        await manager.load_storage_state("n", bad)
    await visit(manager, "n", site.url_for("index.html"))
    assert await evaluate(manager, "n", "document.cookie") == "good=1"
    await manager.kill_session("n")
