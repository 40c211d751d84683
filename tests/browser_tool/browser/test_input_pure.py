"""Key parsing and the key events a press sends: pure."""

from __future__ import annotations

import pytest

from browser_tool import InvalidInputError
from browser_tool.browser import key_events, parse_key
from browser_tool.tools import find_tool, prepare_input


def test_named_keys_have_code_and_virtual_key_code() -> None:
    enter = parse_key("Enter").key
    assert (enter.key, enter.code, enter.key_code, enter.text) == ("Enter", "Enter", 13, "\r")
    assert parse_key("ArrowDown").key.key_code == 40
    assert parse_key("F12").key.code == "F12"
    assert parse_key("F12").key.key_code == 123
    assert parse_key("PageUp").key.key_code == 33
    assert parse_key("Space").key.text == " "


def test_letters_and_digits() -> None:
    a = parse_key("a").key
    assert (a.code, a.key_code, a.text) == ("KeyA", 65, "a")
    seven = parse_key("7").key
    assert (seven.code, seven.key_code) == ("Digit7", 55)


def test_combinations_hold_modifiers_in_order() -> None:
    press = parse_key("Control+a")
    assert press.modifiers == ("Control",)
    assert press.modifier_bits == 2
    assert parse_key("Ctrl+Shift+ArrowDown").modifiers == ("Control", "Shift")
    assert parse_key("Meta+Enter").modifier_bits == 4
    assert parse_key("Control++").key.key == "+"
    assert parse_key("+").key.key == "+"


def test_events_press_modifiers_around_the_key_and_drop_text_under_control() -> None:
    events = key_events(parse_key("Control+a"))
    assert [(e["type"], e["key"]) for e in events] == [
        ("rawKeyDown", "Control"),
        ("rawKeyDown", "a"),
        ("keyUp", "a"),
        ("keyUp", "Control"),
    ]
    assert all("text" not in e for e in events)
    assert events[1]["modifiers"] == 2
    assert events[-1]["modifiers"] == 0


def test_a_typing_key_carries_its_text_shift_makes_it_upper_case() -> None:
    events = key_events(parse_key("Enter"))
    assert events[0] == {
        "type": "keyDown",
        "key": "Enter",
        "code": "Enter",
        "windowsVirtualKeyCode": 13,
        "nativeVirtualKeyCode": 13,
        "modifiers": 0,
        "text": "\r",
        "unmodifiedText": "\r",
    }
    assert key_events(parse_key("Shift+a"))[1]["text"] == "A"
    assert "text" not in key_events(parse_key("Tab"))[0]


@pytest.mark.parametrize("combo", ["Hyper+a", "Control+", "", "Banana", "a++b"])
def test_unknown_keys_and_modifiers_are_refused_naming_the_field(combo: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_key(combo)
    assert caught.value.field == "key"


def check(tool: str, raw: dict[str, object]) -> dict[str, object]:
    return prepare_input(find_tool(tool), raw, 15.0, 300.0)[0]


def test_camel_case_fields_get_our_snake_case_name() -> None:
    with pytest.raises(InvalidInputError, match="did you mean 'double_click'"):
        check("browser_click", {"ref": "e1", "doubleClick": True})
    with pytest.raises(InvalidInputError, match="did you mean 'text_gone'"):
        check("browser_wait_for", {"textGone": "x"})
    with pytest.raises(InvalidInputError) as caught:
        check("browser_click", {"ref": "e1", "colour": "red"})
    assert "did you mean" not in str(caught.value)


def test_array_fields_are_checked_item_by_item() -> None:
    with pytest.raises(InvalidInputError, match="'values': item 2 must be a string"):
        check("browser_select_option", {"ref": "e1", "values": ["a", 3]})
    with pytest.raises(InvalidInputError, match="'values': must have at least 1 item"):
        check("browser_select_option", {"ref": "e1", "values": []})
    with pytest.raises(InvalidInputError, match="'modifiers': item 1 must be one of"):
        check("browser_click", {"ref": "e1", "modifiers": ["Hyper"]})
    with pytest.raises(InvalidInputError, match="'paths': must be an array"):
        check("browser_file_upload", {"ref": "e1", "paths": "/tmp/x"})
    assert check("browser_select_option", {"ref": "e1", "values": ["a"]})["values"] == ["a"]
