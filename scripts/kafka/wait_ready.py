"""Wait until a Kafka broker answers a metadata request; used by scripts/kafka-local.

An open TCP port is not enough: a KRaft broker accepts connections before it has caught up
with the metadata log, so readiness is "a client got a cluster description with a broker".
Exit codes: 0 ready, 1 timed out, 2 kafka-python missing, 3 the watched process died.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time


def _alive(pid: int | None) -> bool:
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _answers(bootstrap: str, timeout_ms: int) -> bool:
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaConfigurationError, KafkaError

    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap,
            client_id="neardup-kafka-local-probe",
            request_timeout_ms=timeout_ms,
            bootstrap_timeout_ms=timeout_ms,
            reconnect_backoff_ms=100,
            reconnect_backoff_max_ms=500,
        )
    except KafkaConfigurationError:
        raise
    except (KafkaError, OSError):
        return False
    try:
        return bool(admin.describe_cluster().get("brokers"))
    except (KafkaError, OSError):
        return False
    finally:
        admin.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to keep trying")
    parser.add_argument("--pid", type=int, default=None, help="give up as soon as this process exits")
    args = parser.parse_args(argv)

    try:
        import kafka  # noqa: F401
    except ImportError:
        print(f"{sys.executable} cannot import kafka-python; set PYTHON to an interpreter that can", file=sys.stderr)
        return 2
    logging.getLogger("kafka").setLevel(logging.CRITICAL)

    deadline = time.monotonic() + args.timeout
    while True:
        if not _alive(args.pid):
            return 3
        remaining_ms = int((deadline - time.monotonic()) * 1000)
        if _answers(args.bootstrap, max(500, min(remaining_ms, 3000))):
            return 0
        if time.monotonic() >= deadline:
            return 1
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
