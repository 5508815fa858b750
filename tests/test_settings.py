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


def test_one_connection_serves_every_client() -> None:
    settings = Settings.from_env(
        {
            "NEARDUP_BOOTSTRAP": " k1:9093, k2:9093 ,",
            "NEARDUP_SECURITY_PROTOCOL": "sasl_ssl",
            "NEARDUP_SASL_MECHANISM": "SCRAM-SHA-512",
            "NEARDUP_SASL_USERNAME": "u",
            "NEARDUP_SASL_PASSWORD": "p",
        }
    )
    connection = settings.connection
    assert connection is settings.connection  # derived once
    assert connection.faust_broker() == ["kafka://k1:9093", "kafka://k2:9093"]
    python, aio = connection.kafka_python(), connection.aiokafka()
    for options in (python, aio):
        assert options["bootstrap_servers"] == ["k1:9093", "k2:9093"]
        assert options["security_protocol"] == "SASL_SSL"
        assert (options["sasl_mechanism"], options["sasl_plain_username"], options["sasl_plain_password"]) == (
            "SCRAM-SHA-512",
            "u",
            "p",
        )
    assert aio["ssl_context"] is not None
    assert "bootstrap_servers" not in connection.kafka_python_security()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"NEARDUP_BOOTSTRAP": " , "}, "names no broker"),
        ({"NEARDUP_SECURITY_PROTOCOL": "SASL_PLAINTEXT"}, "needs NEARDUP_SASL_MECHANISM"),
        ({"NEARDUP_SECURITY_PROTOCOL": "TLS"}, "unknown NEARDUP_SECURITY_PROTOCOL"),
    ],
)
def test_a_connection_that_cannot_work_is_refused_with_the_setting_to_fix(env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _ = Settings.from_env(env).connection


def test_the_block_plan_is_parsed_once() -> None:
    settings = Settings(plan="10x25")
    assert settings.block_plan is settings.block_plan
    assert len(settings.block_plan.tables) == 10
