"""What a worker did: counted on the hot path, read by its log line, ``/metrics`` and ``/stats``.

Counts are plain integers, bumped a few times per batch and turned into Prometheus metrics
only when scraped (:class:`_Collector`): they cost nothing between scrapes and are exact.
Verdicts, corrections and verdict-stage dead letters are counted when the broker has
acknowledged (or, exactly once, committed) their records, so after a replay
``neardup_verdicts_total`` equals the records on the output topics. The two histograms are
prometheus_client's own. Gauges that need the consumer or the stores (lag, index size,
recovering) are sampled once a second by :mod:`worker.stream.stats` and read from there.
"""

from __future__ import annotations

import re
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Histogram, disable_created_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from topology.stages import ORDER_TS_SHIFT
from topology.verdicts import Output

# Verdict latency buckets (seconds): the hold is tens of milliseconds, a backlog seconds.
_LATENCY_BUCKETS = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_STAGE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
_RECENT_LATENCIES = 4096  # samples kept for the live page's p50/p99
_RECENT_PAIRS = 6  # duplicate pairs kept for the live page
_DECIDED_MAX = 200_000  # verdicts decided and not yet sent whose latency is still to be measured
_TEXTS_KEPT = 2048  # texts of recently decided events, so the live page's pairs need no Kafka read
TEXT_SHOWN = 1000  # characters of a text the live page shows


@dataclass(frozen=True)
class Pair:
    """A published duplicate and its original, as the live page shows them."""

    event_id: str
    order: int
    original_id: str
    original_order: int
    distance: int
    similarity: float
    sent: float  # wall-clock seconds


@dataclass
class Gauges:
    """What the once-a-second sampler last read off the consumer and the stores."""

    lag: dict[tuple[str, int], int] = field(default_factory=dict)
    index_entries: int = 0
    purges_pending: int = 0
    state_bytes: dict[str, int] = field(default_factory=dict)
    memory_bytes: dict[str, int] = field(default_factory=dict)  # RocksDB's: memtables, block cache
    process_bytes: dict[str, int] = field(default_factory=dict)  # resident, C heap in use and free
    recovering: bool = False


class Metrics:
    """One worker's counts, histograms and recent verdicts, and a registry exporting them."""

    def __init__(self, histograms: bool = True) -> None:
        self.events = 0
        self.unique = 0
        self.duplicates = 0
        self.corrections = 0
        self.deadletters: Counter[str] = Counter()
        self.republished = 0  # re-sent ids: their first verdict published again
        self.resent_changed = 0  # of those, re-sent with another text (which is not decided)
        self.replayed = 0  # intros of inputs already answered, read again (at-least-once delivery)
        # Events the index did not store: older than the retention window behind the newest it
        # stored (decided against what is left of their window; later copies cannot match them).
        self.late = 0
        # Held verdict batches sent: "early", once no earlier event could come (worker.stream.frontier),
        # "due", when their hold ran out (or at shutdown), or "lag", kept longer for a lagging partition.
        self.holds_ended: Counter[str] = Counter()
        # Batches being handled now, by (stage, batch): records and since when (time.monotonic()); what a
        # shutdown that runs out of time abandons (worker.stream.shutdown).
        self.in_flight: dict[tuple[str, int], tuple[int, float]] = {}
        self.gauges = Gauges()
        self.latencies: deque[tuple[float, float]] = deque(maxlen=_RECENT_LATENCIES)
        self.pairs: deque[Pair] = deque(maxlen=_RECENT_PAIRS)
        self._decided: dict[str, tuple[int, int | None]] = {}  # id -> (its order, original's order)
        self.texts: OrderedDict[int, str] = OrderedDict()  # order -> text, with a web server only
        self.histograms = histograms
        # A histogram's "_created" series, the worker's start as a timestamp, repeated the
        # histogram's HELP text under its own name in every scrape: noise to an operator.
        disable_created_metrics()
        self.registry = CollectorRegistry(auto_describe=True)
        self.latency = Histogram(
            "neardup_verdict_latency_seconds",
            "Event append time (Kafka) to its verdict record acknowledged.",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.stage_seconds = Histogram(
            "neardup_stage_seconds",
            "Processing time of one batch, by stage.",
            ["stage"],
            buckets=_STAGE_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_Collector(self))

    # ---------------------------------------------------------------- counting
    def dead(self, reasons: Iterable[str]) -> None:
        for reason in reasons:
            self.deadletters[reason_label(reason)] += 1

    def decided(self, event_id: str, order: int, original_order: int | None, text: Any = None) -> None:
        """A verdict decided (or revised while held): its latency is measured when it is sent."""
        if len(self._decided) >= _DECIDED_MAX:
            self._decided.pop(next(iter(self._decided)))
        self._decided[event_id] = (order, original_order)
        if self.histograms and isinstance(text, str):
            self.texts[order] = text[:TEXT_SHOWN]
            if len(self.texts) > _TEXTS_KEPT:
                self.texts.popitem(last=False)

    def undecided(self, event_id: str) -> None:
        """A decided verdict that will not be sent after all (its id was dead-lettered)."""
        self._decided.pop(event_id, None)

    def sent(self, outputs: Iterable[Output]) -> None:
        """Output records the broker acknowledged: count them, time the verdicts, keep the pairs."""
        now = time.time()
        for role, event_id, value in outputs:
            if role == "unique":
                self.unique += 1
            elif role == "duplicates":
                self.duplicates += 1
            elif role == "corrections":
                self.corrections += 1
                continue
            else:
                self.dead([str(value.get("reason", ""))])
                continue
            known = self._decided.pop(event_id, None)
            if known is None:
                continue  # a re-sent copy or an outbox entry sent again after a restart
            order, original = known
            self._observe_latency(now - (order >> ORDER_TS_SHIFT) / 1000, now)
            if role == "duplicates" and original is not None:
                distance, similarity = int(value.get("distance") or 0), float(value.get("similarity") or 0)
                self.pairs.append(
                    Pair(event_id, order, str(value["duplicate_of"]), original, distance, similarity, now)
                )

    def _observe_latency(self, seconds: float, now: float) -> None:
        seconds = max(0.0, seconds)
        self.latencies.append((now, seconds))
        if self.histograms:
            self.latency.observe(seconds)

    def stage_done(self, stage: str, seconds: float) -> None:
        if self.histograms:
            self.stage_seconds.labels(stage).observe(seconds)

    # ---------------------------------------------------------------- reading
    @property
    def verdicts(self) -> int:
        return self.unique + self.duplicates

    def recent_latency(self, window_s: float, now: float | None = None) -> tuple[float | None, float | None]:
        """p50 and p99 (seconds) of the verdicts sent in the last ``window_s``."""
        since = (now if now is not None else time.time()) - window_s
        values = sorted(seconds for at, seconds in self.latencies if at >= since)
        if not values:
            return None, None
        return values[len(values) // 2], values[min(len(values) - 1, int(len(values) * 0.99))]

    def running(self) -> str:
        now = time.monotonic()
        busy = [f"{stage}: {n} records for {now - since:.1f} s" for (stage, _), (n, since) in self.in_flight.items()]
        return "; ".join(busy) or "no batch"

    def summary(self) -> str:
        return (
            f"events {self.events}, dead-lettered {sum(self.deadletters.values())}, verdicts {self.verdicts} "
            f"({self.duplicates} duplicate{'' if self.duplicates == 1 else 's'}), republished {self.republished} ({self.resent_changed} with another "
            f"text), replayed {self.replayed}, "
            f"corrections {self.corrections}, late {self.late}"
        )


# Dead-letter reasons name values ("field 'text' is 812345 bytes..."); a label must not.
_REASON_PREFIXES = (
    ("record is ", "record_too_large"),
    ("record has no value", "null_value"),
    ("invalid UTF-8", "invalid_utf8"),
    ("invalid JSON", "invalid_json"),
    ("number ", "invalid_json"),
    ("event is nested", "too_deep"),
    ("event must be a JSON object", "not_an_object"),
    ("internal error", "internal_error"),
    ("unreadable", "unreadable"),
)
_FIELD = re.compile(r"^(?:missing field|field) '(id|text|ts)'")


def reason_label(reason: str) -> str:
    """The bounded class of a dead-letter reason, for the ``reason`` label."""
    field_problem = _FIELD.match(reason)
    if field_problem:
        return f"bad_{field_problem.group(1)}"
    for prefix, label in _REASON_PREFIXES:
        if reason.startswith(prefix):
            return label
    if " stage failed on the batch" in reason:
        return "batch_failed"
    return "bad_field" if reason.startswith(("field '", "field name")) else "other"


class _Collector(Collector):
    """Turns :class:`Metrics`' integers and sampled gauges into Prometheus families at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        yield CounterMetricFamily("neardup_events", "Valid events fingerprinted.", value=m.events)
        verdicts = CounterMetricFamily(
            "neardup_verdicts", "Verdict records acknowledged, by verdict.", labels=["verdict"]
        )
        verdicts.add_metric(["unique"], m.unique)
        verdicts.add_metric(["duplicate"], m.duplicates)
        yield verdicts
        yield CounterMetricFamily("neardup_corrections", "Correction records acknowledged.", value=m.corrections)
        yield CounterMetricFamily(
            "neardup_events_late",
            "Events older than the retention window behind the newest indexed: decided, not indexed.",
            value=m.late,
        )
        holds = CounterMetricFamily(
            "neardup_holds_ended",
            "Held batches of verdicts sent, by what ended the hold: early (no earlier event can come), due, "
            "or lag (kept past due while catching up, for an input partition not read to its end).",
            labels=["by"],
        )
        for by in ("early", "due", "lag"):
            holds.add_metric([by], m.holds_ended[by])
        yield holds
        resent = CounterMetricFamily(
            "neardup_events_resent",
            "Ids sent again, their first verdict published again, by whether the text (its fingerprint) changed.",
            labels=["text"],
        )
        resent.add_metric(["same"], m.republished - m.resent_changed)
        resent.add_metric(["changed"], m.resent_changed)
        yield resent
        dead = CounterMetricFamily("neardup_deadletters", "Dead-letter records, by reason.", labels=["reason"])
        for reason, count in sorted(m.deadletters.items()):
            dead.add_metric([reason], count)
        yield dead
        g = m.gauges
        lag = GaugeMetricFamily(
            "neardup_consumer_lag", "End offset minus committed offset.", labels=["topic", "partition"]
        )
        for (topic, partition), behind in sorted(g.lag.items()):
            lag.add_metric([topic, str(partition)], behind)
        yield lag
        yield GaugeMetricFamily(
            "neardup_index_entries",
            "Events in this worker's index store (its index partitions share one), in the window.",
            g.index_entries,
        )
        yield GaugeMetricFamily(
            "neardup_index_purges_pending",
            "Expired time buckets of this worker's index stores not yet deleted (one a store: under way).",
            g.purges_pending,
        )
        yield _by_label("neardup_state_bytes", "Disk used by this worker's stores.", "store", g.state_bytes)
        yield _by_label(
            "neardup_store_memory_bytes",
            "RocksDB memory of this worker's stores: their memtables together (bounded by NEARDUP_MEMTABLE_MB) "
            "and the block cache they share.",
            "kind",
            g.memory_bytes,
        )
        yield _by_label(
            "neardup_process_memory_bytes",
            "This worker process's memory: resident, and the C heap's bytes in use and held free "
            "(glibc only): which of them grows when the resident set does.",
            "kind",
            g.process_bytes,
        )
        yield GaugeMetricFamily("neardup_recovering", "1 while stores are restoring.", int(g.recovering))

    def describe(self) -> Iterator[Metric]:
        return iter(())


def _by_label(name: str, documentation: str, label: str, values: dict[str, int]) -> GaugeMetricFamily:
    """A gauge with one sample for each of ``values``, its key the ``label``."""
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for key, value in sorted(values.items()):
        family.add_metric([key], value)
    return family


def exposition(metrics: Metrics) -> tuple[bytes, str]:
    """The Prometheus text format of everything, and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(metrics.registry), CONTENT_TYPE_LATEST
