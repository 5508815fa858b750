"""The ``neardup`` argument parser: one subparser per command, each naming its handler in
:mod:`worker.cli.commands`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from worker.cli import commands as handlers
from worker.cli.arguments import positive_rate, record_count, seconds

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
    # No abbreviations: "--stat x" taken as "--state x" made a directory the user never named.
    sub: argparse.ArgumentParser = commands.add_parser(name, allow_abbrev=False, **kwargs)
    _SUBPARSERS[name] = sub
    sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    if kafka:
        sub.add_argument("--bootstrap", help=_BOOTSTRAP_HELP)
    return sub


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="neardup", description="Real-time near-duplicate filter for text streams.", allow_abbrev=False
    )
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
    scan.set_defaults(func=handlers.run_scan)


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
    plan.set_defaults(func=handlers.run_plan)


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
    worker.set_defaults(func=handlers.run_worker)


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
    produce.set_defaults(func=handlers.run_produce)


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
    tail.set_defaults(func=handlers.run_tail)


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
        choices=["create", "describe", "delete", "record-settings"],
        help="create the missing topics, describe them, delete them all ($NEARDUP_TOPIC_PREFIX's, verdicts too), "
        "or record the deployment's settings from these (once: a deployment made before they were recorded)",
    )
    topics.add_argument("--partitions", type=int, help="partitions of created topics (default: $NEARDUP_PARTITIONS)")
    topics.add_argument("--force", action="store_true", help="delete even while workers of the deployment run")
    topics.set_defaults(func=handlers.run_topics)


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
    explain.set_defaults(func=handlers.run_explain)
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
    check.add_argument(
        "--ts",
        help="check TEXT as an event of this time (epoch milliseconds or ISO-8601; default now): "
        "events older than the retention window behind it are no candidates",
    )
    check.add_argument("--url", help=url_help)
    check.add_argument(
        "--state",
        help="check TEXT against the state a `neardup scan --state DIR` kept, with no worker and no Kafka",
    )
    check.add_argument("--json", action="store_true", help="print the worker's JSON")
    check.set_defaults(func=handlers.run_check, parser=check)


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
