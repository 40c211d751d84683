"""The storage state's shape: Playwright's `storage_state` JSON, checked and normalised, and
its cookies to and from CDP's. Pure: no trio, no I/O.

    {"cookies": [{"name", "value", "domain", "path", "expires", "httpOnly", "secure",
                  "sameSite"}],
     "origins": [{"origin": "https://example.com", "localStorage": [{"name", "value"}]}]}

`expires` is seconds since the epoch, -1 for a session cookie; a missing `sameSite` (Chrome
leaves it out when the cookie set none) is "Lax", as Chrome treats it. Unknown keys (Playwright
writes a few of its own) are dropped, not refused.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlsplit

from .._errors import InvalidInputError

MAX_ORIGINS = 200  # each costs a visit of the scratch page
SAME_SITE = ("Strict", "Lax", "None")

StorageState = dict[str, Any]


def parse_storage_state(value: object) -> StorageState:
    """A storage state checked and normalised (defaults filled in, unknown keys dropped).
    Raises InvalidInputError naming the field (as `cookies[2].sameSite`) and the rule."""
    if not isinstance(value, dict):
        raise InvalidInputError("storage_state", "must be a JSON object {cookies, origins}")
    cookies = _list(value, "cookies", "storage_state")
    origins = _list(value, "origins", "storage_state")
    if len(origins) > MAX_ORIGINS:
        raise InvalidInputError("origins", f"at most {MAX_ORIGINS} origins")
    seen: set[str] = set()
    parsed_origins = []
    for i, entry in enumerate(origins):
        parsed = _origin_entry(entry, f"origins[{i}]")
        if parsed["origin"] in seen:
            raise InvalidInputError(f"origins[{i}].origin", "names an origin already given")
        seen.add(parsed["origin"])
        parsed_origins.append(parsed)
    return {
        "cookies": [_cookie(c, f"cookies[{i}]") for i, c in enumerate(cookies)],
        "origins": parsed_origins,
    }


def _list(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    value = obj.get(key, [])
    if not isinstance(value, list):
        raise InvalidInputError(
            key if where == "storage_state" else f"{where}.{key}", "must be a list"
        )
    return value


def _str(obj: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = obj.get(key, default)
    if not isinstance(value, str):
        rule = "must be a string" + ("" if default is not None else " (required)")
        raise InvalidInputError(f"{where}.{key}", rule, value)
    return value


def _bool(obj: dict[str, Any], key: str, where: str) -> bool:
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise InvalidInputError(f"{where}.{key}", "must be true or false", value)
    return value


def _cookie(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInputError(where, "must be an object {name, value, domain, path, ...}")
    domain = _str(value, "domain", where)
    if not domain.strip(".") or any(c in domain for c in "/ ;\0"):
        raise InvalidInputError(f"{where}.domain", "must be a host name, as 'example.com'")
    path = _str(value, "path", where, "/")
    if not path.startswith("/"):
        raise InvalidInputError(f"{where}.path", "must start with '/'", path)
    expires = value.get("expires", -1)
    if (
        isinstance(expires, bool)
        or not isinstance(expires, int | float)
        or not math.isfinite(expires)
        or (expires != -1 and not 0 < expires < 1e11)
    ):
        raise InvalidInputError(
            f"{where}.expires", "must be -1 (a session cookie) or seconds since the epoch", expires
        )
    same_site = _str(value, "sameSite", where, "Lax")
    if same_site not in SAME_SITE:
        raise InvalidInputError(f"{where}.sameSite", "must be 'Strict', 'Lax' or 'None'", same_site)
    name, text = _str(value, "name", where), _str(value, "value", where)
    _check_cookie_text(name, text, where)
    return {
        "name": name,
        "value": text,
        "domain": domain,
        "path": path,
        "expires": float(expires) if expires != -1 else -1,
        "httpOnly": _bool(value, "httpOnly", where),
        "secure": _bool(value, "secure", where),
        "sameSite": same_site,
    }


def _check_cookie_text(name: str, value: str, where: str) -> None:
    """Chrome's rules for a cookie's name and value, checked here so that a state kept for the
    next launch is refused now, naming the field, rather than failing that launch's call."""
    for key, text, banned in (("name", name, _BANNED_IN_NAME), ("value", value, ";")):
        bad = next((c for c in text if c in banned or ord(c) < 0x20 or ord(c) == 0x7F), None)
        if bad is not None:
            rule = "must hold no control character, no ';'" + (", no '='" if key == "name" else "")
            raise InvalidInputError(f"{where}.{key}", f"{rule}; got {bad!r} in it")
    if not name and not value:
        raise InvalidInputError(f"{where}.name", "a cookie needs a name or a value")


_BANNED_IN_NAME = ";="


def normal_origin(text: str) -> str | None:
    """`text` as an http(s) origin (`scheme://host[:port]`, lower case), or None."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    if parts.username or parts.password or any(c in parts.hostname for c in " \0/\\"):
        return None
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    default = {"http": 80, "https": 443}[parts.scheme]
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


def _origin_entry(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInputError(where, "must be an object {origin, localStorage}")
    text = _str(value, "origin", where)
    origin = normal_origin(text)
    if origin is None or text.rstrip("/") != origin:
        raise InvalidInputError(
            f"{where}.origin", "must be an http(s) origin, as 'https://example.com:8443'", text
        )
    items = []
    for i, item in enumerate(_list(value, "localStorage", where)):
        at = f"{where}.localStorage[{i}]"
        if not isinstance(item, dict):
            raise InvalidInputError(at, "must be an object {name, value}")
        items.append({"name": _str(item, "name", at), "value": _str(item, "value", at)})
    return {"origin": origin, "localStorage": items}


# ---- cookies ---------------------------------------------------------------------------------


def cookie_from_cdp(cookie: dict[str, Any]) -> dict[str, Any]:
    expires = cookie.get("expires", -1)
    session = cookie.get("session") or not isinstance(expires, int | float) or expires <= 0
    return {
        "name": str(cookie.get("name", "")),
        "value": str(cookie.get("value", "")),
        "domain": str(cookie.get("domain", "")),
        "path": str(cookie.get("path", "/")),
        "expires": -1 if session else expires,
        "httpOnly": bool(cookie.get("httpOnly", False)),
        "secure": bool(cookie.get("secure", False)),
        # Chrome leaves sameSite out when the cookie set none; it then acts as Lax.
        "sameSite": cookie.get("sameSite") if cookie.get("sameSite") in SAME_SITE else "Lax",
    }


def cookie_to_cdp(cookie: dict[str, Any]) -> dict[str, Any]:
    param = {k: cookie[k] for k in ("name", "value", "domain", "path", "httpOnly", "secure")}
    param["sameSite"] = cookie["sameSite"]
    if cookie["expires"] != -1:
        param["expires"] = cookie["expires"]
    return param
