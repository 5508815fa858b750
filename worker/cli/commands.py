"""What each ``neardup`` subcommand does with its parsed arguments: the heavy imports happen
here, inside the command that needs them, so ``neardup --help`` or ``neardup scan`` never
pays for Faust."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from worker.settings import Settings


def run_scan(args: argparse.Namespace) -> int:
    from worker.cli import scan
    from worker.cli.inputs import named_input

    settings = Settings.from_env(
        k=args.k,
        plan=args.plan,
        max_distance=args.max_distance,
        min_resemblance=args.min_resemblance,
        min_long_resemblance=args.min_long_resemblance,
        min_containment=args.min_containment,
        min_teaser_containment=args.min_teaser_containment,
        shingle_n=args.shingle_n,
    )
    return scan.run(named_input(args.input), args.output, args.dead_letter, args.state, settings)


def run_plan(args: argparse.Namespace) -> int:
    settings = Settings.from_env(k=args.k, plan=args.plan, expected_fingerprints=args.expected)
    print(settings.block_plan.explain())
    return 0


def _kafka_settings(args: argparse.Namespace, **overrides: Any) -> Settings:
    """The settings of a command that needs Kafka, after checking a broker listens at all."""
    settings = Settings.from_env(bootstrap=args.bootstrap, **overrides)
    settings.connection.check_reachable(settings.connect_timeout_s)
    return settings


def run_worker(args: argparse.Namespace) -> int:
    from worker.stream.app import check_stores, state_dir_held, worker_dir, worker_name

    name = worker_name(args.name)  # a bad name fails before anything connects
    settings = Settings.from_env(bootstrap=args.bootstrap, state_dir=args.state, partitions=args.partitions)
    with state_dir_held(worker_dir(settings, name), name):  # nor does a name in use
        has_stores = check_stores(settings, worker_dir(settings, name))  # nor stores of other settings
        settings.connection.check_reachable(settings.connect_timeout_s)
        return _start_worker(settings, name, args.loglevel, has_stores)


def _start_worker(settings: Settings, name: str, loglevel: str, has_stores: bool) -> int:
    import logging

    from worker.cli import deployment, topics
    from worker.cli.inputs import count
    from worker.stream.app import create_app, worker_dir
    from worker.stream.shutdown import BoundedWorker

    check_web_port(settings)
    created = topics.ensure(settings)
    topics.check_routing(settings)
    recorded = deployment.check(settings, has_stores)  # nor a deployment of other settings
    if created:  # said once it is sure to start: a refusal stays one line
        # A mistyped prefix or cluster makes a deployment of its own.
        new = "a new deployment" if len(created) == len(topics.declared(settings)) else "missing topics of"
        print(
            f"neardup worker {name}: created {new} {settings.topic_prefix} ({count(len(created), 'topic')})",
            file=sys.stderr,
        )
    other = deployment.stores_of_another(worker_dir(settings, name), settings.topic_prefix, recorded.get("id"))
    if other:
        print(
            f"neardup worker {name}: its stores were of {other}: removed; they are rebuilt from this "
            "deployment's changelogs",
            file=sys.stderr,
            flush=True,
        )
    app, metrics = create_app(settings, name)
    logging.getLogger("neardup").setLevel(loglevel.upper())
    # At the default log level nothing else says the worker came up, or where to look at it.
    web = f"{settings.web_address}/ (live page, /metrics, /healthz)" if settings.web_port else "off"
    print(
        f"neardup worker {name}: reading {settings.topic_prefix}.events from "
        f"{settings.connection.bootstrap} in group {app.conf.id}; state in {app.conf.datadir}; HTTP {web}",
        file=sys.stderr,
        flush=True,
    )
    worker = BoundedWorker(
        app, loglevel=loglevel, quiet=True, deadline_s=settings.shutdown_timeout_s, running=metrics.running
    )
    try:
        worker.execute_from_commandline()
    finally:  # as the start line: an operator sees what the run did without raising the log level
        why = worker.stopped_by()
        print(f"neardup worker {name}: stopped {why}; this run: {metrics.summary()}", file=sys.stderr, flush=True)
    return 0


def check_web_port(settings: Settings) -> None:
    """A taken port or a wrong address fails now, in one line, not after the worker has joined its group."""
    import errno
    import socket

    if not settings.web_port:
        return
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((settings.web_bind, settings.web_port))
        except OSError as exc:
            hint = (
                "another worker on this host needs its own NEARDUP_WEB_PORT (0 = no HTTP server)"
                if exc.errno == errno.EADDRINUSE
                else "NEARDUP_WEB_BIND must be an address of this host (0.0.0.0 = every interface)"
            )
            reason = exc.strerror or str(exc)
            raise OSError(f"cannot serve HTTP on {settings.web_bind}:{settings.web_port} ({reason}); {hint}") from None


def run_produce(args: argparse.Namespace) -> int:
    from worker.cli import produce
    from worker.cli.inputs import named_input, open_input

    # The input is opened first: a missing file is the user's to fix before any broker is asked.
    with open_input(named_input(args.input)) as source:
        return produce.run(source, _kafka_settings(args), args.rate, args.topic)


def run_tail(args: argparse.Namespace) -> int:
    from worker.cli import tail

    settings = _kafka_settings(args)
    return tail.run(settings, args.from_beginning, args.max, args.timeout, human=args.pretty or None)


def run_topics(args: argparse.Namespace) -> int:
    from worker.cli import topics

    return topics.run(_kafka_settings(args, partitions=args.partitions), args.action, args.force)


def run_explain(args: argparse.Namespace) -> int:
    from worker.cli import ask

    return ask.explain(_web_url(args), args.id, args.json)


def run_check(args: argparse.Namespace) -> int:
    from topology.validate import parse_ts
    from worker.cli import ask
    from worker.cli.inputs import named_input, open_input

    if (args.text is None) == (args.file is None):
        args.parser.error("give a TEXT or --file F.jsonl (one of them)")
    ts = None if args.ts is None else parse_ts(int(args.ts) if args.ts.strip().isdigit() else args.ts)
    if args.state is not None:
        if args.file is not None or args.id is not None or args.url is not None:
            args.parser.error("--state checks a TEXT against a scan's state; --file, --id and --url ask a worker")
        return ask.check_state(Path(args.state), args.text, args.json, Settings.from_env(), ts)
    url = _web_url(args)
    if args.text is not None:
        return ask.check(url, args.text, args.json, args.id, ts=ts)
    if args.id is not None or args.ts is not None:
        args.parser.error("--id and --ts go with a TEXT (a --file line carries its own id and ts)")
    with open_input(named_input(args.file)) as source:
        return ask.check_file(url, source, "stdin" if args.file == "-" else args.file, Settings.from_env())


def _web_url(args: argparse.Namespace) -> str:
    """The worker to ask, refused in one line when it cannot be an HTTP address."""
    from worker.cli.ask import worker_url

    if args.url is not None:
        return worker_url(args.url, "--url")
    return worker_url(Settings.from_env().web_address, "NEARDUP_WEB_URL")
