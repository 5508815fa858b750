"""What /metrics and the live page report, from the counts the stages keep (no Kafka needed)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from topology.stages import total_order
from topology.verdicts import Output
from worker.stream.metrics import Metrics, exposition, reason_label
from worker.stream.stats import mark_differences

APPENDED_MS = 1_700_000_000_000


def scraped(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the exposition, as Prometheus would read it."""
    body, content_type = exposition(metrics)
    assert content_type.startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def test_counters_are_the_records_the_broker_acknowledged() -> None:
    metrics = Metrics()
    metrics.events += 5
    metrics.late += 2
    for i, event_id in enumerate(["a", "b", "c"]):
        metrics.decided(event_id, total_order(APPENDED_MS + i, 0, i), None if event_id != "c" else 7)
    metrics.decided("failed", total_order(APPENDED_MS, 0, 9), None)
    metrics.undecided("failed")  # dead-lettered after it was decided: it will never be sent
    outputs: list[Output] = [
        ("unique", "a", {"id": "a"}),
        ("unique", "b", {"id": "b"}),
        ("duplicates", "c", {"id": "c", "duplicate_of": "a", "distance": 2, "similarity": 0.9}),
        ("unique", "a", {"id": "a"}),  # a re-sent copy of "a": a second record on the topic
        ("corrections", "b", {"id": "b", "duplicate_of": "a"}),
        ("deadletter", "x", {"reason": "internal error: KeyError"}),
    ]
    metrics.sent(outputs)
    got = scraped(metrics)
    assert got[("neardup_events_total", ())] == 5
    assert got[("neardup_verdicts_total", (("verdict", "unique"),))] == 3
    assert got[("neardup_verdicts_total", (("verdict", "duplicate"),))] == 1
    assert got[("neardup_corrections_total", ())] == 1
    assert got[("neardup_events_late_total", ())] == 2
    assert got[("neardup_deadletters_total", (("reason", "internal_error"),))] == 1
    # Each decided verdict is timed once, from its append time; the re-sent copy is not.
    assert got[("neardup_verdict_latency_seconds_count", ())] == 3
    assert [(p.event_id, p.original_id, p.original_order) for p in metrics.pairs] == [("c", "a", 7)]


def test_gauges_and_stage_histograms_are_exported_under_their_names() -> None:
    metrics = Metrics()
    metrics.gauges.lag = {("p.events", 0): 3, ("p.events", 1): 0}
    metrics.gauges.index_entries = 42
    metrics.gauges.purges_pending = 2
    metrics.gauges.state_bytes = {"index": 1000, "verdict": 10}
    metrics.gauges.memory_bytes = {"memtables": 5000, "block_cache": 70}
    metrics.gauges.process_bytes = {"resident": 9000, "heap_in_use": 800, "heap_free": 60}
    metrics.gauges.recovering = True
    metrics.stage_done("index", 0.004)
    got = scraped(metrics)
    assert got[("neardup_consumer_lag", (("partition", "0"), ("topic", "p.events")))] == 3
    assert got[("neardup_index_entries", ())] == 42
    assert got[("neardup_index_purges_pending", ())] == 2
    assert got[("neardup_state_bytes", (("store", "index"),))] == 1000
    assert got[("neardup_store_memory_bytes", (("kind", "memtables"),))] == 5000
    assert got[("neardup_process_memory_bytes", (("kind", "heap_free"),))] == 60
    assert got[("neardup_recovering", ())] == 1
    assert got[("neardup_stage_seconds_count", (("stage", "index"),))] == 1
    assert not [name for name, _ in got if name.endswith("_created")]  # a start time, with its HELP again


def test_without_a_web_server_nothing_is_timed() -> None:
    metrics = Metrics(histograms=False)
    metrics.decided("a", total_order(APPENDED_MS, 0, 0), None)
    metrics.stage_done("index", 0.1)
    metrics.sent([("unique", "a", {"id": "a"})])
    got = scraped(metrics)
    assert got[("neardup_verdicts_total", (("verdict", "unique"),))] == 1
    assert got[("neardup_verdict_latency_seconds_count", ())] == 0


def test_recent_latency_percentiles() -> None:
    metrics = Metrics()
    for ms in range(1, 101):
        metrics.latencies.append((1000.0, ms / 1000))
    metrics.latencies.append((900.0, 9.0))  # older than the window
    p50, p99 = metrics.recent_latency(10.0, now=1001.0)
    assert (p50, p99) == (0.051, 0.1)
    assert metrics.recent_latency(10.0, now=2000.0) == (None, None)


def test_dead_letter_reasons_become_a_few_labels() -> None:
    reasons = {
        "record is 2000000 bytes, over the limit of 600000 bytes for a record": "record_too_large",
        "record has no value (null)": "null_value",
        "invalid UTF-8 at byte 17": "invalid_utf8",
        "invalid JSON: Expecting value": "invalid_json",
        "number 1e999 overflows a 64-bit float": "invalid_json",
        "event is nested more than 32 levels deep": "too_deep",
        "event must be a JSON object, got an array": "not_an_object",
        "missing field 'id'": "bad_id",
        "field 'text' is 812345 bytes, over the limit of 524288": "bad_text",
        "field 'ts' '2024-13-45' is not ISO-8601": "bad_ts",
        "field 'lang' contains a lone surrogate (invalid Unicode)": "bad_field",
        "internal error: RecursionError": "internal_error",
        "unreadable probes message: ValueError": "unreadable",
        "index stage failed on the batch: OSError": "batch_failed",
        "something new": "other",
    }
    assert {reason: reason_label(reason) for reason in reasons} == reasons


def test_the_live_page_marks_the_words_that_differ() -> None:
    new, original = mark_differences("Quake of magnitude 6.1 hits Chile, via @ap", "Quake of magnitude 6.1 hits Chile")
    assert "".join(piece for piece, _ in new) == "Quake of magnitude 6.1 hits Chile, via @ap"
    assert [piece.strip() for piece, differs in new if differs] == [", via @ap"]
    assert not any(differs for _, differs in original)
    new, original = mark_differences("北京今日有雨", "北京今日有雪")
    assert [piece for piece, differs in new if differs] == ["雨"]
    assert [piece for piece, differs in original if differs] == ["雪"]
