"""The CLI's side of issue 21's profiles and storage state on a running service: `profiles`,
`profiles delete NAME`, `bind ID PROFILE`, `storage-state get ID` and `storage-state put ID`.

Answers print as compact lines (or the raw JSON with `--json`); a storage state is printed or
written as JSON, to a file created 0600 (it carries the sign-in)."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .._errors import InvalidInputError
from .._profile_names import validate_profile_name
from ..conversations import ProfileInfo
from ._client import EXIT_OK, conversation_url, request

_LOADED = {
    "applied": "applied (loaded into its running browser)",
    "pending": "pending (loaded into the browser its next call starts)",
}


def format_profile(info: ProfileInfo) -> str:
    """One compact line: `work in_use held_by=task-42 size=3.3MB modified=2026-11-23T18:01:02Z`."""
    held = info.held_by
    use = (
        "free" if held is None else "in_use held_by=" + (json.dumps(held) if " " in held else held)
    )
    modified = datetime.fromtimestamp(info.modified_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{info.name} {use} size={info.size_bytes / 2**20:.1f}MB modified={modified}"


def profile_url(url: str, name: str) -> str:
    return f"{url}/v1/profiles/{quote(validate_profile_name(name), safe='')}"


def _print_json(payload: object) -> None:
    print(json.dumps(payload, indent=2, ensure_ascii=False))


def list_profiles(url: str, token: str | None, as_json: bool) -> int:
    payload = request("GET", f"{url}/v1/profiles", token)
    if as_json:
        _print_json(payload)
        return EXIT_OK
    rows = payload.get("profiles", [])
    for row in rows:
        fields = {key: value for key, value in row.items() if key != "in_use"}
        print(format_profile(ProfileInfo(**fields)))
    if not rows:
        print("no profiles", file=sys.stderr)
    return EXIT_OK


def delete_profile(url: str, token: str | None, name: str, as_json: bool) -> int:
    """DELETE the profile; idempotent (a missing one is said so, exit 0)."""
    payload = request("DELETE", profile_url(url, name), token)
    if as_json:
        _print_json(payload)
    elif payload.get("existed"):
        print(f"deleted profile {name}")
    else:
        print(f"no profile {name} (nothing deleted)")
    return EXIT_OK


def bind_remote(url: str, token: str | None, conversation_id: str, profile: str) -> Any:
    """PUT the binding; the service's answer. Raises ServiceError (409: held, used, bound)."""
    body = {"profile": validate_profile_name(profile)}
    return request("PUT", conversation_url(url, conversation_id), token, body=body)


def bind(url: str, token: str | None, conversation_id: str, profile: str, as_json: bool) -> int:
    payload = bind_remote(url, token, conversation_id, profile)
    if as_json:
        _print_json(payload)
    else:
        print(f"{conversation_id} bound to profile {payload.get('profile', profile)}")
    return EXIT_OK


def get_storage_state(
    url: str, token: str | None, conversation_id: str, output: Path | None
) -> int:
    """Print the state as JSON, or write it to `output` (mode 0600) and say so."""
    state = request("GET", f"{conversation_url(url, conversation_id)}/storage-state", token)
    text = json.dumps(state, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        sys.stdout.write(text)
        return EXIT_OK
    write_private(output, text)
    cookies = len(state.get("cookies", [])) if isinstance(state, dict) else 0
    origins = len(state.get("origins", [])) if isinstance(state, dict) else 0
    print(f"wrote {output} (mode 0600): {cookies} cookies, {origins} origins")
    return EXIT_OK


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path`, readable by its owner only, even if the file existed: its mode
    is set to 0600 before a byte is written. Raises InvalidInputError naming --output."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", closefd=False) as file:
                file.write(text)
        finally:
            os.close(fd)
    except OSError as exc:
        raise InvalidInputError("--output", f"cannot write {path}: {exc.strerror}") from None


def read_state(source: str) -> object:
    """The JSON in file `source` ('-': stdin). Raises InvalidInputError naming FILE."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise InvalidInputError("FILE", f"cannot read {source}: {reason}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError("FILE", f"{source} is not valid JSON: {exc}") from None


def put_storage_state(
    url: str, token: str | None, conversation_id: str, source: str, as_json: bool
) -> int:
    """Load the state in `source` into the conversation (before or between calls)."""
    state = read_state(source)
    if not isinstance(state, dict):
        raise InvalidInputError("FILE", f"{source} must hold a JSON object (a storage state)")
    payload = request(
        "PUT", f"{conversation_url(url, conversation_id)}/storage-state", token, body=state
    )
    if as_json:
        _print_json(payload)
    else:
        loaded = str(payload.get("loaded"))
        print(f"{conversation_id} storage state {_LOADED.get(loaded, loaded)}")
    return EXIT_OK
