"""tools: the registry and one module per tool. A tool sees only its `ToolContext`.

Imports the `browser` layer (and `cdp` through it) and the foundation modules; nothing above.
"""

from ._context import ConversationAccess, ToolContext
from ._image_fit import FittedImage, ImageLimits, fit_image, read_image_file
from ._image_header import image_size
from ._output import ToolImage, ToolOutput
from ._registry import (
    UnknownToolError,
    find_tool,
    prepare_input,
    run_tool,
    tool_definitions,
)
from ._tool import Tool

__all__ = [
    "ConversationAccess",
    "FittedImage",
    "ImageLimits",
    "Tool",
    "ToolContext",
    "ToolImage",
    "ToolOutput",
    "UnknownToolError",
    "find_tool",
    "fit_image",
    "image_size",
    "prepare_input",
    "read_image_file",
    "run_tool",
    "tool_definitions",
]
