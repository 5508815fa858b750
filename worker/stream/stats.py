"""Once a second, what the live page and the gauges show: lag, index size, recovery, a chart point.

The sampler reads what is costly or asynchronous to read (end offsets from the broker, the
stores' sizes on disk) once a second, off the hot path, and keeps five minutes of points
for the live page's chart. :meth:`Sampler.stats` is the page's JSON (``GET /stats``): the
latest rates, totals and the recent duplicate pairs with their texts, read back from
``{p}.events`` while Kafka retains them, and their differing words marked.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import re
import time
import unicodedata
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import faust
from faust.types import TP

from topology import codec
from topology.stages import Topics
from worker.stream.heap import process_memory
from worker.stream.metrics import TEXT_SHOWN, Gauges, Metrics, Pair

log = logging.getLogger("neardup.worker")

_HISTORY_S = 300  # points of the live page's chart: five minutes, one a second
_RATE_WINDOW_S = 5  # rates are averaged over this many seconds
_LATENCY_WINDOW_S = 10.0
_BROKER_TIMEOUT_S = 2.0
_TEXTS_CACHED = 256
# How long the worker's own topics may be missing before it stops: deleted under it (and made
# again), its consumer kept them missing, its peers waited on its partitions, and nothing was
# decided while it answered 503 and they answered healthy.
TOPICS_LOST_S = 30.0
_DISK_EVERY_S = 5.0  # sizes change slowly; reading them walks the stores' files and the heap's free lists
# The page's pairs change at most this often: a person cannot read six pairs a second, and
# rendering one (its texts found, its differences marked) takes about a millisecond of the
# event loop the stages share.
_PAIRS_EVERY_S = 3.0
# Words of Latin scripts, one CJK character at a time, any other visible character alone.
_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\u3400-\u9fff\uf900-\ufaff]+|\S")


class Observed(Protocol):
    """What the sampler reads off a worker besides its metrics."""

    def recovering(self) -> bool: ...

    def index_entries(self) -> int: ...

    def purges_pending(self) -> int: ...

    def state_dirs(self) -> dict[str, Path]: ...

    def memory_bytes(self) -> dict[str, int]: ...

    async def event_text(self, order: int) -> str | None: ...


@dataclass(frozen=True)
class Point:
    """One second of the chart."""

    t: float
    events: int
    verdicts: int
    duplicates: int
    deadletters: int
    corrections: int
    lag: int
    p50_ms: float | None
    p99_ms: float | None


def _known_to_the_consumer(app: faust.App, topic: str) -> bool:
    """Whether the cluster metadata of the worker's Kafka consumer has ``topic`` (True before the
    consumer runs). Faust's own ``topic_partitions`` reads the group's snapshot, which keeps a
    deleted topic; the aiokafka consumer inside Faust's consumer thread follows the metadata."""
    consumer = getattr(getattr(app.consumer, "_thread", None), "_consumer", None)
    return consumer is None or consumer.partitions_for_topic(topic) is not None


class TopicsLost(RuntimeError):
    """The topics this worker reads are gone from the cluster."""


class Sampler:
    """Samples a worker once a second; answers ``/stats`` and ``/healthz`` from the samples."""

    def __init__(
        self,
        app: faust.App,
        metrics: Metrics,
        observed: Observed,
        name: str,
        prefix: str,
        topics_lost: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.app, self.metrics, self.observed, self.name = app, metrics, observed, name
        self._topics_lost, self._missing_since = topics_lost, 0.0
        self.prefix = prefix + "."  # our topics; Faust's own (its assignor's) are not the operator's
        self.started = time.time()
        self.history: deque[Point] = deque(maxlen=_HISTORY_S)
        self.broker_error: str | None = None
        self._lost_at: float | None = None  # since when the broker does not answer
        self.assigned_once = False  # a worker is not consuming before its first assignment
        # The topics it reads: once assigned, one the cluster no longer knows was deleted under
        # it (its consumer then holds no partition of it, which alone reads as an idle worker).
        names = Topics(prefix)
        self._sources = [names.events, names.probes, names.answers]
        self.missing: list[str] = []
        self._texts: OrderedDict[int, str | None] = OrderedDict()  # read back from Kafka
        self._shown: dict[tuple[str, int], dict[str, Any]] = {}  # pairs already rendered
        self._shown_at = 0.0
        self._disk_at = 0.0

    async def run(self) -> None:
        while not self.app.should_stop:
            try:
                await self.sample()
            except Exception:  # the sampler outlives one failed sample; the next one may work
                log.exception("stats: a sample failed")
            await self.app.sleep(1.0)

    async def sample(self) -> None:
        m = self.metrics
        self.check_topics()  # first: with its topics deleted, the broker's silence is not the broker's
        lag = await self._lag()
        sizes, process = m.gauges.state_bytes, m.gauges.process_bytes
        if time.monotonic() - self._disk_at > _DISK_EVERY_S:
            sizes = {store: _disk_bytes(path) for store, path in self.observed.state_dirs().items()}
            process = process_memory()
            self._disk_at = time.monotonic()
        m.gauges = Gauges(
            lag=lag if lag is not None else m.gauges.lag,
            index_entries=self.observed.index_entries(),
            purges_pending=self.observed.purges_pending(),
            state_bytes=sizes,
            memory_bytes=self.observed.memory_bytes(),
            process_bytes=process,
            recovering=self.observed.recovering(),
        )
        p50, p99 = m.recent_latency(_LATENCY_WINDOW_S)
        self.history.append(
            Point(
                time.time(),
                m.events,
                m.verdicts,
                m.duplicates,
                sum(m.deadletters.values()),
                m.corrections,
                sum(m.gauges.lag.values()),
                None if p50 is None else round(p50 * 1000, 1),
                None if p99 is None else round(p99 * 1000, 1),
            )
        )

    async def _lag(self) -> dict[tuple[str, int], int] | None:
        """End offset minus committed offset of every partition this worker consumes; None when
        the broker did not answer (``broker_error`` says why)."""
        consumer = self.app.consumer
        tps = sorted(tp for tp in consumer.assignment() if tp.topic.startswith(self.prefix))
        if not tps:
            self.broker_error = None
            return {}
        try:
            ends = await asyncio.wait_for(consumer.highwaters(*tps), _BROKER_TIMEOUT_S)
        except Exception as exc:
            self._broker_lost(f"broker unreachable: {type(exc).__name__} {exc}".strip())
            return None
        self._broker_back()
        committed = _committed_offsets(consumer, tps)
        return {(tp.topic, tp.partition): max(0, int(ends[tp]) - committed.get(tp, 0)) for tp in tps if tp in ends}

    def _broker_lost(self, error: str) -> None:
        """Say once, in neardup's words, what the client's repeated connection errors mean (a
        worker without partitions asks nothing of the broker meanwhile: that is no news; nor is
        a broker that does not know the worker's topics, deleted under it)."""
        if self._lost_at is None and not self.missing:
            self._lost_at = time.monotonic()
            log.warning(
                "the broker stopped answering (%s): the worker waits for it and goes on where it left off", error
            )
        self.broker_error = error

    def _broker_back(self) -> None:
        if self._lost_at is not None:
            log.warning("the broker answers again, after %.0f s", time.monotonic() - self._lost_at)
        self._lost_at, self.broker_error = None, None

    async def watch_topics(self) -> None:
        """:meth:`check_topics` once a second, for a worker without a web server: nobody reads
        its samples, but with its topics deleted it must still stop."""
        while not self.app.should_stop:
            self.check_topics()
            await self.app.sleep(1.0)

    def check_topics(self) -> None:
        """Which topics the worker reads the cluster no longer has; stop once they stay missing."""
        self.missing = [t for t in self._sources if not _known_to_the_consumer(self.app, t)]
        self._stop_if_topics_lost()

    def _stop_if_topics_lost(self) -> None:
        """Stop the worker once its topics have been missing for :data:`TOPICS_LOST_S`: its state
        is of the topics that were deleted, and restarted it restores from what is there now."""
        if not self.missing or not self.assigned_once:
            self._missing_since = 0.0
            return
        now = time.monotonic()
        self._missing_since = self._missing_since or now
        if now - self._missing_since >= TOPICS_LOST_S and self._topics_lost is not None:
            lost, self._topics_lost = self._topics_lost, None
            lost(
                TopicsLost(
                    f"{', '.join(self.missing)} missing on the cluster for {TOPICS_LOST_S:.0f} s (deleted under this "
                    "worker?): stopping; start it again once the deployment's topics exist"
                )
            )

    def health(self) -> tuple[bool, str]:
        """Healthy once recovered and consuming; otherwise the reason."""
        if not self.assigned_once:
            return False, "starting: waiting for the consumer group to assign partitions"
        if self.observed.recovering():
            return False, "recovering: restoring state from the changelogs"
        if self.broker_error:
            return False, self.broker_error
        if self.missing:
            return False, f"topics missing on the cluster (deleted?): {', '.join(self.missing)}"
        return True, "recovered and consuming"

    async def stats(self) -> dict[str, Any]:
        """The live page's JSON."""
        m, points = self.metrics, list(self.history)
        p50, p99 = m.recent_latency(_LATENCY_WINDOW_S)
        healthy, status = self.health()
        return {
            "worker": self.name,
            "uptime_s": round(time.time() - self.started, 1),
            "healthy": healthy,
            "status": status,
            "events_per_s": _rate(points, "events"),
            "verdicts_per_s": _rate(points, "verdicts"),
            "duplicate_rate": round(m.duplicates / m.verdicts, 4) if m.verdicts else None,
            "totals": {
                "events": m.events,
                "unique": m.unique,
                "duplicates": m.duplicates,
                "corrections": m.corrections,
                "deadletters": sum(m.deadletters.values()),
                "late": m.late,
            },
            "lag": sum(m.gauges.lag.values()),
            "latency_ms": {
                "p50": None if p50 is None else round(p50 * 1000, 1),
                "p99": None if p99 is None else round(p99 * 1000, 1),
            },
            "index_entries": m.gauges.index_entries,
            "state_bytes": dict(m.gauges.state_bytes),
            "memory_bytes": dict(m.gauges.memory_bytes),
            "process_bytes": dict(m.gauges.process_bytes),
            "history": [_chart_point(points, i) for i in range(1, len(points))],
            "pairs": await self._pairs(list(reversed(m.pairs))),
        }

    async def _pairs(self, pairs: list[Pair]) -> list[dict[str, Any]]:
        """The recent pairs, each rendered once (its texts found and its differences marked)."""
        if time.monotonic() - self._shown_at < _PAIRS_EVERY_S:
            return list(self._shown.values())
        self._shown_at = time.monotonic()
        shown = {}
        for pair in pairs:
            key = (pair.event_id, pair.order)
            shown[key] = self._shown.get(key) or await self._pair(pair)
        self._shown = shown
        return list(shown.values())

    async def _pair(self, pair: Pair) -> dict[str, Any]:
        text, original = await self._text(pair.order), await self._text(pair.original_order)
        marked, marked_original = mark_differences(text or "", original or "")
        shown = asdict(pair)
        shown.update(text=marked, original_text=marked_original, retained=text is not None and original is not None)
        return shown

    async def _text(self, order: int) -> str | None:
        """An event's text: from what this worker decided lately, else read back from Kafka."""
        if order in self.metrics.texts:
            return self.metrics.texts[order]
        if order in self._texts:
            self._texts.move_to_end(order)
            return self._texts[order]
        text = await self.observed.event_text(order)
        self._texts[order] = None if text is None else text[:TEXT_SHOWN]
        if len(self._texts) > _TEXTS_CACHED:
            self._texts.popitem(last=False)
        return self._texts[order]


def mark_differences(text: str, original: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both texts as (token, differs) runs: words (or CJK characters) not shared in order are marked."""
    a, b = _tokens(text), _tokens(original)
    a_changed, b_changed = [True] * len(a), [True] * len(b)
    matcher = difflib.SequenceMatcher(None, [t for t, _ in a], [t for t, _ in b], autojunk=False)
    for block in matcher.get_matching_blocks():
        a_changed[block.a : block.a + block.size] = [False] * block.size
        b_changed[block.b : block.b + block.size] = [False] * block.size
    return _runs(text, a, a_changed), _runs(original, b, b_changed)


def _tokens(text: str) -> list[tuple[str, int]]:
    """Tokens compared as normalisation sees them (full-width punctuation is its ASCII twin)."""
    return [(unicodedata.normalize("NFKC", m.group(0)).casefold(), m.start()) for m in _TOKEN.finditer(text)]


def _runs(text: str, tokens: list[tuple[str, int]], changed: list[bool]) -> list[tuple[str, bool]]:
    """The whole text cut into runs of equal marking (spaces join the run before them)."""
    runs: list[tuple[str, bool]] = []
    for i, (_, start) in enumerate(tokens):
        end = tokens[i + 1][1] if i + 1 < len(tokens) else len(text)
        piece = text[start:end] if i else text[:end]
        if runs and runs[-1][1] == changed[i]:
            runs[-1] = (runs[-1][0] + piece, changed[i])
        else:
            runs.append((piece, changed[i]))
    return runs or [(text, False)]


def event_text(raw: bytes | None) -> str | None:
    """The text of an input record read back from ``{p}.events`` (None if gone or unreadable)."""
    if raw is None:
        return None
    try:
        value = codec.loads(raw)
    except Exception:
        return None
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) else None


def _committed_offsets(consumer: Any, tps: list[TP]) -> dict[TP, int]:
    """What Faust's consumer last committed per partition (its own record: the broker's is the same
    once a commit returns, and asking the broker would cost a request per partition)."""
    committed = getattr(consumer, "_committed_offset", {})
    return {tp: int(committed[tp]) for tp in tps if committed.get(tp) is not None}


def _rate(points: list[Point], field: str) -> float:
    recent = points[-(_RATE_WINDOW_S + 1) :]
    if len(recent) < 2:
        return 0.0
    span = recent[-1].t - recent[0].t
    return round((getattr(recent[-1], field) - getattr(recent[0], field)) / span, 1) if span > 0 else 0.0


def _chart_point(points: list[Point], i: int) -> dict[str, Any]:
    now, before = points[i], points[i - 1]
    span = max(now.t - before.t, 1e-3)
    return {
        "t": round(now.t, 1),
        "events_per_s": round((now.events - before.events) / span, 1),
        "duplicates_per_s": round((now.duplicates - before.duplicates) / span, 1),
        "lag": now.lag,
        "p99_ms": now.p99_ms,
    }


def _disk_bytes(path: Path) -> int:
    total = 0
    for file in path.rglob("*"):
        try:
            total += file.stat().st_size if file.is_file() else 0
        except OSError:  # a RocksDB file compacted away while we walked
            continue
    return total
