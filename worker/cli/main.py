"""The ``neardup`` command line: one subcommand per thing a user runs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from worker.settings import Settings


def _scan(args: argparse.Namespace) -> int:
    from worker.cli import scan

    settings = Settings.from_env(
        k=args.k,
        plan=args.plan,
        max_distance=args.max_distance,
        min_resemblance=args.min_resemblance,
        min_containment=args.min_containment,
        shingle_n=args.shingle_n,
    )
    source = scan.default_sample() if args.input == "sample" else args.input
    return scan.run(source, args.output, args.dead_letter, args.state, settings)


def _plan(args: argparse.Namespace) -> int:
    settings = Settings.from_env(k=args.k, plan=args.plan, expected_fingerprints=args.expected)
    print(settings.block_plan.explain())
    return 0


def _ensure_topics(settings: Settings) -> list[str]:
    from topology.topics import create_topics, topics

    specs = topics(settings.topic_prefix, settings.partitions, settings.replication, settings.retention_ms)
    return create_topics(settings.connection.bootstrap, specs, **settings.connection.kafka_python_security())


def _worker(args: argparse.Namespace) -> int:
    import logging

    from worker.stream.app import create_app
    from worker.stream.shutdown import BoundedWorker

    settings = Settings.from_env(state_dir=args.state, partitions=args.partitions)
    _ensure_topics(settings)
    app, counters = create_app(settings, args.name)
    logging.getLogger("neardup").setLevel(args.loglevel.upper())
    worker = BoundedWorker(
        app, loglevel=args.loglevel, quiet=True, deadline_s=settings.shutdown_timeout_s, running=counters.running
    )
    worker.execute_from_commandline()
    return 0


def _produce(args: argparse.Namespace) -> int:
    from worker.cli import produce
    from worker.cli.scan import default_sample

    source = default_sample() if args.input == "sample" else args.input
    return produce.run(source, Settings.from_env(), args.rate, args.topic)


def _tail(args: argparse.Namespace) -> int:
    from worker.cli import tail

    return tail.run(Settings.from_env(), args.from_beginning, args.max, args.timeout, human=args.pretty or None)


def _topics(args: argparse.Namespace) -> int:
    from topology.topics import describe_topics, topics

    settings = Settings.from_env(partitions=args.partitions)
    if args.action == "create":
        for name in _ensure_topics(settings):
            print(f"created {name}")
    specs = topics(settings.topic_prefix, settings.partitions, settings.replication, settings.retention_ms)
    security = settings.connection.kafka_python_security()
    for row in describe_topics(settings.connection.bootstrap, specs, **security):
        if not row["exists"]:
            print(f"{row['name']:<40} missing")
            continue
        config = " ".join(f"{k}={v}" for k, v in sorted(row["config"].items()))
        print(f"{row['name']:<40} partitions={row['partitions']} replication={row['replication']} {config}".rstrip())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neardup", description="Real-time near-duplicate filter for text streams.")
    commands = parser.add_subparsers(dest="command", required=True)

    scan = commands.add_parser(
        "scan",
        help="decide every event of a JSON-lines file (no Kafka)",
        description="One verdict line per valid input line, in input order. Bad lines go to the dead-letter "
        "file and stderr; the exit status is 2 if any line was rejected.",
    )
    scan.add_argument("input", help="JSON-lines events {id, text, ts?}; '-' for stdin; 'sample' for the shipped sample")
    scan.add_argument("-o", "--output", help="verdicts file (default: stdout)")
    scan.add_argument("--state", help="RocksDB index directory kept between runs (default: a temporary one)")
    scan.add_argument(
        "--dead-letter", help="rejected lines (default: OUTPUT.deadletter.jsonl or ./neardup-deadletter.jsonl)"
    )
    scan.add_argument("--k", type=int, help="Hamming distance the tables guarantee (default 3)")
    scan.add_argument("--plan", help="block-table plan: auto or TxB such as 10x25")
    scan.add_argument("--max-distance", type=int, help="loosest Hamming distance a candidate may have")
    scan.add_argument("--min-resemblance", type=float, help="MinHash resemblance that confirms a duplicate")
    scan.add_argument("--min-containment", type=float, help="MinHash containment that confirms a duplicate")
    scan.add_argument("--shingle-n", type=int, help="word n-gram shingle length (1 = unigrams only)")
    scan.set_defaults(func=_scan)

    plan = commands.add_parser("plan", help="show the block-table plan and why it was chosen")
    plan.add_argument("--k", type=int)
    plan.add_argument("--plan")
    plan.add_argument("--expected", type=int, help="expected stored fingerprints")
    plan.set_defaults(func=_plan)

    worker = commands.add_parser(
        "worker",
        help="run the streaming worker (Faust) on Kafka",
        description="Creates the topics if needed, then fingerprints, indexes and decides every event of "
        "{prefix}.events. Run several (each with its own --name) to share the partitions.",
    )
    worker.add_argument(
        "--name", help="worker name, names its state directory (default: $NEARDUP_WORKER_NAME or host name)"
    )
    worker.add_argument("--state", help="state directory root (default: $NEARDUP_STATE_DIR)")
    worker.add_argument("--partitions", type=int, help="partitions of created topics (default: $NEARDUP_PARTITIONS)")
    worker.add_argument("--loglevel", default="warning", choices=["debug", "info", "warning", "error"])
    worker.set_defaults(func=_worker)

    produce = commands.add_parser("produce", help="send a JSON-lines file to {prefix}.events (key = event id)")
    produce.add_argument("input", help="JSON-lines events; '-' for stdin; 'sample' for the shipped sample")
    produce.add_argument("--rate", type=float, help="records per second (default: as fast as possible)")
    produce.add_argument("--topic", help="target topic (default: {prefix}.events)")
    produce.set_defaults(func=_produce)

    tail = commands.add_parser(
        "tail",
        help="follow unique, duplicates, corrections and dead letters",
        description="Readable lines on a terminal, JSON lines when piped.",
    )
    tail.add_argument("--from-beginning", action="store_true", help="start at the oldest record, not the newest")
    tail.add_argument("--max", type=int, help="stop after this many records")
    tail.add_argument("--timeout", type=float, help="stop after this many seconds without a record")
    tail.add_argument("--pretty", action="store_true", help="readable lines even when piped")
    tail.set_defaults(func=_tail)

    topics = commands.add_parser("topics", help="create or describe neardup's topics")
    topics.add_argument("action", choices=["create", "describe"])
    topics.add_argument("--partitions", type=int, help="partitions of created topics (default: $NEARDUP_PARTITIONS)")
    topics.set_defaults(func=_topics)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except (OSError, ValueError) as exc:
        print(f"neardup: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
