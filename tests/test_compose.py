"""docker-compose.yml and the Dockerfile agree with the code they run.

Docker is not available where the tests run, so nothing here starts a container; instead every
fact the compose file states about neardup (broker version and settings, NEARDUP_* variables,
topic names, subcommands, file paths, Python version) is checked against its source of truth.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from packaging.specifiers import SpecifierSet

from topology.topics import topic_map, topics
from worker.cli.parser import build_parser
from worker.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
NEARDUP_SERVICES = ("topics", "worker", "feeder", "tail")
# Where a single-node broker needs 1 instead of Kafka's production default of 3.
SINGLE_BROKER_KEYS = re.compile(r"(replication\.factor|min\.isr|min\.insync\.replicas)$")
# Addresses differ by design between the local broker (127.0.0.1) and the compose network.
ADDRESS_KEYS = {
    "listeners",
    "advertised.listeners",
    "listener.security.protocol.map",
    "controller.quorum.voters",
    "controller.quorum.bootstrap.servers",
    "log.dirs",
}


# --- readers ------------------------------------------------------------------------------


def load_compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def service(name: str) -> dict[str, Any]:
    services = load_compose()["services"]
    assert name in services, f"docker-compose.yml has no service {name!r}"
    return services[name]


def environment(svc: dict[str, Any]) -> dict[str, str]:
    """A service's environment as a dict, whichever of the two compose forms it uses."""
    env = svc.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def command(svc: dict[str, Any]) -> list[str]:
    cmd = svc.get("command")
    assert cmd, "service has no command"
    return shlex.split(cmd) if isinstance(cmd, str) else [str(part) for part in cmd]


def kafka_property(env_name: str) -> str:
    """The server.properties key an apache/kafka image variable sets (KAFKA_A_B___C -> a.b-c)."""
    body = env_name.removeprefix("KAFKA_").lower()
    return body.replace("___", "\0").replace("__", "\1").replace("_", ".").replace("\0", "-").replace("\1", "_")


def kafka_config() -> dict[str, str]:
    """The compose broker's configuration as server.properties keys."""
    env = environment(service("kafka"))
    return {kafka_property(k): v for k, v in env.items() if k.startswith("KAFKA_")}


def local_broker_properties() -> dict[str, str]:
    """scripts/kafka/server.properties.in: the broker every test and CI run uses."""
    props: dict[str, str] = {}
    for line in (ROOT / "scripts" / "kafka" / "server.properties.in").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


def listeners(value: str) -> dict[str, tuple[str, int]]:
    """``NAME://host:port,...`` -> {NAME: (host, port)}."""
    parsed: dict[str, tuple[str, int]] = {}
    for item in value.split(","):
        match = re.fullmatch(r"\s*([A-Za-z0-9_]+)://([^:,]*):(\d+)\s*", item)
        assert match, f"malformed listener {item!r}"
        parsed[match.group(1)] = (match.group(2), int(match.group(3)))
    return parsed


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending = f"{pending} {line}".strip()
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        keyword, _, rest = pending.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
        pending = ""
    return instructions


def instruction(name: str) -> list[str]:
    return [args for keyword, args in dockerfile() if keyword == name]


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in instruction("ENV"):
        for token in shlex.split(args):
            key, sep, value = token.partition("=")
            assert sep, f"use ENV KEY=value, not the legacy form: ENV {args}"
            env[key] = value
    return env


def dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def ignored(relative: str, patterns: list[str]) -> bool:
    """Whether the build context drops ``relative`` or one of its parent directories."""
    path = PurePosixPath(relative)
    candidates = [str(path), *(str(parent) for parent in path.parents if str(parent) != ".")]
    for pattern in patterns:
        bare = pattern.removeprefix("**/")
        for candidate in candidates:
            if fnmatch.fnmatchcase(candidate, pattern) or fnmatch.fnmatchcase(PurePosixPath(candidate).name, bare):
                return True
    return False


def container_to_repo(container_path: str) -> Path:
    """Map a path inside the image back to the repository through the Dockerfile's ``COPY . <dir>``."""
    workdir = instruction("WORKDIR")[-1]
    for args in instruction("COPY"):
        parts = [p for p in args.split() if not p.startswith("--")]
        if parts[0] == ".":
            target = PurePosixPath(workdir if parts[1] in (".", "./") else parts[1])
            relative = PurePosixPath(container_path).relative_to(target)
            assert not ignored(str(relative), dockerignore()), f"{relative} is excluded by .dockerignore"
            return ROOT / relative
    raise AssertionError("the Dockerfile does not COPY the repository into the image")


def settings_of(name: str) -> Settings:
    """What neardup inside that service reads: the image's ENV, overridden by the service's."""
    return Settings.from_env({**dockerfile_env(), **environment(service(name))})


def parse_cli(argv: list[str]) -> Any:
    try:
        return build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits on an unknown subcommand or option
        pytest.fail(f"`neardup {shlex.join(argv)}` is not a valid command line (exit {exc.code})")


# --- broker -------------------------------------------------------------------------------


def test_kafka_image_is_the_version_the_tests_run_against() -> None:
    script = (ROOT / "scripts" / "kafka-local").read_text(encoding="utf-8")
    pinned = re.search(r"^KAFKA_VERSION=([0-9][^\s#]*)$", script, re.MULTILINE)
    assert pinned, "scripts/kafka-local pins no KAFKA_VERSION"
    assert service("kafka")["image"] == f"apache/kafka:{pinned.group(1)}"


def test_kafka_is_a_single_kraft_node() -> None:
    config = kafka_config()
    required = {
        "node.id",
        "process.roles",
        "listeners",
        "advertised.listeners",
        "controller.listener.names",
        "controller.quorum.voters",
        "listener.security.protocol.map",
    }
    assert required <= config.keys(), f"missing: {sorted(required - config.keys())}"
    assert set(config["process.roles"].split(",")) == {"broker", "controller"}

    bound = listeners(config["listeners"])
    protocols = dict(item.split(":") for item in config["listener.security.protocol.map"].split(","))
    assert set(bound) <= set(protocols), "every listener needs a security protocol"
    controller = config["controller.listener.names"]
    assert controller in bound
    advertised = listeners(config["advertised.listeners"])
    assert controller not in advertised, "clients must not be sent to the controller listener"
    assert set(advertised) <= set(bound)
    assert config.get("inter.broker.listener.name", "PLAINTEXT") in advertised

    # The only voter is this node, reached on its own controller port under its service name.
    assert config["controller.quorum.voters"] == f"{config['node.id']}@kafka:{bound[controller][1]}"


def test_kafka_is_configured_like_the_local_test_broker() -> None:
    config = kafka_config()
    local = local_broker_properties()
    single_broker = {key: value for key, value in local.items() if SINGLE_BROKER_KEYS.search(key)}
    assert single_broker, "server.properties.in lost its single-broker settings"
    for key, value in single_broker.items():
        assert config.get(key) == value, f"{key}: compose has {config.get(key)!r}, the test broker {value!r}"
    for key in ("group.initial.rebalance.delay.ms", "auto.create.topics.enable"):
        assert config.get(key) == local[key], f"{key}: compose has {config.get(key)!r}, the test broker {local[key]!r}"
    for key in config.keys() & local.keys() - ADDRESS_KEYS:
        assert config[key] == local[key], f"{key}: compose has {config[key]!r}, the test broker {local[key]!r}"


def test_clients_are_sent_to_a_listener_they_can_reach() -> None:
    advertised = set(listeners(kafka_config()["advertised.listeners"]).values())
    for name in NEARDUP_SERVICES:
        for server in settings_of(name).bootstrap.split(","):
            host, _, port = server.strip().rpartition(":")
            assert (host, int(port)) in advertised, f"{name}: {server} is not an advertised listener"
            assert host == "kafka", f"{name}: inside compose the broker is the `kafka` service, not {host}"


# --- services -----------------------------------------------------------------------------


def test_expected_services_exist() -> None:
    assert {"kafka", *NEARDUP_SERVICES} <= load_compose()["services"].keys()


def test_services_start_in_order() -> None:
    assert service("kafka").get("healthcheck", {}).get("test"), "kafka needs a healthcheck to depend on"
    assert service("topics")["depends_on"]["kafka"]["condition"] == "service_healthy"
    for name in ("worker", "feeder", "tail"):
        assert service(name)["depends_on"]["topics"]["condition"] == "service_completed_successfully", name


def test_neardup_services_run_the_repository_image() -> None:
    for name in NEARDUP_SERVICES:
        build = service(name).get("build")
        context = build if isinstance(build, str) else (build or {}).get("context")
        assert context is not None and (ROOT / context).resolve() == ROOT, f"{name} is not built from this repository"


@pytest.mark.parametrize(
    ("name", "subcommand"),
    [("topics", "topics"), ("worker", "worker"), ("feeder", "produce"), ("tail", "tail")],
)
def test_service_commands_are_real_subcommands(name: str, subcommand: str) -> None:
    args = parse_cli(command(service(name)))
    assert args.command == subcommand
    if name == "topics":
        assert args.action == "create"


def test_feeder_sends_the_shipped_sample_slowly() -> None:
    args = parse_cli(command(service("feeder")))
    assert args.rate and args.rate > 0, "without --rate the demo is over before anyone can watch it"
    assert args.topic is None, "the feeder must write to the topic the worker reads: {prefix}.events"
    sample = container_to_repo(args.input)
    assert sample.is_file(), f"{args.input} is not in the image: {sample} does not exist"
    lines = sample.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    assert len(events) >= 100
    assert all(isinstance(e.get("id"), str) and isinstance(e.get("text"), str) for e in events)


# --- NEARDUP_* settings -------------------------------------------------------------------


def test_neardup_services_are_configured_only_through_settings() -> None:
    known = {variable for variable, _, _ in Settings.documented()}
    sources = {"Dockerfile": dockerfile_env()}
    sources.update({name: environment(service(name)) for name in NEARDUP_SERVICES})
    for source, env in sources.items():
        unknown = {k for k in env if k.startswith("NEARDUP_")} - known
        assert not unknown, f"{source} sets variables Settings does not read: {sorted(unknown)}"
        if source != "Dockerfile":
            foreign = {k for k in env if not k.startswith("NEARDUP_")}
            assert not foreign, f"{source} is configured outside NEARDUP_*: {sorted(foreign)}"
            settings_of(source)  # every value parses as its field's type


def test_connection_and_topology_are_set_explicitly() -> None:
    for name in NEARDUP_SERVICES:
        env = environment(service(name))
        for variable in ("NEARDUP_BOOTSTRAP", "NEARDUP_STATE_DIR", "NEARDUP_TOPIC_PREFIX", "NEARDUP_PARTITIONS"):
            assert env.get(variable), f"{name} does not set {variable}"


def test_all_services_share_one_topology() -> None:
    """The feeder must write where the worker reads, and `topics` must create what both use."""
    layouts = {
        name: (s.topic_prefix, s.partitions, s.replication)
        for name, s in ((name, settings_of(name)) for name in NEARDUP_SERVICES)
    }
    assert len(set(layouts.values())) == 1, f"services disagree on prefix/partitions/replication: {layouts}"
    for name in ("topics", "worker"):
        requested = parse_cli(command(service(name))).partitions
        assert requested in (None, layouts[name][1]), f"{name}: --partitions {requested} overrides NEARDUP_PARTITIONS"


def test_declared_topics_are_valid_on_the_compose_broker() -> None:
    settings = settings_of("topics")
    specs = topics(settings.topic_prefix, settings.partitions, settings.replication)
    brokers = 1
    for spec in specs:
        assert re.fullmatch(r"[A-Za-z0-9._-]{1,249}", spec.name), f"{spec.name!r} is not a legal Kafka topic name"
        assert spec.name.startswith(f"{settings.topic_prefix}.")
        assert spec.replication <= brokers, f"{spec.name}: replication {spec.replication} on {brokers} broker"
        assert spec.partitions == (1 if spec.role == "meta" else settings.partitions)
    assert "events" in topic_map(settings.topic_prefix, settings.partitions, settings.replication)


def test_worker_state_survives_container_recreation() -> None:
    worker = service("worker")
    state_dir = settings_of("worker").state_dir
    mounts = {}
    for volume in worker.get("volumes", []):
        source, _, target = volume.partition(":")
        mounts[target.split(":")[0]] = source
    assert state_dir in mounts, f"NEARDUP_STATE_DIR={state_dir} is not a mounted volume"
    assert mounts[state_dir] in (load_compose().get("volumes") or {}), "the state volume must be a named volume"
    args = parse_cli(command(worker))
    assert args.name, "without --name the state directory is named after the container's random host name"
    chowned = [run for run in instruction("RUN") if "chown" in run and state_dir in run]
    assert chowned, f"the image must create {state_dir} owned by its user, or the volume is root-owned"


# --- image --------------------------------------------------------------------------------


def test_image_python_satisfies_requires_python() -> None:
    base = instruction("FROM")[-1].split()[0]
    match = re.fullmatch(r"python:(\d+\.\d+)(?:\.\d+)?-slim(?:-\w+)?", base)
    assert match, f"expected an official python:X.Y-slim base image, got {base}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert f"{match.group(1)}.0" in SpecifierSet(project["requires-python"])


def test_image_installs_and_runs_the_neardup_command() -> None:
    assert any(re.search(r"\bpip install (--[\w-]+ )*\.(\s|$)", run) for run in instruction("RUN"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "neardup" in project["scripts"]
    assert json.loads(instruction("ENTRYPOINT")[-1]) == ["neardup"]
    default = json.loads(instruction("CMD")[-1])
    assert default == ["worker"]
    parse_cli(default)


def test_image_does_not_run_as_root() -> None:
    users = instruction("USER")
    assert users, "the image must switch to an unprivileged user"
    assert users[-1].split(":")[0] not in ("root", "0")


def test_build_context_leaves_out_local_state() -> None:
    patterns = dockerignore()
    state = Settings().state_dir.removeprefix("./")
    for path in (".venv", ".venv/bin/python", "worker/__pycache__/cli.cpython-311.pyc", ".pytest_cache", state):
        assert ignored(path, patterns), f"{path} would be sent into the image"
    for path in ("pyproject.toml", "worker/cli/main.py", "topology/topics.py", "worker/data/sample_feed.jsonl"):
        assert not ignored(path, patterns), f"{path} is needed to build the image"
