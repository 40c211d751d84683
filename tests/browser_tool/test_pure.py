"""Pure parts of browser_tool: settings from the environment, conversation ids, tool input
validation, URL policy, error wording, the console buffer and the metrics text. No Chrome."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_tool import (
    InvalidInputError,
    Settings,
    ToolError,
    ToolOutput,
    UnknownToolError,
    session_dir_name,
    tool_definitions,
    validate_conversation_id,
)
from browser_tool._metrics import Metrics
from browser_tool.browser._console import ConsoleBuffer, format_remote_args
from browser_tool.tools._eval import format_exception, format_value
from browser_tool.tools._navigate import check_url, describe_net_error
from browser_tool.tools._registry import find_tool, prepare_input

TOOLS = [
    "browser_navigate",
    "browser_eval",
    "browser_take_screenshot",
    "browser_recent_console_logs",
    "browser_clear_console_logs",
    "browser_resize",
    "browser_get_service_workers",
    "browser_get_network_sources",
    "browser_set_offline",
    "read_image",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_press_key",
    "browser_select_option",
    "browser_hover",
    "browser_file_upload",
    "browser_wait_for",
    "browser_navigate_back",
    "browser_navigate_forward",
    "browser_request_human",  # issue 21
    "browser_tabs",  # issue 20
]


def test_tool_definitions_are_the_tools_with_object_schemas() -> None:
    defs = tool_definitions()
    assert [d["name"] for d in defs] == TOOLS
    for d in defs:
        assert d["description"]
        assert d["input_schema"]["type"] == "object"
        assert d["input_schema"]["additionalProperties"] is False
    by_name = {d["name"]: d["input_schema"] for d in defs}
    assert by_name["browser_navigate"]["required"] == ["url"]
    assert by_name["browser_eval"]["required"] == ["expression"]
    assert set(by_name["browser_eval"]["properties"]) == {"expression", "timeout", "await"}
    assert by_name["browser_resize"]["required"] == ["width", "height"]
    assert by_name["read_image"]["required"] == ["path"]
    assert by_name["browser_set_offline"]["required"] == ["offline"]
    assert set(by_name["browser_get_network_sources"]["properties"]) == {"limit", "clear"}
    assert by_name["browser_get_service_workers"]["properties"] == {}
    context = by_name["browser_recent_console_logs"]["properties"]["context"]
    assert context["enum"] == ["page", "service_worker", "worker"]
    # No tool input names a session, a pid or a port (invariant 4).
    for schema in by_name.values():
        for field in schema["properties"]:
            assert not any(word in field for word in ("session", "pid", "port", "conversation"))


@pytest.mark.parametrize("good", ["a", "conv-1", "A.b_c:d-9", "x" * 128, ".."])
def test_valid_conversation_ids(good: str) -> None:
    checked = validate_conversation_id(good)
    assert checked == good
    # A checked id is its own type, which the doors behind the first take without a re-check.
    assert validate_conversation_id(checked) is checked


@pytest.mark.parametrize("bad", ["", "x" * 129, "a/b", "a b", "ü", None, 5, "a\n"])
def test_invalid_conversation_ids_name_the_rule(bad: object) -> None:
    with pytest.raises(InvalidInputError) as info:
        validate_conversation_id(bad)
    assert info.value.field == "conversation_id"
    assert "[A-Za-z0-9._:-]{1,128}" in str(info.value)


def test_session_dir_names_are_safe_and_distinct() -> None:
    names = {session_dir_name(c) for c in ["..", ".", "a.b", "a_b", "a:b", "x" * 128]}
    assert len(names) == 6
    for name in names:
        assert "/" not in name
        assert name not in (".", "..")
        assert len(name) <= 45


def test_settings_from_env_reads_every_kind() -> None:
    env = {
        "BROWSER_TOOL_STATE_DIR": "/tmp/x",
        "BROWSER_TOOL_CHROME": "/opt/chrome",
        "BROWSER_TOOL_IDLE_TIMEOUT": "5m",
        "BROWSER_TOOL_MAX_LIFETIME": "90",
        "BROWSER_TOOL_DEATH_LINK": "off",
        "BROWSER_TOOL_SANDBOX": "auto",
        "BROWSER_TOOL_VIEWPORT_WIDTH": "800",
        "BROWSER_TOOL_ALLOWED_URL_SCHEMES": "File, chrome:",
        "BROWSER_TOOL_READ_IMAGE_ROOTS": "/a:/b",
        "BROWSER_TOOL_DIALOG_CONFIRM": "accept",
    }
    s = Settings.from_env(env)
    assert s.state_dir == Path("/tmp/x")
    assert s.chrome_path == "/opt/chrome"
    assert s.idle_timeout == 300.0
    assert s.max_lifetime == 90.0
    assert s.death_link is False
    assert s.sandbox is None
    assert s.viewport_width == 800
    assert s.allowed_url_schemes == ("file", "chrome")
    assert s.read_image_roots == (Path("/a"), Path("/b"))
    assert s.dialog_accepts("confirm")
    assert not s.dialog_accepts("prompt")
    assert Settings.from_env(env, idle_timeout=7.0).idle_timeout == 7.0


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BROWSER_TOOL_DEATH_LINK", "maybe"),
        ("BROWSER_TOOL_IDLE_TIMEOUT", "soon"),
        ("BROWSER_TOOL_VIEWPORT_WIDTH", "wide"),
        ("BROWSER_TOOL_DIALOG_ALERT", "ignore"),
        ("BROWSER_TOOL_POOL_SIZE", "-1"),
        ("BROWSER_TOOL_POOL_SIZE", "65"),
    ],
)
def test_bad_settings_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        Settings.from_env({name: value})
    assert name in str(info.value) or "BROWSER_TOOL_" in str(info.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BROWSER_TOOL_IDLE_TIMEOUT", "0"),
        ("BROWSER_TOOL_IDLE_TIMEOUT", "-5"),
        ("BROWSER_TOOL_MAX_LIFETIME", "0"),
        ("BROWSER_TOOL_MAX_LIFETIME", "-1"),
    ],
)
def test_a_timeout_that_is_not_positive_names_its_own_variable(name: str, value: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        Settings.from_env({name: value})
    assert info.value.field == name
    assert str(info.value) == f"Invalid input {name!r}: must be a duration greater than 0"


def test_prepare_input_checks_before_anything_runs() -> None:
    nav = find_tool("browser_navigate")
    assert prepare_input(nav, {"url": "https://x"}, 15.0, 600.0) == ({"url": "https://x"}, 15.0)
    assert prepare_input(nav, {"url": "https://x", "timeout": "500ms"}, 15.0, 600.0)[1] == 0.5
    cases: list[tuple[object, str]] = [
        ({}, "'url': is required"),
        ({"url": 5}, "'url': must be a string"),
        ({"url": "https://x", "tab": 1}, "'tab': is not a known field"),
        ({"url": "https://x", "timeout": "15"}, "'timeout'"),
        ({"url": "https://x", "timeout": "11m"}, "at most 10m"),
        ([], "must be a JSON object"),
    ]
    for raw, message in cases:
        with pytest.raises(InvalidInputError, match=message):
            prepare_input(nav, raw, 15.0, 600.0)
    logs = find_tool("browser_recent_console_logs")
    with pytest.raises(InvalidInputError, match="from 1 to 10000"):
        prepare_input(logs, {"limit": 0}, 15.0, 600.0)
    with pytest.raises(InvalidInputError, match="integer"):
        prepare_input(logs, {"limit": True}, 15.0, 600.0)
    with pytest.raises(InvalidInputError) as info:
        prepare_input(logs, {"context": "sw"}, 15.0, 600.0)
    assert info.value.field == "context"
    assert str(info.value) == (
        "Invalid input 'context': must be one of 'page', 'service_worker', 'worker'; got 'sw'"
    )
    offline = find_tool("browser_set_offline")
    with pytest.raises(InvalidInputError, match="'offline': is required"):
        prepare_input(offline, {}, 15.0, 600.0)
    with pytest.raises(InvalidInputError, match="'offline': must be a boolean; got string 'yes'"):
        prepare_input(offline, {"offline": "yes"}, 15.0, 600.0)
    sources = find_tool("browser_get_network_sources")
    with pytest.raises(InvalidInputError, match="'limit': must be from 1 to 1000; got 0"):
        prepare_input(sources, {"limit": 0}, 15.0, 600.0)
    with pytest.raises(InvalidInputError, match="'timeout': is not a known field"):
        prepare_input(find_tool("browser_get_service_workers"), {"timeout": "1s"}, 15.0, 600.0)


@pytest.mark.parametrize(
    "raw",
    [{"width": 0, "height": 720}, {"width": "800", "height": 600}, {"width": 10001, "height": 1}],
)
def test_resize_dimensions_are_checked_with_the_documented_message(raw: dict[str, object]) -> None:
    with pytest.raises(ToolError, match=r"^Invalid dimensions: width and height must be integers"):
        prepare_input(find_tool("browser_resize"), raw, 15.0, 600.0)


def test_unknown_tool() -> None:
    with pytest.raises(UnknownToolError, match="unknown tool 'browser_fly'"):
        find_tool("browser_fly")


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "chrome://settings",
        "view-source:https://x",
        "devtools://devtools/x",
        "javascript:alert(1)",
    ],
)
def test_blocked_schemes(url: str) -> None:
    with pytest.raises(ToolError, match="is not allowed"):
        check_url(url, ())
    assert check_url(url, (url.split(":", maxsplit=1)[0],)) == url


def test_url_without_scheme_is_invalid_input() -> None:
    with pytest.raises(InvalidInputError, match="absolute URL"):
        check_url("localhost:8000/x", ())
    assert check_url(" https://example.com ", ()) == "https://example.com"


def test_net_error_wording() -> None:
    assert (
        describe_net_error("net::ERR_CONNECTION_REFUSED", "http://localhost:8000/x")
        == "net::ERR_CONNECTION_REFUSED: Failed to connect to localhost:8000"
    )
    assert "Could not resolve host nowhere.invalid" in describe_net_error(
        "net::ERR_NAME_NOT_RESOLVED", "https://nowhere.invalid/"
    )
    assert "TLS certificate error" in describe_net_error("net::ERR_CERT_DATE_INVALID", "https://a/")
    assert describe_net_error("net::ERR_FOO", "https://a/").startswith("net::ERR_FOO: Navigation")


def test_exception_and_value_wording() -> None:
    details = {
        "lineNumber": 0,
        "exception": {"description": "ReferenceError: foo is not defined\n    at <anonymous>:1:1"},
    }
    assert format_exception(details) == "ReferenceError: foo is not defined at line 1"
    assert format_exception({"text": "Uncaught", "exception": {"value": 3}}) == "Uncaught 3"
    assert format_value({"type": "number", "value": 2}) == "2"
    assert format_value({"type": "undefined"}) == "undefined"
    assert format_value({"type": "number", "unserializableValue": "NaN"}) == "NaN"
    assert format_value({"type": "string", "value": "ü"}) == '"ü"'


def test_console_buffer_is_bounded_and_numbered() -> None:
    buffer = ConsoleBuffer(3)
    for i in range(5):
        buffer.add("log", f"m{i}", "u:1", when=float(i))
    assert [e.seq for e in buffer.recent(10)] == [3, 4, 5]
    assert buffer.dropped == 2
    assert [e.text for e in buffer.recent(1)] == ["m4"]
    assert buffer.clear() == 3
    assert len(buffer) == 0
    assert (
        format_remote_args(
            [
                {"type": "string", "value": "a"},
                {"type": "number", "value": 1},
                {"type": "object", "description": "Object"},
            ]
        )
        == "a 1 Object"
    )


def test_metrics_render_prometheus_text() -> None:
    metrics = Metrics()
    metrics.inc("browser_tool_kills_total", reason="idle")
    metrics.observe("browser_tool_tool_call_seconds", 0.02, tool="browser_eval")
    text = metrics.render({"browser_tool_sessions": {(("state", "ready"),): 2}})
    assert 'browser_tool_kills_total{reason="idle"} 1' in text
    assert 'browser_tool_tool_call_seconds_bucket{tool="browser_eval",le="0.025"} 1' in text
    assert 'browser_tool_tool_call_seconds_count{tool="browser_eval"} 1' in text
    assert 'browser_tool_sessions{state="ready"} 2' in text
    assert "# TYPE browser_tool_tool_call_seconds histogram" in text


def test_notes_are_appended() -> None:
    out = ToolOutput.error("boom").with_notes(["note a", "note b"])
    assert out.output == "boom\n\nnote a\n\nnote b"
    assert out.is_error


def test_readme_documents_every_setting() -> None:
    import dataclasses

    from browser_tool._settings import env_name

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for field in dataclasses.fields(Settings):
        name = env_name(field.name)
        short = "_" + name.rsplit("_", 1)[-1]
        assert f"`{name}`" in readme or f"/ `{short}`" in readme or f"`{short}`" in readme, name
