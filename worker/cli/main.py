"""The ``neardup`` command line: one subcommand per thing a user runs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from worker.cli.arguments import positive_rate, record_count, seconds
from worker.settings import Settings


def _scan(args: argparse.Namespace) -> int:
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


def _plan(args: argparse.Namespace) -> int:
    settings = Settings.from_env(k=args.k, plan=args.plan, expected_fingerprints=args.expected)
    print(settings.block_plan.explain())
    return 0


def _kafka_settings(args: argparse.Namespace, **overrides: Any) -> Settings:
    """The settings of a command that needs Kafka, after checking a broker listens at all."""
    settings = Settings.from_env(bootstrap=args.bootstrap, **overrides)
    settings.connection.check_reachable(settings.connect_timeout_s)
    return settings


def _worker(args: argparse.Namespace) -> int:
    from worker.stream.app import check_stores, state_dir_held, worker_dir, worker_name

    name = worker_name(args.name)  # a bad name fails before anything connects
    settings = Settings.from_env(bootstrap=args.bootstrap, state_dir=args.state, partitions=args.partitions)
    with state_dir_held(worker_dir(settings, name), name):  # nor does a name in use
        check_stores(settings, worker_dir(settings, name))  # nor stores of other settings
        settings.connection.check_reachable(settings.connect_timeout_s)
        return _run_worker(settings, name, args.loglevel)


def _run_worker(settings: Settings, name: str, loglevel: str) -> int:
    import logging

    from worker.cli import topics
    from worker.stream.app import create_app
    from worker.stream.shutdown import BoundedWorker

    _check_web_port(settings)
    topics.ensure(settings)
    topics.check_routing(settings)
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
        print(f"neardup worker {name}: stopped; this run: {metrics.summary()}", file=sys.stderr, flush=True)
    return 0


def _check_web_port(settings: Settings) -> None:
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


def _produce(args: argparse.Namespace) -> int:
    from worker.cli import produce
    from worker.cli.inputs import named_input, open_input

    # The input is opened first: a missing file is the user's to fix before any broker is asked.
    with open_input(named_input(args.input)) as source:
        return produce.run(source, _kafka_settings(args), args.rate, args.topic)


def _tail(args: argparse.Namespace) -> int:
    from worker.cli import tail

    settings = _kafka_settings(args)
    return tail.run(settings, args.from_beginning, args.max, args.timeout, human=args.pretty or None)


def _topics(args: argparse.Namespace) -> int:
    from worker.cli import topics

    return topics.run(_kafka_settings(args, partitions=args.partitions), args.action, args.force)


def _explain(args: argparse.Namespace) -> int:
    from worker.cli import ask

    return ask.explain(_web_url(args), args.id, args.json)


def _check(args: argparse.Namespace) -> int:
    from worker.cli import ask
    from worker.cli.inputs import named_input, open_input

    if (args.text is None) == (args.file is None):
        _SUBPARSERS["check"].error("give a TEXT or --file F.jsonl (one of them)")
    url = _web_url(args)
    if args.text is not None:
        return ask.check(url, args.text, args.json, args.id)
    if args.id is not None:
        _SUBPARSERS["check"].error("--id goes with a TEXT (a --file line carries its own id)")
    with open_input(named_input(args.file)) as source:
        return ask.check_file(url, source, "stdin" if args.file == "-" else args.file, Settings.from_env())


def _web_url(args: argparse.Namespace) -> str:
    """The worker to ask, refused in one line when it cannot be an HTTP address."""
    from worker.cli.ask import worker_url

    if args.url is not None:
        return worker_url(args.url, "--url")
    return worker_url(Settings.from_env().web_address, "NEARDUP_WEB_URL")


_DEBUG_HELP = "show the full traceback of an error"
_BOOTSTRAP_HELP = "Kafka bootstrap servers, host:port[,host:port] (default: $NEARDUP_BOOTSTRAP, else 127.0.0.1:9092)"


class _Parser(argparse.ArgumentParser):
    """Reports unknown arguments with the usage of the subcommand they were given to."""

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            subcommand = _SUBPARSERS.get(getattr(parsed, "command", None) or "", self)
            subcommand.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed


_SUBPARSERS: dict[str, argparse.ArgumentParser] = {}


def _command(commands: Any, name: str, kafka: bool = False, **kwargs: Any) -> argparse.ArgumentParser:
    sub: argparse.ArgumentParser = commands.add_parser(name, **kwargs)
    _SUBPARSERS[name] = sub
    sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    if kafka:
        sub.add_argument("--bootstrap", help=_BOOTSTRAP_HELP)
    return sub


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="neardup", description="Real-time near-duplicate filter for text streams.")
    parser.add_argument("--version", action=_Version)
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=argparse.ArgumentParser)
    _scan_parser(commands)
    _plan_parser(commands)
    _worker_parser(commands)
    _produce_parser(commands)
    _tail_parser(commands)
    _topics_parser(commands)
    _ask_parsers(commands)
    return parser


def _scan_parser(commands: Any) -> None:
    scan = _command(
        commands,
        "scan",
        help="decide every event of a JSON-lines file (no Kafka)",
        description="One verdict line per valid input line, in input order. Bad lines go to the dead-letter "
        "file and stderr; the exit status is 2 if any line was rejected.",
    )
    scan.add_argument("input", help="JSON-lines events {id, text, ts?}; '-' for stdin; 'sample' for the shipped sample")
    scan.add_argument("-o", "--output", help="verdicts file; '-' for stdout (default: stdout)")
    scan.add_argument("--state", help="RocksDB index directory kept between runs (default: a temporary one)")
    scan.add_argument(
        "--dead-letter",
        help="rejected lines (default: OUTPUT.deadletter.jsonl beside a regular OUTPUT file, else "
        "./neardup-deadletter.jsonl, as for stdout or /dev/null)",
    )
    _plan_arguments(scan)
    scan.add_argument("--max-distance", type=int, help="loosest Hamming distance a candidate may have")
    scan.add_argument("--min-resemblance", type=float, help="MinHash resemblance that confirms a duplicate")
    scan.add_argument(
        "--min-long-resemblance", type=float, help="MinHash resemblance that confirms a duplicate of two long texts"
    )
    scan.add_argument("--min-containment", type=float, help="MinHash containment that confirms a duplicate")
    scan.add_argument(
        "--min-teaser-containment", type=float, help="containment that confirms a short text against a long one"
    )
    scan.add_argument("--shingle-n", type=int, help="word n-gram shingle length (1 = unigrams only)")
    scan.set_defaults(func=_scan)


def _plan_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--k", type=int, help="Hamming distance the tables guarantee to find (default: $NEARDUP_K, 3)")
    parser.add_argument("--plan", help="block-table plan: 'auto', or TxB such as 10x25 (default: $NEARDUP_PLAN, auto)")


def _plan_parser(commands: Any) -> None:
    plan = _command(
        commands,
        "plan",
        help="show the block-table plan and why it was chosen",
        description="How the fingerprint is cut into block tables that find every one within --k bits, what "
        "a probe reads at --expected fingerprints, and the other plans. Needs no data and no Kafka.",
    )
    _plan_arguments(plan)
    plan.add_argument("--expected", type=int, help="fingerprints the index is sized for (default: 10,000,000)")
    plan.set_defaults(func=_plan)


def _worker_parser(commands: Any) -> None:
    worker = _command(
        commands,
        "worker",
        kafka=True,
        help="run the streaming worker (Faust) on Kafka",
        description="Creates the topics if needed, then fingerprints, indexes and decides every event of "
        "{prefix}.events. Run several (each with its own --name) to share the partitions.",
    )
    worker.add_argument(
        "--name", help="worker name, names its state directory (default: $NEARDUP_WORKER_NAME or host name)"
    )
    worker.add_argument("--state", help="state directory root (default: $NEARDUP_STATE_DIR)")
    worker.add_argument("--partitions", type=int, help="partitions of created topics (default: $NEARDUP_PARTITIONS)")
    worker.add_argument(
        "--loglevel", default="warning", choices=["debug", "info", "warning", "error"], help="log level (warning)"
    )
    worker.set_defaults(func=_worker)


def _produce_parser(commands: Any) -> None:
    produce = _command(
        commands,
        "produce",
        kafka=True,
        help="send a JSON-lines file to {prefix}.events (key = event id)",
        description="One record per non-blank line, byte for byte (invalid ones too), keyed by its id. "
        "The topic must exist: `neardup topics create` makes it.",
    )
    produce.add_argument("input", help="JSON-lines events; '-' for stdin; 'sample' for the shipped sample")
    produce.add_argument(
        "--rate",
        type=positive_rate,
        help="records per second, each acknowledged before the next, in the file's order "
        "(default: in batches, as fast as possible)",
    )
    produce.add_argument("--topic", help="target topic (default: {prefix}.events)")
    produce.set_defaults(func=_produce)


def _tail_parser(commands: Any) -> None:
    tail = _command(
        commands,
        "tail",
        kafka=True,
        help="follow unique, duplicates, corrections and dead letters",
        description="Readable lines on a terminal, JSON lines when piped.",
    )
    tail.add_argument("--from-beginning", action="store_true", help="start at the oldest record, not the newest")
    tail.add_argument("--max", type=record_count, help="stop after this many records (1 or more)")
    tail.add_argument(
        "--timeout", type=seconds, help="stop after this many seconds without a record (0: once none waits)"
    )
    tail.add_argument("--pretty", action="store_true", help="readable lines even when piped")
    tail.set_defaults(func=_tail)


def _topics_parser(commands: Any) -> None:
    topics = _command(
        commands,
        "topics",
        kafka=True,
        help="create, describe or delete neardup's topics",
        description="A deployment's topics are all named {prefix}.* ($NEARDUP_TOPIC_PREFIX, else neardup).",
    )
    topics.add_argument(
        "action",
        choices=["create", "describe", "delete"],
        help="create the missing topics, describe them, or delete them all ($NEARDUP_TOPIC_PREFIX's, verdicts too)",
    )
    topics.add_argument("--partitions", type=int, help="partitions of created topics (default: $NEARDUP_PARTITIONS)")
    topics.add_argument("--force", action="store_true", help="delete even while workers of the deployment run")
    topics.set_defaults(func=_topics)


def _ask_parsers(commands: Any) -> None:
    url_help = "a worker's URL, any of the group (default: $NEARDUP_WEB_URL, else http://127.0.0.1:$NEARDUP_WEB_PORT)"
    explain = _command(
        commands,
        "explain",
        help="why a running worker gave an event its verdict",
        description="The verdict, its original (text while Kafka retains it), distance, similarity, the "
        "tables or anchors that found it, the chain up to the root original and any correction.",
    )
    explain.add_argument("id", help="event id")
    explain.add_argument("--url", help=url_help)
    explain.add_argument("--json", action="store_true", help="print the worker's JSON")
    explain.set_defaults(func=_explain)
    check = _command(
        commands,
        "check",
        help="the verdict a text would get now (nothing is indexed or published)",
        description="Asks a running worker: its candidates and the verdict the decision rule gives. "
        "With --file, one JSON line per valid input line, in order; each bad line is one line on stderr "
        "naming its number, and the exit status is 2 if any line was bad.",
    )
    check.add_argument("text", nargs="?", help="the text to check")
    check.add_argument(
        "--file", help="JSON-lines events {id?, text, ts?} to check ('-' for stdin, 'sample' for the shipped sample)"
    )
    check.add_argument("--id", help="check TEXT as the event of this id (not a copy of itself)")
    check.add_argument("--url", help=url_help)
    check.add_argument("--json", action="store_true", help="print the worker's JSON")
    check.set_defaults(func=_check)


class _Version(argparse.Action):
    """``--version``, read from the installed package only when asked: importing
    ``importlib.metadata`` was a noticeable part of every command's start."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"neardup {_version()}")
        parser.exit()


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("neardup")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _kafka_failure(exc: BaseException) -> bool:
    """An error of a Kafka client (the broker unreachable, or answering too late)."""
    return type(exc).__module__.startswith(("kafka.", "aiokafka."))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = int(args.func(args))
        sys.stdout.flush()  # a reader gone is found here, not at exit in an "Exception ignored" trace
        return status
    except BrokenPipeError:
        return _stdout_closed()
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.debug or not (isinstance(exc, (OSError, ValueError)) or _kafka_failure(exc)):
            raise
        print(f"neardup {args.command}: {_message(exc)}", file=sys.stderr)
        return 1


def _stdout_closed() -> int:
    """The reader of stdout has gone (``neardup explain x | head -1``): end as SIGPIPE ends a
    command, quietly, 128 + 13; stdout to /dev/null, so the exit's flush cannot fail too."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


def _message(exc: Exception) -> str:
    """The error as one line: a system error on a file reads ``PATH: reason``, not
    ``[Errno 13] Permission denied: 'PATH'``."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror[0].lower()}{exc.strerror[1:]}"
    return str(exc) or type(exc).__name__


if __name__ == "__main__":
    sys.exit(main())
