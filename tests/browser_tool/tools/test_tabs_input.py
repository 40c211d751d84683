"""browser_tabs input (issue 20), pure: each field is taken only by the actions that use it, and
a bad combination is refused naming the field, before anything runs."""

from __future__ import annotations

import pytest

from browser_tool import InvalidInputError
from browser_tool.browser._console import ConsoleBuffer, Numbering
from browser_tool.tools import find_tool, prepare_input

TABS = find_tool("browser_tabs")


@pytest.mark.parametrize(
    "raw",
    [
        {"action": "list"},
        {"action": "new"},
        {"action": "new", "url": "https://example.com"},
        {"action": "select", "index": 0},
        {"action": "close"},
        {"action": "close", "index": 3},
    ],
)
def test_accepted(raw: dict[str, object]) -> None:
    args, _ = prepare_input(TABS, raw, 15.0, 600.0)
    assert args == raw


@pytest.mark.parametrize(
    ("raw", "field", "rule"),
    [
        ({"action": "select"}, "action", "'select' needs `index`"),
        ({"action": "list", "index": 1}, "index", "only taken by 'select' and 'close'"),
        ({"action": "close", "url": "about:blank"}, "url", "only taken by action 'new'"),
        ({"action": "open"}, "action", "must be one of"),
        ({"action": "select", "index": -1}, "index", ""),
        ({"action": "new", "tab": 1}, "tab", ""),
    ],
)
def test_refused_naming_the_field(raw: dict[str, object], field: str, rule: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        prepare_input(TABS, raw, 15.0, 600.0)
    assert str(caught.value).startswith(f"Invalid input {field!r}: "), str(caught.value)
    assert rule in str(caught.value)


def test_tabs_number_their_console_entries_from_one_sequence() -> None:
    numbering = Numbering()
    first, second = ConsoleBuffer(10, numbering), ConsoleBuffer(10, numbering)
    first.add("log", "a")
    second.add("log", "b")
    first.add("log", "c")
    assert [e.seq for e in first.recent(10)] == [1, 3]
    assert [e.seq for e in second.recent(10)] == [2]
    assert first.total == second.total == 3
