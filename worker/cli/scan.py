"""``neardup scan``: the whole decision over a JSON-lines file, without Kafka.

The embedded mode a new user tries first and the reference the streaming worker must
agree with: one verdict line per valid input line, in input order; every bad line goes to
the dead-letter file (and stderr) with its line number and reason, and the run goes on.
"""

from __future__ import annotations

import ctypes
import json
import multiprocessing
import os
import signal
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

from topology.records import Event
from topology.validate import InvalidEvent, parse_event
from worker import collector
from worker.cli.deduplicator import Deduplicator
from worker.cli.inputs import count, open_input, without_bom
from worker.cli.interrupts import deferred, interrupted_cleanly
from worker.cli.paths import check_paths, check_state_dir
from worker.engine.fingerprint import Fingerprint, fingerprint_each, warm_up
from worker.settings import Settings
from worker.state.index import BlockIndex

_FLUSH_EVERY = 1000
CHUNK_LINES = 256  # lines parsed and fingerprinted ahead at a time, and decided in one deferred block
# A line made ready for the decision (:func:`prepare`): its event and its text's fingerprint,
# why it is refused, or None for a blank line.
Prepared = tuple[Event, Fingerprint] | str | None
_AHEAD = 4  # chunks handed to the helper and not yet done: enough that it never waits for this process
_QUEUED = 8  # chunks prepared or under way at most (memory)
# Inputs at least this large are fingerprinted ahead by a helper process (it takes ~1 s to
# start and load its tables, which a small file would not win back).
AHEAD_BYTES = 2 << 20
_SNIPPET_CHARS = 200
_PR_SET_PDEATHSIG = 1  # prctl(2)
# Decoded entries the scan's one index keeps in memory: four times a stream partition's,
# since it holds the whole feed, and copies of a story more than 32 k events apart were
# otherwise read and decoded again.
SCAN_RECENT_ENTRIES = 131_072


def open_index(state_dir: Path, settings: Settings) -> BlockIndex:
    """A scan's index at ``state_dir``, opened as every scan opens it (and ``check --state``)."""
    return BlockIndex(
        state_dir,
        settings.block_plan,
        retention_ms=settings.retention_ms,
        cache_bytes=settings.cache_mb << 20,
        recent_entries=SCAN_RECENT_ENTRIES,
        features=settings.stored_features,
    )


@dataclass
class Summary:
    """What one scan did; printed at the end and returned to callers."""

    events: int = 0
    duplicates: int = 0
    rejected: int = 0
    blank: int = 0  # lines of nothing but spaces: skipped, as the stream's producer skips them
    late: int = 0  # decided, not stored: older than the retention window behind the newest event
    resent: int = 0  # ids seen before, given their first verdict again
    resent_changed: int = 0  # of those, with another text, which is not decided
    seconds: float = 0.0

    @property
    def unique(self) -> int:
        return self.events - self.duplicates

    def line(self) -> str:
        rate = self.events / self.seconds if self.seconds > 0 else 0.0
        blank = f", {count(self.blank, 'blank line')} skipped" if self.blank else ""
        their = "its" if self.resent == 1 else "their"
        resent = f"; {count(self.resent, 're-sent id')} given {their} first verdict again" if self.resent else ""
        if self.resent_changed:
            resent += f" ({self.resent_changed} with another text, which is not decided)"
        return (
            f"{count(self.events, 'event')}: {self.unique} unique, {count(self.duplicates, 'duplicate')}, "
            f"{self.rejected} rejected{blank} in {self.seconds:.1f} s ({rate:,.0f} events/s){resent}"
        )


def scan(
    source: BinaryIO,
    out: IO[bytes],
    dead_letter: Path,
    settings: Settings,
    state_dir: Path,
    progress: IO[str] | None = None,
    total_bytes: int | None = None,
    ahead: bool = False,
    temporary: bool = False,
    summary: Summary | None = None,
) -> Summary:
    """Decide every line of ``source`` against the index in ``state_dir``, counting into
    ``summary`` (a new one if None: an interrupted caller reads how far it got).

    With ``ahead``, a helper process parses and fingerprints chunks of lines while this one
    decides the chunk before them, and prepares a later chunk itself while the next is not
    back (:func:`_prepared`): the decision is sequential (each event against every earlier
    one), the rest is not. A ``temporary`` state, deleted after the scan, is never flushed or
    synced, and released without a flush.
    """
    summary = Summary() if summary is None else summary
    started = time.perf_counter()
    report = _Progress(progress, summary, started, total_bytes)
    with ExitStack() as stack:
        if ahead:  # this process fingerprints too; loaded before the fork, the tables are shared
            warm_up(settings)
        # Forked before RocksDB starts its threads: the helper only fingerprints.
        pool = stack.enter_context(_helper(settings)) if ahead else None
        index = open_index(state_dir, settings)
        stack.callback(index.close, keep=not temporary)
        dedup = Deduplicator(index, settings, durable=not temporary)
        collector.settle()  # a chunk's temporaries die young; the caches it fills are scanned less
        rejects = _Rejects(stack, dead_letter)
        for chunk, ready in _prepared(_chunks(source), pool, settings):
            with deferred():  # its lines written whole and counted, or none
                _decide(chunk, ready, dedup, out, rejects, summary, report)
        dedup.flush()
        summary.late, summary.resent, summary.resent_changed = dedup.late, dedup.resent, dedup.resent_changed
    summary.seconds = time.perf_counter() - started
    report.clear()
    return summary


@dataclass
class _Line:
    """One input line: its number, its size and its bytes."""

    number: int
    size: int
    raw: bytes


def _chunks(source: BinaryIO) -> Iterator[list[_Line]]:
    chunk: list[_Line] = []
    for number, raw in enumerate(without_bom(source), start=1):
        chunk.append(_Line(number, len(raw), raw.rstrip(b"\r\n")))
        if len(chunk) == CHUNK_LINES:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _prepared(
    chunks: Iterator[list[_Line]], pool: Executor | None, settings: Settings
) -> Iterator[tuple[list[_Line], list[Prepared]]]:
    """Each chunk with its lines prepared, in input order. With a helper ``pool``, up to
    ``_AHEAD`` chunks are with it, and while the next one to decide is not back, this process
    prepares a later chunk itself: the fingerprints take whichever core the decision leaves."""
    queued: deque[tuple[list[_Line], Future[list[Prepared]] | list[Prepared]]] = deque()
    more = True
    while True:
        with_helper = sum(isinstance(made, Future) and not made.done() for _, made in queued)
        while more and pool is not None and with_helper < _AHEAD and len(queued) < _QUEUED:
            chunk = next(chunks, None)
            if more := chunk is not None:
                queued.append((chunk, pool.submit(prepare, [line.raw for line in chunk], settings)))
                with_helper += 1
        head = queued[0][1] if queued else None
        if more and (head is None or (isinstance(head, Future) and not head.done())) and len(queued) < _QUEUED:
            chunk = next(chunks, None)
            if more := chunk is not None:
                queued.append((chunk, prepare([line.raw for line in chunk], settings)))
            continue
        if not queued:
            return
        chunk, made = queued.popleft()
        yield chunk, made.result() if isinstance(made, Future) else made


def prepare(raws: list[bytes], settings: Settings) -> list[Prepared]:
    """Each line's event and fingerprint, or why it has none: the work of a chunk that does
    not depend on the events before it (a helper process does it ahead)."""
    parsed = [_parse(raw, settings) for raw in raws]
    prints = iter(fingerprint_each([line.text for line in parsed if isinstance(line, Event)], settings))
    return [_paired(line, next(prints)) if isinstance(line, Event) else line for line in parsed]


def _parse(raw: bytes, settings: Settings) -> Event | str | None:
    if not raw.strip():
        return None
    try:
        return parse_event(raw, settings)
    except InvalidEvent as exc:
        return exc.reason


def _paired(event: Event, probe: Fingerprint | str) -> tuple[Event, Fingerprint] | str:
    """The event and its fingerprint, or, for a text that has none, the reason."""
    return f"fingerprint failed: {probe}" if isinstance(probe, str) else (event, probe)


def _decide(
    chunk: list[_Line],
    ready: list[Prepared],
    dedup: Deduplicator,
    out: IO[bytes],
    rejects: _Rejects,
    summary: Summary,
    report: _Progress,
) -> None:
    """Decide one chunk's events in order; its refused lines, and lines whose text could not be
    fingerprinted, go to the dead letters."""
    flushed = summary.events // _FLUSH_EVERY
    # The chunk's adds in one write, each event still seeing those before it; the exact keys
    # its probes will ask for and its adds append to, read in one multi-get instead of one an event.
    keys = (key for made in ready if isinstance(made, tuple) for key in made[1].probe_keys + made[1].marks)
    with dedup.index.deferred(keys):
        for line, made in zip(chunk, ready, strict=True):
            report.done_bytes += line.size
            if made is None:
                summary.blank += 1
                continue
            if isinstance(made, str):
                summary.rejected += 1
                rejects.write(line.number, made, line.raw)
                continue
            event, probe = made
            verdict, encoded = dedup.decide_encoded(event, probe=probe)
            summary.events += 1
            summary.duplicates += verdict.verdict == "duplicate"
            out.write(encoded + b"\n")
            report.tick()
    if summary.events // _FLUSH_EVERY > flushed:
        dedup.flush()


@contextmanager
def _helper(settings: Settings) -> Iterator[ProcessPoolExecutor]:
    pool = ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("fork"), initializer=_as_helper, initargs=(os.getpid(),)
    )
    # A pool forks at its first task: this one forks it now, before RocksDB starts its
    # threads (the tables are loaded already where the scan warmed them up before).
    pool.submit(warm_up, settings)
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


def _as_helper(scan_pid: int) -> None:
    """The helper leaves Ctrl-C to the scan, which stops it (its own traceback is noise), and
    ends with the scan however the scan ends (Linux: a parent-death signal)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (AttributeError, OSError):  # not Linux: the scan's own shutdown still stops it
        return
    if os.getppid() != scan_pid:  # the scan was gone before the signal was set
        os._exit(1)


class _Rejects:
    """The dead-letter file, opened at the first refused line; each refusal also goes to stderr."""

    def __init__(self, stack: ExitStack, path: Path) -> None:
        self._stack, self._path = stack, path
        self._file: IO[str] | None = None

    def write(self, number: int, reason: str, line: bytes) -> None:
        if self._file is None:
            self._file = self._stack.enter_context(self._path.open("w", encoding="utf-8"))
        self._file.write(json.dumps(_rejection(number, reason, line), ensure_ascii=False) + "\n")
        wipe = "\r\033[K" if sys.stderr.isatty() else ""  # the progress line, if one is drawn
        print(f"{wipe}neardup scan: line {number} rejected: {reason}", file=sys.stderr)


class _Progress:
    """The progress line on a terminal, redrawn at most four times a second."""

    def __init__(self, stream: IO[str] | None, summary: Summary, started: float, total: int | None) -> None:
        self.stream, self.summary, self.started, self.total = stream, summary, started, total
        self.done_bytes = 0
        self._last = started

    def tick(self) -> None:
        if self.stream is None:
            return
        now = time.perf_counter()
        if now - self._last > 0.25:
            self._last = now
            _report(self.stream, self.summary, now - self.started, self.done_bytes, self.total)

    def clear(self) -> None:
        if self.stream is not None:
            self.stream.write("\r\033[K")


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
        f"{summary.rejected} rejected, {rate:,.0f} events/s"
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
    to_stdout = output_path in (None, "", "-")
    dead_letter = Path(dead_letter_path) if dead_letter_path else default_dead_letter(output_path)
    check_paths(input_path, output_path, dead_letter, state)
    if state:
        check_state_dir(Path(state), settings)
    # Verdicts on the same terminal would be drawn over.
    progress = sys.stderr if sys.stderr.isatty() and not (to_stdout and sys.stdout.isatty()) else None
    total = source_path.stat().st_size if source_path.is_file() else None
    summary = Summary()
    with ExitStack() as stack:
        stack.enter_context(interrupted_cleanly(lambda: _interrupted(summary)))
        source = stack.enter_context(open_input(input_path))
        out = sys.stdout.buffer if to_stdout else stack.enter_context(open(str(output_path), "wb"))
        state_dir = Path(state) if state else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="neardup-")))
        ahead = (os.cpu_count() or 1) > 1 and total is not None and total >= AHEAD_BYTES
        scan(source, out, dead_letter, settings, state_dir, progress, total, ahead, not state, summary)
    print(f"neardup scan: {summary.line()}", file=sys.stderr)
    if summary.late:
        print(
            f"neardup scan: {count(summary.late, 'event')} older than the retention window "
            f"({settings.retention_days:g} days) behind the newest event: decided, but not stored, "
            "so no later event can match them",
            file=sys.stderr,
        )
    if summary.rejected:
        print(f"neardup scan: {count(summary.rejected, 'rejected line')} written to {dead_letter}", file=sys.stderr)
        if not summary.events:  # a CSV, a JSON array, another tool's export: say what a line must be
            print(
                f"neardup scan: no line of {input_path} was an event: it takes JSON Lines, one object"
                ' {"id": ..., "text": ..., "ts"?: ...} a line',
                file=sys.stderr,
            )
        return 2
    if dead_letter.is_file():  # a run that rejected nothing leaves an earlier run's file as it was
        print(f"neardup scan: {dead_letter} is an earlier run's: this one rejected no line", file=sys.stderr)
    return 0


def _interrupted(summary: Summary) -> str:
    done = f"{count(summary.events, 'event')} decided, {summary.rejected} rejected"
    return f"the output holds the verdicts of the lines before ({done})"


def default_dead_letter(output_path: str | None) -> Path:
    """``OUTPUT.deadletter.jsonl`` beside a regular output file; otherwise (stdout, ``-``, or a
    device such as /dev/null, where no file can sit beside it) ``./neardup-deadletter.jsonl``."""
    beside = Path(output_path) if output_path and output_path != "-" else None
    if beside is None or (beside.exists() and not beside.is_file()):
        return Path("neardup-deadletter.jsonl")
    return beside.with_suffix(".deadletter.jsonl")
