"""Settings come from NEARDUP_* variables, with typed parsing and clear errors."""

from __future__ import annotations

import pytest

from worker.settings import Settings


def test_defaults() -> None:
    settings = Settings.from_env({})
    assert settings.k == 3
    assert settings.retention_days == 7.0
    assert settings.topic_prefix == "neardup"


def test_environment_and_overrides() -> None:
    env = {"NEARDUP_K": "4", "NEARDUP_STRIP_LINKS": "no", "NEARDUP_MIN_RESEMBLANCE": "0.6", "NEARDUP_PLAN": "10x25"}
    settings = Settings.from_env(env, k=2, plan=None)
    assert settings.k == 2
    assert settings.strip_links is False
    assert settings.min_resemblance == 0.6
    assert settings.plan == "10x25"


def test_bad_value_names_the_variable() -> None:
    with pytest.raises(ValueError, match="NEARDUP_K='three'"):
        Settings.from_env({"NEARDUP_K": "three"})


def test_every_setting_is_documented() -> None:
    rows = Settings.documented()
    assert len(rows) == len(Settings.__dataclass_fields__)
    assert all(name.startswith("NEARDUP_") and doc for name, _, doc in rows)
