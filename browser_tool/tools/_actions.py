"""browser_click, browser_type, browser_press_key, browser_select_option, browser_hover: act on
an element by its snapshot ref with trusted input events, and say what the action did.

Each resolves the ref, waits until the element is actionable (see browser/_actionable.py),
sends the input, then waits for its consequences and reports them (browser/_action_watch.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from .._duration import format_duration
from .._errors import CdpSessionDetachedError, InvalidInputError
from ..browser import (
    NAMED_KEYS,
    ActionTarget,
    KeyPress,
    Page,
    canonical_modifier,
    insert_text,
    modifier_bits,
    mouse_click,
    mouse_move,
    parse_key,
    press_key,
    resolve_actionable,
    select_all,
    type_char,
    watch_action,
)
from ._context import ToolContext
from ._output import ToolOutput
from ._select import select_values
from ._tool import TIMEOUT_FIELD, Tool, object_schema

Perform = Callable[[Page, ActionTarget], Awaitable[str]]

REF_FIELD = {
    "type": "string",
    "description": "The element's ref from the latest browser_snapshot, like e12",
    "minLength": 1,
    "maxLength": 20,
}
ELEMENT_FIELD = {
    "type": "string",
    "description": "Your description of the element (echoed in errors), like 'Sign in button'",
    "maxLength": 500,
}


async def act_on_ref(ctx: ToolContext, args: dict[str, Any], perform: Perform) -> ToolOutput:
    """Resolve the ref, wait until actionable, perform, and report what happened."""
    page = (await ctx.browser()).page
    timeout_text = format_duration(ctx.timeout)
    target = await resolve_actionable(
        page, args["ref"], args.get("element"), deadline=ctx.deadline, timeout_text=timeout_text
    )
    return await run_watched(ctx, page, lambda: perform(page, target))


async def run_watched(
    ctx: ToolContext, page: Page, perform: Callable[[], Awaitable[str]]
) -> ToolOutput:
    timeout_text = format_duration(ctx.timeout)
    async with watch_action(page, (await ctx.browser()).tabs) as watch:
        with trio.move_on_at(ctx.deadline):
            try:
                done = await perform()
            except CdpSessionDetachedError:  # the page closed its window at the input
                watch.closed = True
                done = "Its tab closed during the action: the input may have been sent in part."
            lines = await watch.finish(ctx.deadline, timeout_text)
            return ToolOutput.ok("\n".join([done, *lines]))
    raise ctx.timeout_error(
        "during the action: its input may have been sent in part. Take a snapshot to see the page."
    )


def _modifiers(args: dict[str, Any]) -> tuple[str, ...]:
    names = []
    for name in args.get("modifiers", []):
        canonical = canonical_modifier(name)
        if canonical is None:
            raise InvalidInputError(
                "modifiers", f"has an unknown modifier {name!r} (Alt, Control, Meta, Shift)", name
            )
        names.append(canonical)
    return tuple(names)


async def click(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    bits = modifier_bits(_modifiers(args))
    button = args.get("button", "left")
    clicks = 2 if args.get("double_click") else 1

    async def perform(page: Page, target: ActionTarget) -> str:
        await mouse_click(
            page.session, target.x, target.y, button=button, clicks=clicks, modifiers=bits
        )
        kind = "Double-clicked" if clicks == 2 else "Clicked"
        how = "" if button == "left" else f" with the {button} button"
        return f"{kind} {target.text}{how}."

    return await act_on_ref(ctx, args, perform)


async def type_text(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    text: str = args["text"]

    async def perform(page: Page, target: ActionTarget) -> str:
        session = page.session
        await mouse_click(session, target.x, target.y)  # focus, as a person does
        await select_all(session)
        await press_key(session, KeyPress(NAMED_KEYS["Delete"], ()))
        if args.get("slowly"):
            for char in text:
                await type_char(session, char)
        elif text:
            await insert_text(session, text)
        if args.get("submit"):
            await press_key(session, KeyPress(NAMED_KEYS["Enter"], ()))
        return f"Typed {text!r} into {target.text}" + (
            " and pressed Enter." if args.get("submit") else "."
        )

    return await act_on_ref(ctx, args, perform)


async def press(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    key = parse_key(args["key"])
    page = (await ctx.browser()).page

    async def perform() -> str:
        await press_key(page.session, key)
        return f"Pressed {args['key']}."

    return await run_watched(ctx, page, perform)


async def hover(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    async def perform(page: Page, target: ActionTarget) -> str:
        await mouse_move(page.session, target.x, target.y)
        return f"Hovered over {target.text}."

    return await act_on_ref(ctx, args, perform)


async def select_option(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    values = [str(v) for v in args["values"]]
    if not values:
        raise InvalidInputError("values", "must name at least one option")

    async def perform(page: Page, target: ActionTarget) -> str:
        chosen = await select_values(page, target, values)
        return f"Selected {', '.join(repr(c) for c in chosen)} in {target.text}."

    return await act_on_ref(ctx, args, perform)


ACTION_TOOLS = (
    Tool(
        "browser_click",
        "Click an element by its ref from browser_snapshot, with real mouse events. Waits until "
        "the element is visible, stable, enabled and not covered; says what the click did.",
        object_schema(
            {
                "ref": REF_FIELD,
                "element": ELEMENT_FIELD,
                "button": {
                    "type": "string",
                    "enum": ["left", "right", "middle"],
                    "description": "Mouse button (default: left)",
                },
                "double_click": {"type": "boolean", "description": "Double-click"},
                "modifiers": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["Alt", "Control", "Meta", "Shift"]},
                    "maxItems": 4,
                    "description": "Modifier keys held during the click",
                },
                "timeout": TIMEOUT_FIELD,
            },
            ["ref"],
        ),
        click,
    ),
    Tool(
        "browser_type",
        "Replace the text of an editable element (by ref) with `text`, typed with real key "
        "events. `submit` presses Enter afterwards; `slowly` types one key at a time, for "
        "pages that react to each key.",
        object_schema(
            {
                "ref": REF_FIELD,
                "element": ELEMENT_FIELD,
                "text": {"type": "string", "maxLength": 100_000, "description": "Text to type"},
                "submit": {"type": "boolean", "description": "Press Enter after typing"},
                "slowly": {"type": "boolean", "description": "Type one character at a time"},
                "timeout": TIMEOUT_FIELD,
            },
            ["ref", "text"],
        ),
        type_text,
    ),
    Tool(
        "browser_press_key",
        "Press a key or a key combination on the focused element: Enter, Tab, Escape, "
        "ArrowDown, F5, a, Control+a, Shift+ArrowDown, Meta+Enter.",
        object_schema(
            {
                "key": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 60,
                    "description": "Key name or combination, like Enter or Control+a",
                },
                "timeout": TIMEOUT_FIELD,
            },
            ["key"],
        ),
        press,
    ),
    Tool(
        "browser_select_option",
        "Choose option(s) of a <select> by ref; `values` are option values or visible labels.",
        object_schema(
            {
                "ref": REF_FIELD,
                "element": ELEMENT_FIELD,
                "values": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 1000},
                    "minItems": 1,
                    "maxItems": 100,
                    "description": "Values or labels of the options to select",
                },
                "timeout": TIMEOUT_FIELD,
            },
            ["ref", "values"],
        ),
        select_option,
    ),
    Tool(
        "browser_hover",
        "Move the mouse over an element by its ref (CSS :hover, mouseover handlers).",
        object_schema(
            {"ref": REF_FIELD, "element": ELEMENT_FIELD, "timeout": TIMEOUT_FIELD}, ["ref"]
        ),
        hover,
    ),
)
