"""``neardup scan``: the whole decision over a JSON-lines file, without Kafka.

The embedded mode a new user tries first and the reference the streaming worker must
agree with: one verdict line per valid input line, in input order; every bad line goes to
the dead-letter file (and stderr) with its line number and reason, and the run goes on.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

from topology.validate import InvalidEvent, parse_event
from worker.cli.deduplicator import Deduplicator
from worker.settings import Settings
from worker.state.index import BlockIndex

_FLUSH_EVERY = 1000
_SNIPPET_CHARS = 200


@dataclass
class Summary:
    """What one scan did; printed at the end and returned to callers."""

    events: int = 0
    duplicates: int = 0
    rejected: int = 0
    seconds: float = 0.0

    @property
    def unique(self) -> int:
        return self.events - self.duplicates

    def line(self) -> str:
        rate = self.events / self.seconds if self.seconds > 0 else 0.0
        return (
            f"{self.events} events: {self.unique} unique, {self.duplicates} duplicates, "
            f"{self.rejected} rejected in {self.seconds:.1f} s ({rate:,.0f} docs/s)"
        )


def scan(
    source: BinaryIO,
    out: IO[str],
    dead_letter: Path,
    settings: Settings,
    state_dir: Path,
    progress: IO[str] | None = None,
    total_bytes: int | None = None,
) -> Summary:
    """Decide every line of ``source`` against the index in ``state_dir``."""
    plan = settings.block_plan
    summary = Summary()
    started = time.perf_counter()
    last_report = started
    done_bytes = 0
    with ExitStack() as stack:
        retention_ms = settings.retention_ms
        index = stack.enter_context(
            BlockIndex(state_dir, plan, retention_ms=retention_ms, cache_bytes=settings.cache_mb << 20)
        )
        dedup = Deduplicator(index, settings)
        rejects: IO[str] | None = None
        for number, raw in enumerate(source, start=1):
            done_bytes += len(raw)
            line = raw.rstrip(b"\r\n")
            if not line.strip():
                continue
            try:
                event = parse_event(line, settings)
            except InvalidEvent as exc:
                summary.rejected += 1
                if rejects is None:
                    rejects = stack.enter_context(dead_letter.open("w", encoding="utf-8"))
                rejects.write(json.dumps(_rejection(number, exc.reason, line), ensure_ascii=False) + "\n")
                print(f"neardup scan: line {number} rejected: {exc.reason}", file=sys.stderr)
                continue
            verdict = dedup.decide(event)
            summary.events += 1
            summary.duplicates += verdict.verdict == "duplicate"
            out.write(json.dumps(verdict.to_dict(), ensure_ascii=False) + "\n")
            if summary.events % _FLUSH_EVERY == 0:
                dedup.flush()
            if progress is not None and time.perf_counter() - last_report > 0.25:
                last_report = time.perf_counter()
                _report(progress, summary, last_report - started, done_bytes, total_bytes)
        dedup.flush()
    summary.seconds = time.perf_counter() - started
    if progress is not None:
        progress.write("\r\033[K")
    return summary


def _rejection(number: int, reason: str, line: bytes) -> dict[str, object]:
    return {
        "line": number,
        "reason": reason,
        "bytes": len(line),
        "raw": line[: _SNIPPET_CHARS * 4].decode("utf-8", "replace")[:_SNIPPET_CHARS],
    }


def _report(stream: IO[str], summary: Summary, elapsed: float, done: int, total: int | None) -> None:
    rate = summary.events / elapsed if elapsed > 0 else 0.0
    share = f"{100 * done / total:5.1f}% " if total else ""
    stream.write(
        f"\r\033[K{share}{summary.events} events, {summary.duplicates} duplicates, "
        f"{summary.rejected} rejected, {rate:,.0f} docs/s"
    )
    stream.flush()


def run(
    input_path: str,
    output_path: str | None,
    dead_letter_path: str | None,
    state: str | None,
    settings: Settings,
) -> int:
    """CLI entry: returns the exit status (2 when lines were rejected)."""
    source_path = Path(input_path)
    if output_path:
        dead_default = Path(output_path).with_suffix(".deadletter.jsonl")
    else:
        dead_default = Path("neardup-deadletter.jsonl")
    dead_letter = Path(dead_letter_path) if dead_letter_path else dead_default
    progress = sys.stderr if sys.stderr.isatty() else None
    total = source_path.stat().st_size if source_path.is_file() else None
    with ExitStack() as stack:
        source = stack.enter_context(
            open(sys.stdin.fileno(), "rb", closefd=False) if input_path == "-" else source_path.open("rb")
        )
        out = stack.enter_context(open(output_path, "w", encoding="utf-8")) if output_path else sys.stdout
        state_dir = Path(state) if state else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="neardup-")))
        summary = scan(source, out, dead_letter, settings, state_dir, progress, total)
    print(f"neardup scan: {summary.line()}", file=sys.stderr)
    if summary.rejected:
        print(f"neardup scan: {summary.rejected} rejected lines written to {dead_letter}", file=sys.stderr)
        return 2
    return 0


def default_sample() -> str:
    """The small real sample corpus shipped with the package."""
    return os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "sample_feed.jsonl")
