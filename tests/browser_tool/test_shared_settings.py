"""The settings of shared-browser mode: read from the environment, checked, and named in
every error (pure: no Chrome, no trio)."""

from __future__ import annotations

import pytest

from browser_tool import InvalidInputError, Settings


def test_isolation_defaults_to_a_chrome_per_conversation() -> None:
    settings = Settings.from_env({})
    assert settings.isolation == "process"
    assert settings.contexts_per_browser == 20
    assert settings.shared_browser_linger == 60.0


def test_shared_mode_settings_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "BROWSER_TOOL_ISOLATION": "context",
            "BROWSER_TOOL_CONTEXTS_PER_BROWSER": "5",
            "BROWSER_TOOL_SHARED_BROWSER_LINGER": "2m",
        }
    )
    assert settings.isolation == "context"
    assert settings.contexts_per_browser == 5
    assert settings.shared_browser_linger == 120.0


@pytest.mark.parametrize(
    ("name", "value", "rule"),
    [
        ("BROWSER_TOOL_ISOLATION", "thread", "must be 'process' or 'context'"),
        ("BROWSER_TOOL_CONTEXTS_PER_BROWSER", "0", "must be an integer from 1 to 1000"),
        ("BROWSER_TOOL_CONTEXTS_PER_BROWSER", "1001", "must be an integer from 1 to 1000"),
        ("BROWSER_TOOL_SHARED_BROWSER_LINGER", "-1", "must be a duration of 0 or more"),
    ],
)
def test_a_bad_shared_mode_setting_names_its_variable(name: str, value: str, rule: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        Settings.from_env({name: value})
    assert info.value.field == name
    assert info.value.rule == rule
