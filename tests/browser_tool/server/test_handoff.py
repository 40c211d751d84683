"""Hand-over to a person (issue 21) through a real `browser-tool serve` and real Chromium.

Charter: loopback only, port 0, pages from the local fixture site. The person is a headless
Chrome of the test's own (an in-process manager's browser, driven with trusted CDP `Input`
events, as a person's would be). Readiness comes from signals, never sleeps: the service's
`listening on` line, the page's own frame counter and address bar (awaited inside the viewer's
page), and the results of calls that wait for the hand-over. The token never appears in the
service's log: the test reads all of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from browser_tool import BrowserSession, open_session_manager
from browser_tool.cdp import CdpSession
from fixtures_site import FixtureServer
from tests.support.checks import make_settings
from tests.support.http_calls import call, sessions
from tests.support.service import Service, running_service

pytestmark = pytest.mark.chrome

C = "conv-1"
ADDRESS = "document.getElementById('address').value"
STATUS = "document.getElementById('status').textContent"
ENDED = "document.body.classList.contains('ended')"


async def hand_over(client: httpx.AsyncClient, conversation: str, **body: Any) -> str:
    response = await client.post(f"/v1/conversations/{conversation}/handoff", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["conversation_id"] == conversation
    url = str(answer["url"])
    assert url.startswith(client.base_url.join(f"/v1/conversations/{conversation}/live#").__str__())
    return url


def token_of(url: str) -> str:
    token = url.split("#", 1)[1]
    assert len(token) >= 22  # >= 128 bits in URL-safe base64
    return token


async def claim(client: httpx.AsyncClient, conversation: str, token: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=client.base_url) as anonymous:  # no bearer token
        return await anonymous.post(
            f"/v1/conversations/{conversation}/live/claim", json={"token": token}
        )


def assert_token_not_logged(service: Service, token: str) -> None:
    assert service.log, "the service logged nothing at all: the check would prove nothing"
    assert not [line for line in service.log if token in line]


@asynccontextmanager
async def viewer(state_dir: Path) -> AsyncIterator[BrowserSession]:
    """The person's own headless Chrome (an in-process manager of the test's)."""
    async with open_session_manager(make_settings(state_dir)) as manager:
        yield await manager.get_or_create("person")


async def load(session: CdpSession, url: str) -> None:
    """Navigate and return once the page's load event fired."""
    async with session.listen("Page.loadEventFired") as loaded:
        await session.send("Page.navigate", {"url": url})
        with trio.fail_after(30):
            await loaded.receive()


async def evaluate(session: CdpSession, expression: str) -> Any:
    answer = await session.send(
        "Runtime.evaluate",
        {"expression": expression, "awaitPromise": True, "returnByValue": True},
        timeout=30,
    )
    assert "exceptionDetails" not in answer, answer
    return answer["result"].get("value")


def until(condition: str, value: str = "true") -> str:
    """A page expression that resolves with `value` once `condition` holds (checked every
    animation frame: the page's own readiness, no sleep in the test)."""
    return (
        "new Promise(resolve => { const check = () => ("
        + condition
        + ") ? resolve("
        + value
        + ") : requestAnimationFrame(check); check(); })"
    )


async def click(session: CdpSession, x: float, y: float) -> None:
    for kind in ("mousePressed", "mouseReleased"):
        await session.send(
            "Input.dispatchMouseEvent",
            {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
        )


async def type_keys(session: CdpSession, text: str) -> None:
    """A person typing: a key down with its text and a key up, per character."""
    for char in text:
        await session.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": char, "text": char})
        await session.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char})


async def press_enter(session: CdpSession) -> None:
    enter = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
    await session.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": "\r", **enter})
    await session.send("Input.dispatchKeyEvent", {"type": "keyUp", **enter})


async def center_in_conversation(client: httpx.AsyncClient, selector: str) -> tuple[float, float]:
    """The center of the element `selector` matches in the conversation's page (viewport px)."""
    expression = (
        f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
        ".getBoundingClientRect(); return `at ${r.x + r.width / 2} ${r.y + r.height / 2}`; })()"
    )
    result = await call(client, C, "browser_eval", expression=expression)
    assert not result["is_error"], result
    found = re.search(r"at (-?[\d.]+) (-?[\d.]+)", result["output"])
    assert found is not None, result
    return float(found[1]), float(found[2])


async def sign_in(
    page: CdpSession, email: tuple[float, float], password: tuple[float, float]
) -> None:
    """As a person in the live view: click the fields in the picture, type, paste, Enter."""
    # Where the picture is in the person's page, and its scale: the frame's width
    # is the conversation's viewport (1280 CSS pixels by default).
    left, top, scale = await evaluate(
        page,
        "(() => { const r = document.getElementById('screen').getBoundingClientRect();"
        " return [r.left, r.top, r.width / 1280]; })()",
    )

    def at(point: tuple[float, float]) -> tuple[float, float]:
        return left + point[0] * scale, top + point[1] * scale

    await click(page, *at(email))
    await type_keys(page, "ada@example.com")
    await click(page, *at(password))
    # A paste: the page forwards the clipboard's text as typed text.
    await evaluate(
        page,
        "(() => { const data = new DataTransfer(); data.setData('text', 's3cret');"
        " document.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data,"
        " bubbles: true})); })()",
    )
    await press_enter(page)
    # The conversation's tab went to the signed-in page: the address bar says so.
    await evaluate(page, until(ADDRESS + ".includes('welcome.html')"))


async def test_a_person_signs_in_through_the_live_view(
    state_dir: Path, site: FixtureServer, headless_shell: str
) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        nav = await call(client, C, "browser_navigate", url=site.url_for("login.html"))
        assert not nav["is_error"], nav
        email = await center_in_conversation(client, "input[name=email]")
        password = await center_in_conversation(client, "input[name=password]")

        url = await hand_over(client, C, reason="Sign in for me", ttl="5m")
        token = token_of(url)
        row = (await sessions(client))[C]
        assert row["handoff"]["state"] == "offered"
        assert row["handoff"]["reason"] == "Sign in for me"
        assert "offered" in (await client.get("/metrics")).text

        async with trio.open_nursery() as nursery:
            waited: dict[str, Any] = {}

            async def call_during_hand_over() -> None:
                waited.update(
                    await call(
                        client, C, "browser_eval", expression="document.title", timeout="120s"
                    )
                )

            nursery.start_soon(call_during_hand_over)

            async with viewer(state_dir) as person:
                page = person.page.session
                await load(page, url)
                # The first frame of the conversation's tab arrived and is shown.
                await evaluate(page, until("document.getElementById('screen').dataset.seq"))
                assert await evaluate(page, "location.hash") == ""  # the token left the bar
                assert "login.html" in await evaluate(page, ADDRESS)
                assert (await sessions(client))[C]["handoff"]["state"] == "held"
                await sign_in(page, email, password)
                await evaluate(page, "document.getElementById('done').click()")
                status = await evaluate(page, until(ENDED, STATUS))
                assert "handed back" in status

                # The link is spent: loading it again is refused, in the page and by the API.
                await load(page, "about:blank")  # else only the fragment would change
                await load(page, url)
                again = await evaluate(page, until(ENDED, STATUS))
                assert "not valid" in again

        # The call made during the hand-over waited for Done and sees the signed-in page.
        assert not waited["is_error"], waited
        assert "Welcome" in waited["output"]
        assert "a person used the browser for" in waited["output"]
        assert "Sign in for me" in waited["output"]
        assert "pressed Done" in waited["output"]
        assert "welcome.html?email=ada%40example.com&password=s3cret" in waited["output"]
        hello = await call(
            client, C, "browser_eval", expression="document.getElementById('hello').textContent"
        )
        assert "Welcome, ada@example.com" in hello["output"]
        assert "a person used" not in hello["output"]  # the note is said once

        assert (await claim(client, C, token)).status_code == 403
        assert (await sessions(client))[C]["handoff"] is None
        metrics = (await client.get("/metrics")).text
        assert 'browser_tool_human_handoffs_total{event="done"} 1' in metrics
        assert_token_not_logged(service, token)
