"""The page's notes and console buffer, pure: bounded both, numbered, and each crash said one
way."""

from __future__ import annotations

from browser_tool.browser._console import MAX_ENTRY_CHARS, ConsoleBuffer
from browser_tool.browser._notes import Notes


def test_notes_keep_a_few_of_each_kind_and_count_the_rest() -> None:
    notes = Notes(per_kind=2, limits={"popup": 1})
    for i in range(5):
        notes.add("dialog", f"d{i}")
    notes.add("popup", "p0")
    notes.add("popup", "p1")
    notes.add("crash", "c")
    notes.drop("crash")  # the call's own error said it
    assert len(notes) == 7
    assert notes.take() == [
        "d0",
        "d1",
        "... and 3 more dialog event(s) like these (browser_recent_console_logs lists them).",
        "p0",
        "... and 1 more popup event(s) like these (browser_recent_console_logs lists them).",
    ]
    assert notes.take() == []


def test_console_entries_are_capped_in_number_and_in_size() -> None:
    console = ConsoleBuffer(3)
    for i in range(5):
        console.add("log", f"m{i}", when=float(i))
    console.add("log", "x" * (MAX_ENTRY_CHARS + 10))
    assert [e.text[:2] for e in console.recent(10)] == ["m3", "m4", "xx"]
    assert console.dropped == 3
    assert console.total == 6
    assert console.recent(1)[0].text.endswith("... [10 more characters]")
    assert [e.seq for e in console.recent(2)] == [5, 6]
    assert console.recent(0) == []
    assert console.clear() == 3
    assert console.dropped == 0
