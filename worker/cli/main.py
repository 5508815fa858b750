"""The ``neardup`` command line: parse, run one command, and turn a user's error into one line."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from worker.cli.parser import build_parser
from worker.settings import unknown_variables


def _kafka_failure(exc: BaseException) -> bool:
    """An error of a Kafka client (the broker unreachable, or answering too late)."""
    return type(exc).__module__.startswith(("kafka.", "aiokafka."))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for line in unknown_variables(os.environ):
        print(f"neardup {args.command}: {line}", file=sys.stderr)
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
