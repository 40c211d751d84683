"""What a tool is: its name, description, JSON input schema and the function that runs it; the
schema helpers every tool module uses. Tool modules define their own `Tool` values next to their
functions; `_registry.py` lists them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ._context import ToolContext
from ._output import ToolOutput

# A tool bounds its own work by `ctx.deadline`; a failure the model should read is raised as a
# BrowserToolError, which `run_tool` turns into an error ToolOutput.
ToolFn = Callable[[ToolContext, dict[str, Any]], Awaitable[ToolOutput]]

TIMEOUT_FIELD = {
    "type": "string",
    "description": 'Timeout duration, like "15s" or "500ms" (default: 15s)',
}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    run: ToolFn
    pre_check: Callable[[dict[str, Any]], object] | None = None

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
