"""tools: the registry and one module per tool. A tool sees only its `ToolContext`.

Imports the `browser` layer (and `cdp` through it) and the foundation modules; nothing above.
"""

from ._context import ToolContext
from ._images import FittedImage, ImageLimits, fit_image, image_size, read_image_file
from ._output import ToolImage, ToolOutput
from ._registry import UnknownToolError, find_tool, prepare_input, run_tool, tool_definitions

__all__ = [
    "FittedImage",
    "ImageLimits",
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
