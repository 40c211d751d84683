"""browser_file_upload: give files to a file input by ref, or to the file chooser that a click
on the element opens. Files only from the conversation's dir and the configured upload roots."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import trio

from .._duration import format_duration
from .._errors import CdpError, InvalidInputError, ToolError
from ..browser import mouse_click, resolve_actionable, resolve_ref
from ._actions import ELEMENT_FIELD, REF_FIELD, run_watched
from ._context import ToolContext
from ._output import ToolOutput
from ._roots import find_under_roots, real_roots
from ._tool import TIMEOUT_FIELD, Tool, object_schema

_IS_FILE_INPUT = "function() { return this.tagName === 'INPUT' && this.type === 'file'; }"
_MULTIPLE = "function() { return this.multiple === true; }"
_REFUSED = (
    "Refusing to upload {raw}: files can only be uploaded from under {roots} (the operator can "
    "add roots with BROWSER_TOOL_UPLOAD_ROOTS)."
)


def check_paths(ctx: ToolContext, raw_paths: list[str]) -> list[str]:
    """The real paths of the files to upload; ToolError for one outside the roots or missing."""
    roots = real_roots([ctx.dirs().root, *ctx.settings.upload_roots])
    real_paths = []
    for raw in raw_paths:
        if "\0" in raw:
            raise InvalidInputError("paths", "must not contain a NUL character")
        real = find_under_roots(raw, ctx.dirs().root, roots, refused=_REFUSED, kind=Path.is_file)
        if real is None:
            raise ToolError(f"File to upload not found: {raw}")
        real_paths.append(str(real))
    return real_paths


async def _value(session: Any, object_id: str, fn: str) -> object:
    result = await session.send(
        "Runtime.callFunctionOn",
        {"objectId": object_id, "functionDeclaration": fn, "returnByValue": True},
    )
    return result.get("result", {}).get("value")


async def file_upload(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    files = check_paths(ctx, [str(p) for p in args["paths"]])
    if not files:
        raise InvalidInputError("paths", "must name at least one file")
    page = (await ctx.browser()).page
    handle = await resolve_ref(page, args["ref"], args.get("element"))
    what = page.refs.describe(handle.ref)
    names = ", ".join(os.path.basename(f) for f in files)
    if await _value(handle.session, handle.object_id, _IS_FILE_INPUT):
        if len(files) > 1 and not await _value(handle.session, handle.object_id, _MULTIPLE):
            raise ToolError(f"{what} takes one file; got {len(files)}.")

        async def set_files() -> str:
            await handle.session.send(
                "DOM.setFileInputFiles", {"files": files, "backendNodeId": handle.backend_node_id}
            )
            return f"Set the files of {what} to {names}."

        return await run_watched(ctx, page, set_files)
    timeout_text = format_duration(ctx.timeout)
    target = await resolve_actionable(
        page, args["ref"], args.get("element"), deadline=ctx.deadline, timeout_text=timeout_text
    )
    session = page.session

    async def choose() -> str:
        async with session.listen("Page.fileChooserOpened", buffer=10) as opened:
            await session.send("Page.setInterceptFileChooserDialog", {"enabled": True})
            try:
                await mouse_click(session, target.x, target.y)
                with trio.move_on_at(ctx.deadline):
                    event = await opened.receive()
                    p = event.params
                    if len(files) > 1 and p.get("mode") != "selectMultiple":
                        raise ToolError(f"The file chooser {what} opened takes one file.")
                    await session.send(
                        "DOM.setFileInputFiles",
                        {"files": files, "backendNodeId": p["backendNodeId"]},
                    )
                    return f"Clicked {target.text}; filled the file chooser it opened with {names}."
                raise ctx.timeout_error(f": clicking {target.text} opened no file chooser.")
            finally:
                with (
                    trio.CancelScope(shield=True),
                    trio.move_on_after(1),
                    contextlib.suppress(CdpError),
                ):
                    await session.send("Page.setInterceptFileChooserDialog", {"enabled": False})

    return await run_watched(ctx, page, choose)


UPLOAD_TOOL = Tool(
    "browser_file_upload",
    "Upload files: into a file input by its ref, or into the file chooser that clicking the "
    "element opens. Paths must be under the conversation's dir or a configured upload root.",
    object_schema(
        {
            "ref": REF_FIELD,
            "element": ELEMENT_FIELD,
            "paths": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 4096},
                "minItems": 1,
                "maxItems": 100,
                "description": "Absolute paths of the files (relative: to the conversation's dir)",
            },
            "timeout": TIMEOUT_FIELD,
        },
        ["ref", "paths"],
    ),
    file_upload,
)
