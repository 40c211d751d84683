"""A person's input from the live view (issue 21), checked and turned into CDP `Input` commands.

The live view page sends batches of small JSON events (it is plain JavaScript in the package):

    {"type": "mouse", "action": "down"|"up"|"move", "x", "y", "button"?, "clicks"?, "modifiers"?}
    {"type": "wheel", "x", "y", "dx", "dy", "modifiers"?}
    {"type": "key", "action": "down"|"up", "key", "code"?, "keyCode"?, "text"?, "modifiers"?,
     "commands"?: ["selectAll", ...]}
    {"type": "text", "text"}                       (a paste: inserted as typed text)

Coordinates are the page viewport's CSS pixels. Everything is checked before anything is sent:
a bad batch is refused whole with InvalidInputError naming the field, and changes nothing.
Pure: no trio, no CDP.
"""

from __future__ import annotations

import math
from typing import Any

from .._errors import InvalidInputError

MAX_EVENTS = 200  # per batch
MAX_TEXT = 100_000  # characters of one paste
_MOUSE_ACTIONS = {"down": "mousePressed", "up": "mouseReleased", "move": "mouseMoved"}
_BUTTONS = ("none", "left", "middle", "right", "back", "forward")
# Editing commands a shortcut stands for: headless Chrome on Linux does not map keys to them.
COMMANDS = frozenset({"selectAll", "copy", "cut", "paste", "undo", "redo"})

Command = tuple[str, dict[str, Any]]


def live_input_commands(batch: object) -> list[Command]:
    """The CDP commands for a batch `{"events": [...]}`, in order. Raises InvalidInputError."""
    events = batch.get("events") if isinstance(batch, dict) else None
    if not isinstance(events, list) or len(events) > MAX_EVENTS:
        raise InvalidInputError("events", f"must be a list of at most {MAX_EVENTS} input events")
    return [_command(index, event) for index, event in enumerate(events)]


def _command(index: int, event: object) -> Command:
    where = f"events[{index}]"
    if not isinstance(event, dict):
        raise InvalidInputError(where, "must be an object with a 'type'")
    kind = event.get("type")
    if kind == "mouse":
        return _mouse(where, event)
    if kind == "wheel":
        params = _point(where, event) | {
            "type": "mouseWheel",
            "deltaX": _number(where, event, "dx", 100_000.0),
            "deltaY": _number(where, event, "dy", 100_000.0),
            "modifiers": _integer(where, event, "modifiers", 15, 0),
        }
        return "Input.dispatchMouseEvent", params
    if kind == "key":
        return _key(where, event)
    if kind == "text":
        return "Input.insertText", {"text": _string(where, event, "text", MAX_TEXT, None)}
    raise InvalidInputError(f"{where}.type", "must be 'mouse', 'wheel', 'key' or 'text'", kind)


def _mouse(where: str, event: dict[str, Any]) -> Command:
    action = event.get("action")
    if action not in _MOUSE_ACTIONS:
        raise InvalidInputError(f"{where}.action", "must be 'down', 'up' or 'move'", action)
    button = event.get("button", "none" if action == "move" else "left")
    if button not in _BUTTONS:
        raise InvalidInputError(f"{where}.button", f"must be one of {', '.join(_BUTTONS)}", button)
    params = _point(where, event) | {
        "type": _MOUSE_ACTIONS[action],
        "button": button,
        "clickCount": _integer(where, event, "clicks", 3, 1 if action != "move" else 0),
        "modifiers": _integer(where, event, "modifiers", 15, 0),
    }
    return "Input.dispatchMouseEvent", params


def _key(where: str, event: dict[str, Any]) -> Command:
    action = event.get("action")
    if action not in ("down", "up"):
        raise InvalidInputError(f"{where}.action", "must be 'down' or 'up'", action)
    text = _string(where, event, "text", 4, "")
    key_code = _integer(where, event, "keyCode", 255, 0)
    params: dict[str, Any] = {
        "type": "keyUp" if action == "up" else ("keyDown" if text else "rawKeyDown"),
        "key": _string(where, event, "key", 32, None),
        "code": _string(where, event, "code", 32, ""),
        "windowsVirtualKeyCode": key_code,
        "nativeVirtualKeyCode": key_code,
        "modifiers": _integer(where, event, "modifiers", 15, 0),
    }
    if text and action == "down":
        params["text"] = params["unmodifiedText"] = text
    commands = event.get("commands", [])
    if not isinstance(commands, list) or not all(c in COMMANDS for c in commands):
        raise InvalidInputError(
            f"{where}.commands", f"must be a list of {', '.join(sorted(COMMANDS))}", commands
        )
    if commands and action == "down":
        params["commands"] = list(commands)
    return "Input.dispatchKeyEvent", params


def _point(where: str, event: dict[str, Any]) -> dict[str, Any]:
    return {"x": _number(where, event, "x", 100_000.0), "y": _number(where, event, "y", 100_000.0)}


def _number(where: str, event: dict[str, Any], name: str, limit: float) -> float:
    value = event.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInputError(f"{where}.{name}", "must be a number", value)
    if abs(value) > limit:
        raise InvalidInputError(f"{where}.{name}", f"must be within -{limit:g}..{limit:g}", value)
    return float(value)


def _integer(where: str, event: dict[str, Any], name: str, most: int, default: int) -> int:
    value = event.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        raise InvalidInputError(f"{where}.{name}", f"must be an integer from 0 to {most}", value)
    return value


def _string(where: str, event: dict[str, Any], name: str, most: int, default: str | None) -> str:
    value = event.get(name, default)
    if not isinstance(value, str) or not (0 if default is not None else 1) <= len(value) <= most:
        raise InvalidInputError(f"{where}.{name}", f"must be a string of at most {most}", value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from JSON's \ud800: not text Chrome can take
        raise InvalidInputError(f"{where}.{name}", "must be valid Unicode text") from None
    return value
