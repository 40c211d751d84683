"""Choosing options of a <select> with trusted input, as a person does.

A single-choice select (a drop-down) is focused and moved with ArrowDown/ArrowUp to the
option: on headless shell a drop-down's popup is not part of the page, so its options cannot be
clicked; the keys move the choice and fire `input`/`change` as a person's would. A
multiple-choice select (a list box) shows its options on the page: the first is clicked, the
others clicked with Control held. The options are read by script (reading only); the result
is read back and checked, never assumed.
"""

from __future__ import annotations

from typing import Any

from .._errors import ToolError
from ..browser import NAMED_KEYS, ActionTarget, KeyPress, Page, mouse_click, press_key

_OPTIONS = """function() {
  if (this.tagName !== 'SELECT') return null;
  return {multiple: this.multiple, index: this.selectedIndex,
          options: [...this.options].map(o => ({value: o.value, label: o.label.trim(),
                                                disabled: o.disabled}))};
}"""
_CHOSEN = "function() { return [...this.selectedOptions].map(o => o.label.trim()); }"
_OPTION = "function(i) { return this.options[i]; }"


async def _call(page_session: Any, object_id: str, fn: str, args: Any = None) -> Any:
    params: dict[str, Any] = {"objectId": object_id, "functionDeclaration": fn}
    params["returnByValue"] = args is None or fn != _OPTION
    if args is not None:
        params["arguments"] = args
    result = await page_session.send("Runtime.callFunctionOn", params)
    return result.get("result", {})


async def select_values(page: Page, target: ActionTarget, values: list[str]) -> list[str]:
    """Select the options whose value or label is in `values`; return their labels as the
    page now shows them. Raises ToolError for a non-select, an unknown or disabled option."""
    handle = target.handle
    session = handle.session
    info = (await _call(session, handle.object_id, _OPTIONS)).get("value")
    if not info:
        raise ToolError(f"{target.text} is not a <select>; browser_select_option needs one.")
    options = info["options"]
    indexes = []
    for wanted in values:
        found = [i for i, o in enumerate(options) if wanted in (o["value"], o["label"])]
        if not found:
            known = ", ".join(repr(o["label"]) for o in options[:20])
            raise ToolError(f"{target.text} has no option {wanted!r} (options: {known}).")
        if options[found[0]]["disabled"]:
            raise ToolError(f"Option {wanted!r} of {target.text} is disabled.")
        indexes.append(found[0])
    if len(indexes) > 1 and not info["multiple"]:
        raise ToolError(f"{target.text} takes one option; got {len(values)}.")
    if info["multiple"]:
        await _click_options(page, target, indexes)
    else:
        await session.send("DOM.focus", {"backendNodeId": handle.backend_node_id})
        await _move_to(page, info["index"], indexes[0], options)
    chosen: list[str] = (await _call(session, handle.object_id, _CHOSEN)).get("value") or []
    expected = [options[i]["label"] for i in indexes]
    if sorted(chosen) != sorted(expected):
        raise ToolError(
            f"{target.text} shows {chosen!r} after the input, not {expected!r}; the page may "
            "reset it."
        )
    return chosen


async def _move_to(page: Page, current: int, index: int, options: list[dict[str, Any]]) -> None:
    step = "ArrowDown" if index > current else "ArrowUp"
    low, high = sorted((current, index))
    between = [i for i in range(low + 1, high) if not options[i]["disabled"]]
    presses = len(between) + (1 if index != current else 0)
    for _ in range(presses):
        await press_key(page.session, KeyPress(NAMED_KEYS[step], ()))


async def _click_options(page: Page, target: ActionTarget, indexes: list[int]) -> None:
    handle = target.handle
    for n, i in enumerate(indexes):
        option = await _call(handle.session, handle.object_id, _OPTION, [{"value": i}])
        described = await handle.session.send("DOM.describeNode", {"objectId": option["objectId"]})
        quads = await handle.session.send(
            "DOM.getContentQuads", {"backendNodeId": described["node"]["backendNodeId"]}
        )
        if not quads.get("quads"):
            raise ToolError(f"Option {i + 1} of {target.text} is not visible in its list.")
        quad = quads["quads"][0]
        x, y = sum(quad[0::2]) / 4 + target.dx, sum(quad[1::2]) / 4 + target.dy
        await mouse_click(page.session, x, y, modifiers=0 if n == 0 else 2)
