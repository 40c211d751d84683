"""A model-shaped script: sign in through snapshot refs alone, reading the result from the
actions' own output. Run with `-s` to see the transcript."""

from __future__ import annotations

import pytest

from browser_tool import BrowserSessionManager
from fixtures_site import FixtureServer
from tests.support.manager_calls import find_ref, ok

pytestmark = pytest.mark.chrome


async def test_model_shaped_login(manager: BrowserSessionManager, site: FixtureServer) -> None:
    transcript: list[str] = []

    async def step(tool: str, **args: object) -> str:
        text = await ok(manager, tool, **args)
        transcript.append(f">>> {tool} {args}\n{text}")
        return text

    await step("browser_navigate", url=site.url_for("/login.html"))
    snapshot = await step("browser_snapshot")
    email = find_ref(snapshot, "textbox", "Email")
    password = find_ref(snapshot, "textbox", "Password")
    submit = find_ref(snapshot, "button", "Sign in")
    typed = await step("browser_type", ref=email, text="ada@example.com", element="Email field")
    assert f'[ref={email}]: "" -> "ada@example.com"' in typed
    await step("browser_type", ref=password, text="hunter2")
    clicked = await step("browser_click", ref=submit, element="Sign in button")
    print("\n\n".join(transcript))
    assert clicked.startswith(f'Clicked button "Sign in" [ref={submit}] (Sign in button).')
    assert "Navigated to " + site.url_for("/welcome.html") in clicked
    assert "(title: 'Welcome')" in clicked
