"""Mouse and keyboard input through CDP's `Input` domain: trusted events, as a person's.

Key names follow the DOM `KeyboardEvent.key` values (`Enter`, `ArrowDown`, `a`, `F5`), joined
with `+` for a combination (`Control+a`, `Shift+ArrowDown`, `Meta+Enter`). `parse_key` is pure;
the senders dispatch on a given CDP session (the page's: coordinates are the page viewport's).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._errors import InvalidInputError
from ..cdp import CdpSession


@dataclass(frozen=True)
class KeyDef:
    key: str  # KeyboardEvent.key
    code: str  # KeyboardEvent.code
    key_code: int  # windowsVirtualKeyCode
    text: str = ""  # what the key types, if anything


# Modifier name -> (CDP modifiers bit, its own key definition).
MODIFIERS: dict[str, tuple[int, KeyDef]] = {
    "Alt": (1, KeyDef("Alt", "AltLeft", 18)),
    "Control": (2, KeyDef("Control", "ControlLeft", 17)),
    "Meta": (4, KeyDef("Meta", "MetaLeft", 91)),
    "Shift": (8, KeyDef("Shift", "ShiftLeft", 16)),
}
_MODIFIER_ALIASES = {"Ctrl": "Control", "Cmd": "Meta", "Command": "Meta", "Option": "Alt"}


def _named_keys() -> dict[str, KeyDef]:
    keys = {
        "Enter": KeyDef("Enter", "Enter", 13, "\r"),
        "Tab": KeyDef("Tab", "Tab", 9),
        "Escape": KeyDef("Escape", "Escape", 27),
        "Backspace": KeyDef("Backspace", "Backspace", 8),
        "Delete": KeyDef("Delete", "Delete", 46),
        "Insert": KeyDef("Insert", "Insert", 45),
        "ArrowLeft": KeyDef("ArrowLeft", "ArrowLeft", 37),
        "ArrowUp": KeyDef("ArrowUp", "ArrowUp", 38),
        "ArrowRight": KeyDef("ArrowRight", "ArrowRight", 39),
        "ArrowDown": KeyDef("ArrowDown", "ArrowDown", 40),
        "Home": KeyDef("Home", "Home", 36),
        "End": KeyDef("End", "End", 35),
        "PageUp": KeyDef("PageUp", "PageUp", 33),
        "PageDown": KeyDef("PageDown", "PageDown", 34),
        " ": KeyDef(" ", "Space", 32, " "),
    }
    keys["Space"] = keys[" "]
    keys["Esc"] = keys["Escape"]
    for n in range(1, 13):
        keys[f"F{n}"] = KeyDef(f"F{n}", f"F{n}", 111 + n)
    for modifier_name, (_, definition) in MODIFIERS.items():
        keys[modifier_name] = definition
    return keys


NAMED_KEYS = _named_keys()
_PUNCTUATION = {
    "-": ("Minus", 189),
    "=": ("Equal", 187),
    "[": ("BracketLeft", 219),
    "]": ("BracketRight", 221),
    ";": ("Semicolon", 186),
    "'": ("Quote", 222),
    ",": ("Comma", 188),
    ".": ("Period", 190),
    "/": ("Slash", 191),
    "\\": ("Backslash", 220),
    "`": ("Backquote", 192),
}


def key_def(name: str) -> KeyDef | None:
    """The definition of one key by name: a named key, a letter, a digit or punctuation."""
    if name in NAMED_KEYS:
        return NAMED_KEYS[name]
    if len(name) != 1:
        return None
    if name.isascii() and name.isalpha():
        return KeyDef(name, f"Key{name.upper()}", ord(name.upper()), name)
    if name.isascii() and name.isdigit():
        return KeyDef(name, f"Digit{name}", ord(name), name)
    if name in _PUNCTUATION:
        code, key_code = _PUNCTUATION[name]
        return KeyDef(name, code, key_code, name)
    return KeyDef(name, "", 0, name)  # any other character: typed as text


@dataclass(frozen=True)
class KeyPress:
    """A key with the modifiers held while it is pressed."""

    key: KeyDef
    modifiers: tuple[str, ...]  # canonical modifier names, in the order given

    @property
    def modifier_bits(self) -> int:
        return modifier_bits(self.modifiers)


def modifier_bits(modifiers: tuple[str, ...]) -> int:
    bits = 0
    for name in modifiers:
        bits |= MODIFIERS[name][0]
    return bits


def canonical_modifier(name: str) -> str | None:
    name = _MODIFIER_ALIASES.get(name, name)
    return name if name in MODIFIERS else None


def parse_key(combo: str, field: str = "key") -> KeyPress:
    """Parse `Enter`, `a`, `Control+a`, `Shift+ArrowDown`; `+` alone is the plus key.
    Raises InvalidInputError naming `field` for an unknown key or modifier."""
    if combo in ("+", "Plus"):
        return KeyPress(KeyDef("+", "Equal", 187, "+"), ())
    parts = combo.split("+")
    if combo.endswith("++"):  # "Control++"
        parts = [*combo[:-2].split("+"), "+"]
    if any(part == "" for part in parts):
        raise InvalidInputError(field, f"is not a key combination: {combo!r}", combo)
    *held, last = parts
    modifiers: list[str] = []
    for name in held:
        canonical = canonical_modifier(name)
        if canonical is None:
            raise InvalidInputError(
                field,
                f"has an unknown modifier {name!r} in {combo!r} "
                f"(modifiers: {', '.join(MODIFIERS)})",
                combo,
            )
        modifiers.append(canonical)
    definition = key_def(_MODIFIER_ALIASES.get(last, last))
    if definition is None:
        raise InvalidInputError(
            field,
            f"is not a known key: {last!r} (keys are names like Enter, Tab, Escape, ArrowDown, "
            "F5, or one character)",
            combo,
        )
    return KeyPress(definition, tuple(modifiers))


def key_events(press: KeyPress) -> list[dict[str, object]]:
    """The `Input.dispatchKeyEvent` parameters for one press: modifiers down, the key down and
    up, modifiers up. A key that types text and has no command modifier carries its text."""
    events: list[dict[str, object]] = []
    bits = 0
    for name in press.modifiers:
        bit, definition = MODIFIERS[name]
        bits |= bit
        events.append(_key_event("rawKeyDown", definition, bits, text=""))
    typing = press.key.text and not (bits & ~MODIFIERS["Shift"][0])
    text = press.key.text if typing else ""
    if text and "Shift" in press.modifiers and len(text) == 1:
        text = text.upper()
    events.append(_key_event("keyDown" if text else "rawKeyDown", press.key, bits, text=text))
    events.append(_key_event("keyUp", press.key, bits, text=""))
    for name in reversed(press.modifiers):
        bit, definition = MODIFIERS[name]
        bits &= ~bit
        events.append(_key_event("keyUp", definition, bits, text=""))
    return events


def _key_event(kind: str, key: KeyDef, bits: int, *, text: str) -> dict[str, object]:
    event: dict[str, object] = {
        "type": kind,
        "key": key.key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code,
        "modifiers": bits,
    }
    if text:
        event["text"] = text
        event["unmodifiedText"] = text
    return event


async def press_key(session: CdpSession, press: KeyPress) -> None:
    for event in key_events(press):
        await session.send("Input.dispatchKeyEvent", event)


async def type_char(session: CdpSession, char: str) -> None:
    """One character as a key press (letters, digits, known keys), else as inserted text."""
    definition = key_def(char)
    if definition is not None and definition.code:
        await press_key(session, KeyPress(definition, ()))
    elif char == "\n":
        await press_key(session, KeyPress(NAMED_KEYS["Enter"], ()))
    else:
        await session.send("Input.insertText", {"text": char})


async def insert_text(session: CdpSession, text: str) -> None:
    await session.send("Input.insertText", {"text": text})


async def mouse_move(session: CdpSession, x: float, y: float, modifiers: int = 0) -> None:
    await session.send(
        "Input.dispatchMouseEvent",
        {"type": "mouseMoved", "x": x, "y": y, "modifiers": modifiers, "button": "none"},
    )


async def mouse_click(
    session: CdpSession,
    x: float,
    y: float,
    *,
    button: str = "left",
    clicks: int = 1,
    modifiers: int = 0,
) -> None:
    """Move to (x, y), then press and release `clicks` times (2: a double click)."""
    await mouse_move(session, x, y, modifiers)
    for count in range(1, clicks + 1):
        for kind in ("mousePressed", "mouseReleased"):
            await session.send(
                "Input.dispatchMouseEvent",
                {
                    "type": kind,
                    "x": x,
                    "y": y,
                    "button": button,
                    "clickCount": count,
                    "modifiers": modifiers,
                },
            )


async def select_all(session: CdpSession) -> None:
    """Select the focused field's text (the editing command, as Control+a does)."""
    a = key_def("a")
    assert a is not None
    down = _key_event("rawKeyDown", a, MODIFIERS["Control"][0], text="")
    await session.send("Input.dispatchKeyEvent", {**down, "commands": ["selectAll"]})
    await session.send("Input.dispatchKeyEvent", _key_event("keyUp", a, 0, text=""))
