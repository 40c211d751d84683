"""read_image: an image file from an allowed root, sized for a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from .._errors import InvalidInputError, ToolError
from ._context import ToolContext
from ._image_fit import ImageLimits, describe_fit, read_image_file
from ._output import ToolImage, ToolOutput
from ._roots import find_under_roots, real_roots

_REFUSED = (
    "Refusing to read {raw}: images can only be read from under {roots} "
    "(the operator can add roots with BROWSER_TOOL_READ_IMAGE_ROOTS)"
)


def resolve_allowed(ctx: ToolContext, raw: str) -> Path:
    """The real path of `raw` if it lies under an allowed root; else InvalidInputError (a
    path no file system accepts) or ToolError."""
    if "\0" in raw:
        raise InvalidInputError("path", "must not contain a NUL character")
    roots = real_roots([ctx.dirs().root, ctx.working_dir, *ctx.settings.read_image_roots])
    real = find_under_roots(raw, ctx.working_dir, roots, refused=_REFUSED, kind=Path.exists)
    if real is None:
        raise ToolError(f"Image file not found: {raw}")
    return real


async def read_image(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    path = resolve_allowed(ctx, args["path"])
    limits = ImageLimits.from_settings(ctx.settings)
    with trio.move_on_at(ctx.deadline) as deadline:
        fitted = await trio.to_thread.run_sync(
            read_image_file, path, limits, abandon_on_cancel=True
        )
    if deadline.cancelled_caught:
        raise ctx.timeout_error(f"reading {path}")
    return ToolOutput.ok(
        f"Image from {path} (type: {fitted.media_type}; {describe_fit(fitted)})",
        images=(ToolImage(fitted.media_type, fitted.data, str(path)),),
    )
