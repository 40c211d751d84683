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
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from browser_tool import BrowserSession, BrowserSessionManager, HandoffError, open_session_manager
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


async def select_all_shortcut(session: CdpSession) -> None:
    """Cmd+A, as on a Mac: the conversation's Chrome (Linux) maps no key of Meta to an editing
    command, so this works only because the page sends the command with the key."""
    key = {"key": "a", "code": "KeyA", "windowsVirtualKeyCode": 65, "modifiers": 4}
    await session.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **key})
    await session.send("Input.dispatchKeyEvent", {"type": "keyUp", **key})


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
    await type_keys(page, "typo")
    await select_all_shortcut(page)  # Cmd+A in the person's browser selects the field's text
    await type_keys(page, "ada@example.com")  # ... which the typing replaces
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


async def use_the_live_view(anonymous: httpx.AsyncClient, token: str) -> str:
    """Claim conversation C's hand-over with `token` and check what the page's secret opens
    (and what it does not); the secret."""
    live = f"/v1/conversations/{C}/live"
    claimed = await anonymous.post(f"{live}/claim", json={"token": token})
    assert claimed.status_code == 200, claimed.text
    cookie = claimed.headers["set-cookie"]
    assert f"Path={live};" in cookie
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert claimed.json()["reason"] == "Solve the CAPTCHA"
    # The cookie works for this conversation's live view, and not for another's.
    state = await anonymous.get(f"{live}/state")
    assert state.status_code == 200, state.text
    assert "index.html" in state.json()["url"]
    frame = await anonymous.get(f"{live}/frame", params={"after": 0})
    assert frame.status_code == 200, frame.text
    assert frame.headers["content-type"] == "image/jpeg"
    assert frame.content.startswith(b"\xff\xd8")
    assert int(frame.headers["x-frame-seq"]) >= 1
    secret = anonymous.cookies.get("bt_live")
    assert secret
    elsewhere = await anonymous.get(
        "/v1/conversations/conv-2/live/state", headers={"cookie": f"bt_live={secret}"}
    )
    assert elsewhere.status_code == 403
    # Spent: the same token again is refused.
    assert (await anonymous.post(f"{live}/claim", json={"token": token})).status_code == 403
    bad = await anonymous.post(f"{live}/input", json={"events": [{"type": "nope"}]})
    assert bad.status_code == 400
    assert "events[0].type" in bad.json()["error"]["message"]

    return str(secret)


async def test_links_are_refused_unless_the_open_one_of_their_conversation(
    state_dir: Path, site: FixtureServer
) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        for conversation in (C, "conv-2"):
            nav = await call(
                client, conversation, "browser_navigate", url=site.url_for("index.html")
            )
            assert not nav["is_error"], nav
        url = await hand_over(client, C, reason="Solve the CAPTCHA")
        token = token_of(url)
        other = token_of(await hand_over(client, "conv-2", reason="other"))

        # A second hand-over of a held conversation is refused; the first stays open.
        busy = await client.post(f"/v1/conversations/{C}/handoff", json={})
        assert busy.status_code == 409, busy.text
        assert "Solve the CAPTCHA" in busy.json()["error"]["message"]

        refused = [
            await claim(client, C, "A" * 43),  # a wrong token
            await claim(client, C, other),  # another conversation's token
            await claim(client, "conv-3", token),  # this token at another conversation
            await claim(client, C, ""),
        ]
        assert [response.status_code for response in refused] == [403] * 4
        messages = {response.json()["error"]["message"] for response in refused[:3]}
        assert len(messages) == 1  # the same answer for every cause: a guesser learns nothing

        async with httpx.AsyncClient(base_url=service.url) as anonymous:
            live = f"/v1/conversations/{C}/live"
            page = await anonymous.get(live)  # the page itself holds no secret
            assert page.status_code == 200
            assert page.headers["content-type"].startswith("text/html")
            assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
            # Without the page's secret: nothing.
            for response in (
                await anonymous.get(f"{live}/frame"),
                await anonymous.get(f"{live}/state"),
                await anonymous.post(f"{live}/input", json={"events": []}),
                await anonymous.post(f"{live}/done"),
            ):
                assert response.status_code == 403, response.text
            # Opening a hand-over needs the bearer token when the service has one: see
            # test_a_token_guards_opening_but_not_using; here the token is not set.

            secret = await use_the_live_view(anonymous, token)

            # A call whose timeout ends while the person holds the browser fails with why.
            waited = await call(client, C, "browser_eval", expression="1", timeout="300ms")
            assert waited["is_error"]
            assert "A person is using this conversation's browser" in waited["output"]
            assert "Solve the CAPTCHA" in waited["output"]

            # Deleting the conversation ends its hand-over: the page hears so.
            assert (await client.delete(f"/v1/conversations/{C}")).status_code == 200
            gone = await anonymous.get(f"{live}/frame", params={"after": 10**9})
            assert gone.status_code in (403, 410), gone.text

        assert_token_not_logged(service, token)
        assert_token_not_logged(service, other)
        assert_token_not_logged(service, secret)


async def test_an_expired_link_is_refused_and_the_waiting_call_goes_on(
    state_dir: Path, site: FixtureServer
) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        nav = await call(client, C, "browser_navigate", url=site.url_for("index.html"))
        assert not nav["is_error"], nav
        token = token_of(await hand_over(client, C, reason="Accept the cookies", ttl="1s"))
        assert (await sessions(client))[C]["handoff"]["expires_in_s"] <= 1.0
        # This call waits for the hand-over, which nobody opens: it ends when its time runs
        # out (the readiness signal of this test), and the call then runs.
        waited = await call(client, C, "browser_eval", expression="document.title", timeout="60s")
        assert not waited["is_error"], waited
        assert "nobody opened the link" in waited["output"]
        assert "its time (ttl) ran out" in waited["output"]
        assert "index.html" in waited["output"]
        assert (await claim(client, C, token)).status_code == 403
        assert (await sessions(client))[C]["handoff"] is None
        metrics = (await client.get("/metrics")).text
        assert 'browser_tool_human_handoffs_total{event="expired"} 1' in metrics
        assert 'browser_tool_human_handoffs{state="offered"} 0' in metrics
        assert_token_not_logged(service, token)


async def test_the_model_asks_for_a_person(state_dir: Path, site: FixtureServer) -> None:
    env = {"BROWSER_TOOL_PUBLIC_URL": "https://browser.example.com/tools/"}
    async with running_service(state_dir, env=env) as service, service.client() as client:
        asked = await call(client, C, "browser_request_human", reason="Enter the 2FA code")
        assert not asked["is_error"], asked
        found = re.search(
            r"https://browser\.example\.com/tools/v1/conversations/conv-1/live#(\S+)",
            asked["output"],
        )
        assert found is not None, asked
        token = found[1]
        row = (await sessions(client))[C]
        assert row["handoff"]["reason"] == "Enter the 2FA code"
        # The model cannot ask twice while the first is open: told at once, not after its
        # whole timeout (the person it waited for would be the one it asks for).
        started = time.monotonic()
        again = await call(client, C, "browser_request_human", reason="again", timeout="60s")
        assert time.monotonic() - started < 30, "the second request waited for the person"
        assert again["is_error"]
        assert "already asked" in again["output"]
        assert "Enter the 2FA code" in again["output"]
        assert "#" not in again["output"]  # the link is not shown a second time
        # The cookie's Path carries the public URL's own path.
        claimed = await claim(client, C, token)
        assert claimed.status_code == 200
        assert "Path=/tools/v1/conversations/conv-1/live;" in claimed.headers["set-cookie"]
        assert "Secure" in claimed.headers["set-cookie"]
        assert_token_not_logged(service, token)


async def test_a_token_guards_opening_but_not_using(state_dir: Path) -> None:
    env = {"BROWSER_TOOL_TOKEN": "t0ken"}
    async with (
        running_service(state_dir, env=env) as service,
        service.client() as anonymous,
        service.client("t0ken") as client,
    ):
        denied = await anonymous.post(f"/v1/conversations/{C}/handoff", json={})
        assert denied.status_code == 401
        for bad in ({"ttl": "2h"}, {"ttl": 0}, {"ttl": True}, {"reason": 5}, {"ttl": "x"}):
            response = await client.post(f"/v1/conversations/{C}/handoff", json=bad)
            assert response.status_code == 400, (bad, response.text)
        assert (await anonymous.get(f"/v1/conversations/{C}/live")).status_code == 200
        assert (await anonymous.get("/v1/conversations/bad id/live")).status_code == 400
        # A hand-over launches the conversation's browser when it has none.
        token = token_of(await hand_over(client, C, reason="r", ttl=30))
        assert (await sessions(client))[C]["pid"]
        claimed = await anonymous.post(f"/v1/conversations/{C}/live/claim", json={"token": token})
        assert claimed.status_code == 200
        done = await anonymous.post(f"/v1/conversations/{C}/live/done")
        assert done.status_code == 200, done.text
        assert "Max-Age=0" in done.headers["set-cookie"]
        after = await call(client, C, "browser_eval", expression="1")
        assert "pressed Done" in after["output"]


@pytest.mark.chrome
async def test_without_a_service_the_model_is_told_why(manager: BrowserSessionManager) -> None:
    # In-process (and the one-shot `call`, and MCP over stdio): no HTTP serves the live view.
    asked = await manager.call_tool(C, "browser_request_human", {"reason": "Sign in"})
    assert asked.is_error
    assert "browser-tool serve" in asked.output
    assert manager.list_sessions()[0].handoff is None
    with pytest.raises(HandoffError) as caught:
        await manager.hand_over(C, "Sign in")
    assert caught.value.kind == "unserved"


async def test_reset_and_shutdown_end_a_hand_over(state_dir: Path, site: FixtureServer) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        nav = await call(client, C, "browser_navigate", url=site.url_for("index.html"))
        assert not nav["is_error"], nav
        await hand_over(client, C, reason="r")
        # The browser goes away (a reset here; a crash alike): the hand-over ends with it.
        reset = await client.post(f"/v1/conversations/{C}/reset")
        assert reset.status_code == 200
        after = await call(client, C, "browser_eval", expression="1", timeout="60s")
        assert "the browser was closed (reset)" in after["output"]

        await hand_over(client, C, reason="still open at the stop")
        answers: list[httpx.Response] = []

        async def waiting_call() -> None:
            answers.append(
                await client.post(
                    f"/v1/conversations/{C}/tools/browser_eval",
                    json={"expression": "2", "timeout": "10m"},
                )
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiting_call)
            await service.wait_for_log("a call waits for the person")
            # The stop ends the hand-over at once, so the waiting call is answered within the
            # grace instead of holding the stop up for it.
            assert await service.stop() == 0
        [answer] = answers
        assert answer.status_code == 200, answer.text
        assert "the service is shutting down" in answer.json()["output"]


async def test_a_hand_over_in_a_shared_chrome(state_dir: Path, site: FixtureServer) -> None:
    """Isolation "context": the conversation's tab is a context's page in a shared Chrome."""
    env = {"BROWSER_TOOL_ISOLATION": "context"}
    async with running_service(state_dir, env=env) as service, service.client() as client:
        nav = await call(client, C, "browser_navigate", url=site.url_for("tall.html"))
        assert not nav["is_error"], nav
        token = token_of(await hand_over(client, C, reason="r"))
        assert (await sessions(client))[C]["idle_s"] == 0.0  # the idle clock waits
        async with httpx.AsyncClient(base_url=service.url) as person:
            live = f"/v1/conversations/{C}/live"
            assert (await person.post(f"{live}/claim", json={"token": token})).status_code == 200
            frame = await person.get(f"{live}/frame", params={"after": 0})
            assert frame.status_code == 200, frame.text
            assert frame.content.startswith(b"\xff\xd8")
            wheel = {"type": "wheel", "x": 100, "y": 100, "dx": 0, "dy": 600}
            assert (await person.post(f"{live}/input", json={"events": [wheel]})).json() == {
                "sent": 1
            }
            assert (await person.post(f"{live}/done")).status_code == 200
        # The person's wheel scrolls the page (the compositor applies it a moment later).
        after = await call(
            client, C, "browser_eval", expression=until("scrollY > 0", "'scrolled'"), timeout="20s"
        )
        assert "scrolled" in after["output"]
        assert not after["is_error"], after
        assert "pressed Done" in after["output"]


async def test_the_page_that_held_an_expired_hand_over_is_told_it_ended(
    state_dir: Path, site: FixtureServer
) -> None:
    """Its page secret is still refused (no more frames or input), but as 410 saying why,
    not as the 403 every stranger gets: a person whose time ran out mid-task reads that."""
    async with running_service(state_dir) as service, service.client() as client:
        nav = await call(client, C, "browser_navigate", url=site.url_for("index.html"))
        assert not nav["is_error"], nav
        token = token_of(await hand_over(client, C, reason="Accept the cookies", ttl="1s"))
        async with httpx.AsyncClient(base_url=service.url) as person:
            live = f"/v1/conversations/{C}/live"
            assert (await person.post(f"{live}/claim", json={"token": token})).status_code == 200
            # This call waits for the hand-over, which ends when its time runs out.
            waited = await call(client, C, "browser_eval", expression="1", timeout="60s")
            assert "its time (ttl) ran out" in waited["output"], waited
            for response in (
                await person.get(f"{live}/state"),
                await person.post(f"{live}/input", json={"events": []}),
                await person.post(f"{live}/done"),
            ):
                assert response.status_code == 410, response.text
                assert response.json()["error"]["code"] == "handoff_ended"
                assert "ran out" in response.json()["error"]["message"]
        async with httpx.AsyncClient(base_url=service.url) as stranger:
            assert (await stranger.get(f"/v1/conversations/{C}/live/state")).status_code == 403
        assert_token_not_logged(service, token)
