"""Settings come from NEARDUP_* variables, with typed parsing and clear errors."""

from __future__ import annotations

import pytest

from worker.settings import RANGES, Settings, unknown_variables


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


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"NEARDUP_MIN_RESEMBLANCE": "5"},
            r"min_resemblance \(NEARDUP_MIN_RESEMBLANCE or --min-resemblance\) is 5.0; "
            r"it must be between 0 and 1",
        ),
        (
            {"NEARDUP_MAX_DISTANCE": "-4"},
            r"NEARDUP_MAX_DISTANCE or --max-distance\) is -4; it must be between 0 and 64",
        ),
        ({"NEARDUP_PARTITIONS": "0"}, r"NEARDUP_PARTITIONS or --partitions\) is 0; it must be at least 1"),
        ({"NEARDUP_CACHE_MB": "0"}, r"cache_mb \(NEARDUP_CACHE_MB\) is 0; it must be at least 1"),
        ({"NEARDUP_WEB_PORT": "70000"}, r"NEARDUP_WEB_PORT\) is 70000; it must be between 0 and 65535"),
        ({"NEARDUP_CONNECT_TIMEOUT_S": "-3"}, r"NEARDUP_CONNECT_TIMEOUT_S\) is -3.0; it must be at least 0.1"),
        # A zero window passed every check, then dead-lettered every event while /healthz said healthy.
        (
            {"NEARDUP_RETENTION_DAYS": "-1"},
            r"NEARDUP_RETENTION_DAYS\) is -1.0; it must be between 0.000694444 and 36500",
        ),
        ({"NEARDUP_RETENTION_DAYS": "0"}, r"NEARDUP_RETENTION_DAYS\) is 0.0; it must be between 0.000694444 and 36500"),
        (
            {"NEARDUP_RETENTION_DAYS": "inf"},
            r"NEARDUP_RETENTION_DAYS\) is inf; it must be between 0.000694444 and 36500",
        ),
        # NaN is neither under nor over a bound: a NaN threshold called 48 of the sample's 50 copies unique.
        ({"NEARDUP_MIN_RESEMBLANCE": "nan"}, r"NEARDUP_MIN_RESEMBLANCE or --min-resemblance\) is nan"),
        ({"NEARDUP_RETENTION_DAYS": "nan"}, r"NEARDUP_RETENTION_DAYS\) is nan"),
        # Negative counts reached the fingerprint as OverflowErrors: every event dead-lettered.
        ({"NEARDUP_ANCHOR_WORDS": "-3"}, r"NEARDUP_ANCHOR_WORDS\) is -3; it must be at least 0"),
        ({"NEARDUP_SHORT_BANDS": "-1"}, r"NEARDUP_SHORT_BANDS\) is -1; it must be at least 0"),
        ({"NEARDUP_MIN_FEATURES": "-1"}, r"NEARDUP_MIN_FEATURES\) is -1; it must be at least 0"),
        ({"NEARDUP_EXPECTED_FINGERPRINTS": "-5"}, r"NEARDUP_EXPECTED_FINGERPRINTS\) is -5; it must be at least 1"),
        ({"NEARDUP_TOPIC_PREFIX": ""}, r"NEARDUP_TOPIC_PREFIX='' cannot start a Kafka topic name"),
        ({"NEARDUP_TOPIC_PREFIX": "news feed"}, r"NEARDUP_TOPIC_PREFIX='news feed' cannot start a Kafka topic"),
    ],
)
def test_a_value_out_of_its_range_is_refused_by_name(env: dict[str, str], message: str) -> None:
    """A resemblance of 5 or a distance of -4 would quietly call every event unique."""
    with pytest.raises(ValueError, match=message):
        Settings.from_env(env)


def test_the_ranges_name_real_settings_and_admit_the_defaults() -> None:
    assert set(RANGES) <= set(Settings.__dataclass_fields__)
    defaults = Settings()
    for name, (low, high) in RANGES.items():
        assert low <= getattr(defaults, name) <= (high if high is not None else float("inf"))


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
        ({"NEARDUP_BOOTSTRAP": " , "}, "no Kafka bootstrap server given"),
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


@pytest.mark.parametrize("name", ["../../etc", "..", "a/b", "x" * 65])
def test_a_worker_name_that_is_not_one_path_component_is_refused(name: str) -> None:
    """It names the worker's state directory: "../../etc" put a worker's stores outside it."""
    from worker.stream.app import worker_name

    with pytest.raises(ValueError, match="must be letters, digits"):
        worker_name(name)


def test_a_worker_name_from_the_environment_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from worker.stream.app import worker_name

    monkeypatch.setenv("NEARDUP_WORKER_NAME", "../x")
    with pytest.raises(ValueError, match="NEARDUP_WORKER_NAME"):
        worker_name(None)
    monkeypatch.setenv("NEARDUP_WORKER_NAME", "worker-1.eu_west")
    assert worker_name(None) == "worker-1.eu_west"


def test_a_mistyped_setting_is_named_with_the_setting_it_looks_like() -> None:
    env = {
        "NEARDUP_RETENTON_DAYS": "3",
        "NEARDUP_BOOTSTRAP_SERVERS": "kafka:9092",
        "NEARDUP_COLOUR": "blue",
        "NEARDUP_K": "4",
        "NEARDUP_CACHE_DIR": "/tmp/x",
        "HOME": "/root",
    }
    assert unknown_variables(env) == [
        "NEARDUP_BOOTSTRAP_SERVERS is not a setting of neardup and is ignored (did you mean NEARDUP_BOOTSTRAP?)",
        "NEARDUP_COLOUR is not a setting of neardup and is ignored (README.md, 'Settings', lists them)",
        "NEARDUP_RETENTON_DAYS is not a setting of neardup and is ignored (did you mean NEARDUP_RETENTION_DAYS?)",
    ]
