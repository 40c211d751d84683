"""The one-shot `browser-tool call` in this process: a browser for one call, then everything
removed. The files a result names (a screenshot, a download, a long output) live in the
conversation's dir, which goes with it; so they are copied out first when the caller asked
(`--keep-files DIR`, the paths in the result rewritten), or the result says they are gone."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path
from typing import Any

from chrome_launcher import StateLayout

from .._conversation_ids import session_dir_name
from .._errors import InvalidInputError
from .._settings import Settings
from ..tools import ToolOutput


async def call_in_process(
    settings: Settings,
    conversation_id: str,
    tool: str,
    tool_input: dict[str, Any],
    *,
    keep_dir: Path | None,
    with_images: bool,
    profile: str | None = None,
) -> dict[str, Any]:
    """Run the call, keep or report the files it names, kill the conversation; the wire JSON.
    With `profile`, the conversation is bound to that persistent profile first: its browser
    runs on the profile's dir, which the kill leaves in place."""
    from ..conversations import open_session_manager

    root = StateLayout(settings.state_dir).sessions_dir / session_dir_name(conversation_id)
    async with open_session_manager(settings) as manager:
        if profile is not None:  # issue 21; raises InvalidInputError or ConflictError
            manager.bind_profile(conversation_id, profile)
        try:
            output = await manager.call_tool(conversation_id, tool, tool_input)
            named = named_files(output, root)
            if keep_dir is not None and named:
                output = keep_files(output, named, keep_dir)
        finally:
            await manager.kill_session(conversation_id)
    result = output.to_json(include_image_data=with_images)
    if keep_dir is None and named:
        result["removed_files"] = [str(path) for path in named]
        result["note"] = (
            "The one-shot call removed the conversation's files when it ended, so the paths "
            "named above no longer exist. Pass --keep-files DIR to keep them (or --with-images "
            "for image data), or send the call to a service with --url."
        )
    return result


def named_files(output: ToolOutput, root: Path) -> list[Path]:
    """The existing files under `root` that the output's text or images name, in order."""
    found = re.findall(re.escape(str(root)) + r"/[^\s'\"()\[\]]+", output.output)
    found += [image.path for image in output.images]
    paths = dict.fromkeys(Path(p.rstrip(".,;:")) for p in found)
    return [p for p in paths if p.is_file() and root in p.parents]


def keep_files(output: ToolOutput, named: list[Path], keep_dir: Path) -> ToolOutput:
    """Copy `named` into `keep_dir` (never over an existing file) and point the output at
    the copies. Raises InvalidInputError naming --keep-files when it cannot."""
    try:
        keep_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        moved: dict[str, str] = {}
        for path in named:
            target = keep_dir / path.name
            counter = 1
            while target.exists():
                target = keep_dir / f"{path.stem}-{counter}{path.suffix}"
                counter += 1
            shutil.copy2(path, target)
            moved[str(path)] = str(target.resolve())
    except OSError as exc:
        raise InvalidInputError("--keep-files", f"cannot keep the files there: {exc}") from None
    text = output.output
    for old, new in moved.items():
        text = text.replace(old, new)
    images = tuple(dataclasses.replace(i, path=moved.get(i.path, i.path)) for i in output.images)
    return dataclasses.replace(output, output=text, images=images)
