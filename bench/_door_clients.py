"""The lean clients of `bench.door_costs`: a `browser-tool mcp` subprocess spoken to in
JSON-RPC lines, and a `browser-tool serve` subprocess called through one blocking httpx
keep-alive client (its HTTP API and its MCP endpoints, as plain JSON-RPC POSTs). What they add
to a call is next to nothing, so a door's figure is the door's."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

EVAL = {"expression": "1+1"}
NOOP = "browser_clear_console_logs"
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
_ACCEPT = {"accept": "application/json, text/event-stream"}


def door_env(state_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSER_TOOL_")}
    # No spare Chrome: these measure warm calls, and a pool's refill would only add noise.
    return env | {"BROWSER_TOOL_STATE_DIR": str(state_dir), "BROWSER_TOOL_POOL_SIZE": "0"}


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "browser_tool", "--log-level", "warning", *args]


def listening_url(process: subprocess.Popen[bytes]) -> str:
    assert process.stdout is not None
    return process.stdout.readline().decode().split()[-1]


class StdioLines:
    """A `browser-tool mcp` subprocess spoken to in JSON-RPC lines (the client costs ~nothing)."""

    def __init__(self, state_dir: Path, modern: bool) -> None:
        self.process = subprocess.Popen(
            cli_argv("mcp"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=door_env(state_dir)
        )
        self.ids = itertools.count(1)
        self.meta = {"_meta": _META} if modern else {}
        if not modern:
            hello = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": _META[
                "io.modelcontextprotocol/clientInfo"]}  # fmt: skip
            self.request("initialize", hello)
            self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdout is not None
        self._send({"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params})
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        if "result" not in answer or answer["result"].get("isError"):
            raise RuntimeError(f"{method}: {answer}")
        return answer

    def eval(self) -> None:
        self.request("tools/call", {"name": "browser_eval", "arguments": EVAL, **self.meta})

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(60)


class Service:
    """`browser-tool serve` and the HTTP calls made to it, through one blocking client."""

    def __init__(self, url: str) -> None:
        self.client = httpx.Client(base_url=url, timeout=60)
        response = self._post("/mcp", self._rpc("initialize", {
            "protocolVersion": HANDSHAKE, "capabilities": {},
            "clientInfo": _META["io.modelcontextprotocol/clientInfo"]}), {})  # fmt: skip
        self.session = {"mcp-session-id": response.headers["mcp-session-id"],
                        "mcp-protocol-version": HANDSHAKE}  # fmt: skip
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.client.post("/mcp", json=note, headers={**_ACCEPT, **self.session})
        self.ids = itertools.count(1)

    @staticmethod
    def _rpc(method: str, params: dict[str, Any], request_id: int = 0) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}

    def _post(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        response = self.client.post(path, json=body, headers={**_ACCEPT, **headers})
        if response.status_code != 200 or b'"isError":true' in response.content:
            raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")
        return response

    def tool(self, tool: str, body: dict[str, Any]) -> None:
        response = self.client.post(f"/v1/conversations/bench-http/tools/{tool}", json=body)
        if response.status_code != 200 or response.json()["is_error"]:
            raise RuntimeError(f"{tool}: {response.text[:300]}")

    def healthz(self) -> None:
        self.client.get("/healthz").raise_for_status()

    def mcp_modern(self) -> None:
        params = {"name": "browser_eval", "arguments": EVAL, "_meta": _META}
        headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call",
                   "mcp-name": "browser_eval"}  # fmt: skip
        rpc = self._rpc("tools/call", params, next(self.ids))
        self._post("/v1/conversations/bench-mcp-url/mcp", rpc, headers)

    def mcp_session(self) -> None:
        rpc = self._rpc("tools/call", {"name": "browser_eval", "arguments": EVAL}, next(self.ids))
        self._post("/mcp", rpc, self.session)
