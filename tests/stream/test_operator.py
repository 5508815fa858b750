"""The operator's side of a running group, on the real broker: two workers, one replay.

Checked the way an operator checks them: Prometheus scrapes against the records on the output
topics, lag read back to zero, ``/explain`` asked of the worker that owns an id and of the
one that does not, ``/check`` of known text, the live page in a real browser during the
replay, bad requests answered in JSON, and ``/healthz`` through a forced restore.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.stream.web_helpers import ARTIFACTS, browse, call, free_port, raw_call, scrape, total, wait_http
from tests.stream_helpers import (
    MAX_TEXT,
    REPO,
    OutputReader,
    WorkerProcess,
    audit,
    ids_of,
    real_feed,
    send_lines,
    wait_for_members,
    worker_env,
)
from tests.stream_helpers import Audit as TopicAudit
from topology.stages import TABLE, Share, Topics, answer_partition, slot_partition
from topology.topics import create_topics, topics
from worker.cli.tail import Record
from worker.engine.fingerprint import fingerprint
from worker.settings import Settings

pytestmark = pytest.mark.kafka

PARTITIONS = 4
EVENTS = 1500
# The feed's last event: a month old when the rest are from now, so behind the window (late).
LATE_ID = "op-late"
LATE = json.dumps(
    {
        "id": LATE_ID,
        "text": "A month-old notice about a library closing early.",
        "ts": int(time.time() * 1000) - 30 * 86_400_000,
    }
).encode()


@dataclass
class Run:
    names: Topics
    urls: list[str]
    workers: list[WorkerProcess]
    feed: list[bytes]
    reader: OutputReader
    audit: TopicAudit
    page_dom: str
    texts: dict[str, str]


@pytest.fixture(scope="module")
def run(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    tmp = tmp_path_factory.mktemp("operator")
    prefix = f"op{uuid.uuid4().hex[:8]}"
    create_topics(kafka_bootstrap, topics(prefix, PARTITIONS, 1))
    names = Topics(prefix)
    ports = [free_port(), free_port()]
    workers = []
    for name, port in zip(("w1", "w2"), ports, strict=True):
        env = worker_env(kafka_bootstrap, prefix, PARTITIONS, tmp / "state", lateness_ms=20, web_port=port)
        workers.append(WorkerProcess.start(env, name, tmp))
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    feed = [*real_feed(EVENTS - 1, "op", seed=11, variant_share=0.25), LATE]
    reader = OutputReader(kafka_bootstrap, names)
    try:
        for worker, url in zip(workers, urls, strict=True):
            worker.wait_ready()
            wait_http(url)
        # No rebalance while the feed is read: every event is fingerprinted once.
        wait_for_members(kafka_bootstrap, f"{prefix}-worker", 2)
        replay = threading.Thread(target=send_lines, args=(kafka_bootstrap, names.events, feed, 300.0))
        replay.start()
        time.sleep(3.0)  # well into the replay: rates, lag and the first pairs are there
        dom = browse(urls[0] + "/", screenshot=ARTIFACTS / "live-page.png")
        replay.join()
        reader.wait_for(ids_of(feed), timeout=120)
        reader.settle()
        texts = {str(event["id"]): str(event["text"]) for event in map(_json, feed)}
        yield Run(names, urls, workers, feed, reader, audit(reader.records, names, ids_of(feed)), dom, texts)
    finally:
        reader.close()
        for worker in workers:
            worker.stop()


def _json(line: bytes) -> dict[str, object]:
    value = json.loads(line)
    assert isinstance(value, dict)
    return value


def test_counters_equal_the_records_on_the_output_topics_and_lag_reaches_zero(run: Run) -> None:
    on_topics = {topic: sum(1 for r in run.reader.records if r.topic == topic) for topic in run.names.outputs()}
    deadline = time.monotonic() + 60
    while True:
        scrapes = [scrape(url) for url in run.urls]
        lag = sum(total(s, "neardup_consumer_lag") for s in scrapes)
        verdicts = sum(total(s, "neardup_verdicts_total") for s in scrapes)
        if lag == 0 and verdicts == on_topics[run.names.unique] + on_topics[run.names.duplicates]:
            break
        assert time.monotonic() < deadline, f"lag {lag}, verdicts {verdicts}, on the topics {on_topics}"
        time.sleep(0.5)
    assert sum(total(s, "neardup_verdicts_total", verdict="unique") for s in scrapes) == on_topics[run.names.unique]
    assert (
        sum(total(s, "neardup_verdicts_total", verdict="duplicate") for s in scrapes) == on_topics[run.names.duplicates]
    )
    assert sum(total(s, "neardup_corrections_total") for s in scrapes) == on_topics[run.names.corrections]
    assert sum(total(s, "neardup_deadletters_total") for s in scrapes) == on_topics[run.names.deadletter] == 0
    assert sum(total(s, "neardup_events_total") for s in scrapes) == EVENTS
    assert run.audit.duplicates > 100
    for s in scrapes:
        topics_lagged = {dict(labels)["topic"] for (name, labels) in s if name == "neardup_consumer_lag"}
        assert topics_lagged <= {run.names.events, run.names.probes, run.names.answers}
        assert total(s, "neardup_verdict_latency_seconds_count") > 0
        assert {dict(labels)["stage"] for (name, labels) in s if name == "neardup_stage_seconds_count"} == {
            "fingerprint",
            "index",
            "verdict",
        }
        assert total(s, "neardup_index_entries") > 0 and total(s, "neardup_state_bytes", store="index") > 0
        assert total(s, "neardup_recovering") == 0
        assert ("neardup_index_purges_pending", ()) in s
        # The stores' memtables hold what they were just written, under the one budget of 256 MiB.
        assert 0 < total(s, "neardup_store_memory_bytes", kind="memtables") < 256 << 20
        # The process's own figures: its resident set holds its C heap in use.
        resident = total(s, "neardup_process_memory_bytes", kind="resident")
        assert 0 < total(s, "neardup_process_memory_bytes", kind="heap_in_use") < resident


def test_a_late_event_is_counted_and_explained_as_out_of_the_window(run: Run) -> None:
    assert sum(total(scrape(url), "neardup_events_late_total") for url in run.urls) == 1
    late = [call(f"{url}/explain/{LATE_ID}") for url in run.urls]
    assert all(status == 200 and found["verdict"] == "unique" for status, found in late), late
    assert [found.get("in_window") for _, found in late] == [False, False]
    shown = subprocess.run(
        [sys.executable, "-m", "worker.cli", "explain", LATE_ID, "--url", run.urls[1]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert f"{LATE_ID}  unique, and behind the retention window" in shown.stdout, shown.stderr
    unique = next(str(r.key) for r in run.reader.records if r.topic == run.names.unique and r.key != LATE_ID)
    status, found = call(f"{run.urls[0]}/explain/{quote(unique, safe='')}")
    assert (status, found["in_window"]) == (200, True)


def test_explain_names_the_original_the_topics_name_whichever_worker_is_asked(run: Run) -> None:
    # Taken in turn from each verdict partition: the reader may have read one output partition's
    # records before the others'.
    by_owner: dict[int, list[Record]] = {}
    for record in run.reader.records:
        if record.topic == run.names.duplicates:
            by_owner.setdefault(answer_partition(str(record.key), PARTITIONS), []).append(record)
    duplicates = [r for turn in zip_longest(*by_owner.values()) for r in turn if r is not None][:25]
    assert duplicates
    owners = set()
    for record in duplicates:
        event_id = str(record.key)
        owners.add(answer_partition(event_id, PARTITIONS))
        answers = [call(f"{url}/explain/{quote(event_id, safe='')}") for url in run.urls]
        for status, found in answers:
            assert status == 200, found
            assert found["published"]["duplicate_of"] == record.value["duplicate_of"]
            assert found["duplicate_of"] == run.audit.final[event_id]  # after any correction
            assert found["text"] == run.texts[event_id]
            assert found["original"]["text"] == run.texts[found["duplicate_of"]]
            assert found["chain"][0] == event_id and run.audit.final[found["chain"][-1]] is None
            assert found["found_by"], found
        assert answers[0][1] == answers[1][1]
    assert len(owners) > 1  # the ids' verdict partitions are spread over both workers


def test_check_of_a_known_text_says_duplicate_and_indexes_nothing(run: Run) -> None:
    original = next(r.key for r in run.reader.records if r.topic == run.names.unique and _has_copies(run, r.key))
    before = sum(total(scrape(url), "neardup_events_total") for url in run.urls)
    for url in run.urls:
        status, answer = call(url + "/check", {"text": run.texts[str(original)]})
        assert status == 200, answer
        assert answer["verdict"] == "duplicate" and answer["duplicate_of"] == original
        assert any(c["id"] == original and c["verified"] for c in answer["candidates"])
    status, answer = call(run.urls[1] + "/check", {"text": "an unrelated line about gardening, tomatoes and rain"})
    assert (status, answer["verdict"]) == (200, "unique")
    time.sleep(1.5)  # a probe that leaked into the stream would be counted by now
    assert sum(total(scrape(url), "neardup_events_total") for url in run.urls) == before
    run.reader.poll()
    assert not [r for r in run.reader.records if r.key == "check"]  # nothing was published either


def _has_copies(run: Run, original: str | None) -> bool:
    return any(pointer == original for pointer in run.audit.final.values())


def _short_sketch_statuses(run: Run) -> set[int]:
    """A probe of a stored story's tables whose sketch is cut short, sent to each worker as a
    peer's ``/check?local=1``: what a peer sends is input too, and its owner compared the
    stored story's sketch with it (an IndexError, answered 500)."""
    settings = Settings(partitions=PARTITIONS)
    text = max(run.texts.values(), key=len)
    simhash = fingerprint(text, settings).simhash
    slots = [(t, key, TABLE) for t, key in enumerate(settings.block_plan.keys(simhash))]
    part = slot_partition(slots[0], PARTITIONS)
    mine = tuple(s for s in slots if slot_partition(s, PARTITIONS) == part)
    cut = Share("probe", 1, 0, simhash, b"\x01\x02", mine).to_dict()
    return {call(url + "/check?local=1", body={"probes": [cut]})[0] for url in run.urls}


def test_bad_requests_get_json_errors_and_the_workers_keep_running(run: Run) -> None:
    url = run.urls[0]
    status, body = call(url + "/explain/" + quote("no such id/ever", safe=""))
    assert status == 404 and "no event" in body["error"]
    status, body = call(url + "/explain/" + "x" * 2000)  # longer than any id may be
    assert status == 400 and "over the limit" in body["error"]
    assert call(url + "/check", raw=b"{not json")[0] == 400
    assert call(url + "/check", body=["a", "list"])[0] == 400
    assert call(url + "/check", body={"text": 42}) == (400, {"error": "field 'text' must be a string, got a number"})
    assert call(url + "/check", body={"id": "z"}) == (400, {"error": "missing field 'text'"})  # as scan says it
    assert call(url + "/check") == (405, {"error": "GET is not allowed on /check: it takes POST"})
    assert call(url + "/check", body={"text": "some words here", "id": 7}) == (
        400,
        {"error": "field 'id' must be a string, got a number"},
    )
    assert call(url + "/check", body={"text": "some words here", "id": "a\u0001b"})[0] == 400
    assert call(url + "/check", body={"text": "x" * (MAX_TEXT + 1)}) == (
        413,
        {"error": f"field 'text' is {MAX_TEXT + 1} bytes, over the limit of {MAX_TEXT}"},
    )
    assert call(url + "/check", body={"text": "some words here", "ts": "yesterday"})[0] == 400
    deep = b'{"text": "some words here", "n": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert call(url + "/check", raw=deep)[0] == 400
    for ts in (b"1e400", b"-1e400", b"NaN"):  # what the stream's parser refuses too
        assert call(url + "/check", raw=b'{"text": "some words here", "ts": ' + ts + b"}")[0] == 400
    assert call(url + "/check?local=1", body={"probes": [{"not": "a probe"}]})[0] == 400
    assert _short_sketch_statuses(run) == {400}  # owner or not, each worker refuses it as it reads it
    status, body = call(url + "/check", raw=b'{"text": "\\ud800 and more words"}')
    assert status == 400 and body["error"] == "request body holds a lone surrogate (invalid Unicode)"
    status, body = call(url + "/check", raw=b'{"text": "ok"}', headers={"Content-Encoding": "gzip"})
    assert status == 400 and body["error"].startswith("request body could not be read"), body
    status, body = call(url + "/no/such/page")
    assert status == 404 and "/explain/ID" in body["error"], body  # a wrong path is told the right ones
    assert call(url + "/explain/") == (404, {"error": "give an event id: GET /explain/ID"})
    huge = b"POST /check HTTP/1.1\r\nHost: w\r\nContent-Length: 99999999999\r\nConnection: close\r\n\r\n"
    status, body = raw_call(url, huge)  # refused on its header, not after 30 s waiting for the body
    assert status == 413 and "over the limit" in body["error"], body
    assert call(url + "/metrics", method="DELETE")[0] == 405
    status, body = raw_call(url, b"FOO\x01 /healthz HTTP/1.1\r\nHost: w\r\n\r\n")  # no parser takes it
    assert status == 400 and body["error"].startswith("Bad Request: Invalid method"), body
    assert "\n" not in body["error"] and not body["error"].endswith("^"), body  # aiohttp's pointer lines joined
    status, body = raw_call(url, b"GET /healthz HTTP/1.1\r\nHost: w\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n")
    assert status == 400 and "8190 bytes" in body["error"], body
    assert all(worker.alive() for worker in run.workers)
    assert call(url + "/healthz") == (200, {"healthy": True, "status": "recovered and consuming"})


def test_the_live_page_renders_numbers_and_duplicate_pairs_in_a_browser(run: Run) -> None:
    dom = run.page_dom

    def tile(element_id: str) -> str:
        found = re.search(rf'id="{element_id}">([^<]*)<', dom)
        assert found, f"no #{element_id} in the page"
        return found.group(1)

    assert float(tile("events-rate").replace(",", "")) > 0
    assert int(tile("verdicts").replace(",", "")) > 0
    assert tile("duplicate-rate").endswith("%")
    assert re.fullmatch(r"[\d.,]+ / [\d.,]+", tile("latency"))
    pairs = re.findall(r'<div class="pair">.*?duplicates (\S+) · distance \d+ · similarity [\d.]+', dom, re.S)
    assert pairs, "no duplicate pair rendered"
    assert "<polyline" in dom  # the chart
    assert (ARTIFACTS / "live-page.png").stat().st_size > 10_000


def test_healthz_is_503_while_a_lost_state_is_restored_and_200_after(kafka_bootstrap: str, tmp_path: Path) -> None:
    prefix = f"hz{uuid.uuid4().hex[:8]}"
    create_topics(kafka_bootstrap, topics(prefix, 2, 1))
    port = free_port()
    env = worker_env(kafka_bootstrap, prefix, 2, tmp_path / "state", web_port=port)
    url = f"http://127.0.0.1:{port}"
    feed = real_feed(4000, "hz", seed=5)
    reader = OutputReader(kafka_bootstrap, Topics(prefix))
    worker = WorkerProcess.start(env, "phoenix", tmp_path)
    try:
        worker.wait_ready()
        send_lines(kafka_bootstrap, f"{prefix}.events", feed)
        reader.wait_for(ids_of(feed), timeout=120)
        worker.stop()
        shutil.rmtree(tmp_path / "state" / "phoenix")  # a restore from the changelogs is forced
        worker = WorkerProcess.start(env, "phoenix", tmp_path)
        seen: list[tuple[int, str]] = []
        deadline = time.monotonic() + 90
        while not seen or seen[-1][0] != 200:
            assert time.monotonic() < deadline, f"never healthy: {seen[-5:]}\n{worker.tail()}"
            try:
                status, body = call(url + "/healthz")
            except OSError:
                time.sleep(0.01)
                continue
            if not seen or seen[-1] != (status, body["status"]):
                seen.append((status, body["status"]))
        assert any(status == 503 and status_text.startswith("recovering") for status, status_text in seen), seen
        assert all(status == 503 for status, _ in seen[:-1])
        assert "restored" in worker.text()
        duplicate = next(r.key for r in reader.records if r.topic == f"{prefix}.duplicates")
        assert call(f"{url}/explain/{quote(str(duplicate), safe='')}")[0] == 200  # the restored store answers
    finally:
        reader.close()
        worker.stop()


def test_the_cli_asks_any_worker(run: Run, tmp_path: Path) -> None:
    def neardup(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "worker.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=120
        )

    record = next(r for r in run.reader.records if r.topic == run.names.duplicates)
    shown = neardup("explain", str(record.key), "--url", run.urls[1])
    assert shown.returncode == 0, shown.stderr
    assert f"{record.key}  duplicate of {run.audit.final[str(record.key)]}" in shown.stdout
    assert "found by" in shown.stdout and "chain" in shown.stdout
    events = tmp_path / "check.jsonl"
    known = str(record.value["duplicate_of"])
    # The feed checked again under its own ids: each answer is the verdict the stream published
    # (a re-sent id gets its first verdict again), never a copy of itself.
    published = {r.key: r.value for r in run.reader.records if r.topic in (run.names.unique, run.names.duplicates)}
    lines = [{"id": "again", "text": run.texts[known]}, {"id": "new", "text": "a b c d"}]
    lines += [{"id": key, "text": run.texts[str(key)]} for key in (known, record.key)]
    lines += [{"id": known, "text": "A text this id never had, checked under it all the same."}]
    events.write_text("".join(json.dumps(line) + "\n" for line in lines))
    checked = neardup("check", "--file", str(events), "--url", run.urls[0])
    assert checked.returncode == 0, checked.stderr
    answers = [json.loads(line) for line in checked.stdout.splitlines()]
    assert [(a["id"], a["verdict"]) for a in answers[:2]] == [("again", "duplicate"), ("new", "unique")]
    assert "already_published" not in answers[0]
    for answer, line in zip(answers[2:], lines[2:], strict=True):
        first = published[answer["id"]]
        assert answer["already_published"] is True
        assert answer["another_text"] is (line["text"] != run.texts[answer["id"]])
        assert (answer["verdict"], answer.get("duplicate_of")) == (first["verdict"], first.get("duplicate_of"))
        assert answer["fingerprint"] == first["fingerprint"], "what the stream publishes again, whatever the text"
        assert answer["id"] not in [c["id"] for c in answer["candidates"]]
    one = neardup("check", run.texts[known], "--id", known, "--url", run.urls[1])
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith(f"{known}  ") and "already published" in one.stdout
    missing = neardup("explain", "never-sent", "--url", run.urls[0])
    assert missing.returncode == 1 and "no event with id 'never-sent'" in missing.stderr
    assert "Traceback" not in missing.stderr
