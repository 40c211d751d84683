"""Tool results and the spilling of long text to files.

Charter: pure and synchronous; files only under tmp_path. We pin the JSON shape exactly, the
1 KiB boundary in UTF-8 bytes (not characters), the saved file's name, mode, content and
SHA-256, and that a failed write is a ToolError that leaves no temp file behind.
"""

from __future__ import annotations

import base64
import hashlib
import re
import stat
from pathlib import Path

import pytest

from browser_tool._errors import ToolError
from browser_tool.tools._output import ToolImage, ToolOutput, spill_large_text, spill_lines

SAVED = re.compile(
    r"\[output truncated: (?P<size>[\d,]+) bytes total; "
    r"full text saved to (?P<path>\S+) \(sha256 (?P<sha>[0-9a-f]{64})\)\]\Z"
)


def test_to_json_shape() -> None:
    image = ToolImage(media_type="image/png", data=b"\x89PNG\x00\xff", path="/s/shot.png")
    result = ToolOutput.ok("done", images=(image,))
    assert result.to_json() == {
        "output": "done",
        "is_error": False,
        "images": [
            {
                "media_type": "image/png",
                "data": base64.b64encode(b"\x89PNG\x00\xff").decode(),
                "path": "/s/shot.png",
            }
        ],
    }
    assert result.to_json(include_image_data=False) == {
        "output": "done",
        "is_error": False,
        "images": [{"media_type": "image/png", "path": "/s/shot.png"}],
    }


def test_ok_and_error() -> None:
    assert ToolOutput.ok("fine") == ToolOutput("fine", is_error=False, images=())
    assert ToolOutput.error("Timeout after 15s").to_json() == {
        "output": "Timeout after 15s",
        "is_error": True,
        "images": [],
    }


@pytest.mark.parametrize("text", ["", "short", "x" * 1024, "é" * 512, "€" * 341 + "x"])
def test_text_up_to_the_limit_stays_inline(text: str, tmp_path: Path) -> None:
    outputs = tmp_path / "outputs"
    assert len(text.encode()) <= 1024
    assert spill_large_text(text, outputs, label="eval") is text
    assert not outputs.exists()


def spilled(message: str) -> tuple[str, Path, int, str]:
    match = SAVED.search(message)
    assert match is not None, message
    head = message[: match.start()]
    return head, Path(match["path"]), int(match["size"].replace(",", "")), match["sha"]


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("x" * 1025, "x" * 512 + "\n"),
        ("é" * 513, "é" * 512 + "\n"),  # 1026 bytes, though only 513 characters
        ("€" * 342, "€" * 342 + "\n"),  # 1026 bytes; fewer characters than the preview
        ("a\n" * 600, "a\n" * 256),  # preview ends with a newline: no blank line added
        ("🙂" * 300, "🙂" * 300 + "\n"),
    ],
)
def test_longer_text_is_saved(text: str, head: str, tmp_path: Path) -> None:
    outputs = tmp_path / "sessions" / "c1" / "outputs"
    message = spill_large_text(text, outputs, label="eval")
    got_head, path, size, sha = spilled(message)
    assert got_head == head
    assert message.startswith(text[:512])
    encoded = text.encode()
    assert size == len(encoded) > 1024
    assert sha == hashlib.sha256(encoded).hexdigest()
    assert path.parent == outputs
    assert re.fullmatch(rf"eval-\d{{8}}T\d{{6}}Z-{sha[:12]}\.txt", path.name)
    assert path.read_bytes() == encoded
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(outputs.stat().st_mode) == 0o700
    assert sorted(outputs.iterdir()) == [path]  # no temp file left


def test_size_has_thousands_separators(tmp_path: Path) -> None:
    message = spill_large_text("y" * 48_213, tmp_path, label="console", preview=10)
    assert message.startswith("y" * 10 + "\n[output truncated: 48,213 bytes total; full text saved")


def test_limit_and_preview_are_parameters(tmp_path: Path) -> None:
    assert spill_large_text("abcdef", tmp_path, label="t", limit=6) == "abcdef"
    head, path, size, _ = spilled(
        spill_large_text("abcdefg", tmp_path, label="t", limit=6, preview=2)
    )
    assert (head, size) == ("ab\n", 7)
    assert path.read_text() == "abcdefg"


def test_existing_directory_keeps_its_mode(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    spill_large_text("z" * 2000, tmp_path, label="t")
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755


def test_label_cannot_escape_the_directory(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs"
    _, path, _, _ = spilled(spill_large_text("z" * 2000, outputs, label="../../etc/passwd"))
    assert path.parent == outputs
    assert path.name.startswith("etc-passwd-")


def test_lone_surrogate_is_saved_as_replacement_character(tmp_path: Path) -> None:
    text = "a" * 1100 + "\ud800"
    _, path, size, _ = spilled(spill_large_text(text, tmp_path, label="eval"))
    assert path.read_text(encoding="utf-8") == "a" * 1100 + "\ufffd"
    assert size == 1103


def test_write_failure_is_a_tool_error(tmp_path: Path) -> None:
    blocker = tmp_path / "outputs"
    blocker.write_text("a file where the directory should be")
    with pytest.raises(ToolError, match=r"Could not save the full output to .*outputs/eval-"):
        spill_large_text("x" * 2000, blocker, label="eval")
    with pytest.raises(ToolError, match="Not a directory"):
        spill_large_text("x" * 2000, blocker / "deeper", label="eval")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outputs"]


def test_lines_that_fit_stay_inline(tmp_path: Path) -> None:
    assert spill_lines("head:", ["a", "b"], tmp_path, label="console") == "head:\na\nb"
    assert not tmp_path.joinpath("outputs").exists()


def test_lines_that_do_not_fit_keep_the_newest_and_name_the_file(tmp_path: Path) -> None:
    lines = [f"line {i:03d} " + "x" * 40 for i in range(100)]
    text = spill_lines("head:", lines, tmp_path, label="console", limit=600, noun="entries")
    assert len(text.encode()) <= 600
    head, footer, *kept = text.splitlines()
    assert head == "head:"
    assert kept == lines[-len(kept) :]  # the newest, in order
    assert kept
    match = re.fullmatch(
        r"\[(\d+) earlier entries left out here; all 100 entries \(([\d,]+) bytes\) are in (\S+)\]",
        footer,
    )
    assert match, footer
    assert int(match[1]) == 100 - len(kept)
    assert Path(match[3]).read_text() == "\n".join(["head:", *lines])


def test_one_newest_line_too_long_is_cut_with_a_mark(tmp_path: Path) -> None:
    text = spill_lines("h", ["old", "y" * 5000], tmp_path, label="console", limit=400)
    assert len(text.encode()) <= 400
    assert text.splitlines()[-1].endswith("[line cut; the file has all of it]")
