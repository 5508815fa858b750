"""``neardup explain`` and ``neardup check`` as a person reads them, against a stand-in worker
that answers ``/check`` and ``/explain`` as a real one does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from tests.kafka_broker import free_port_pair
from worker.cli.ask import check_lines, explanation_lines
from worker.engine.sketch import NUMBERS_DIFFER

REFUSED_BY_THE_WORKER = "no fingerprint for this text"


class FakeWorker(BaseHTTPRequestHandler):
    """Answers ``POST /check`` (unique, or 400 for the text "refuse me") and ``GET /explain/ID``;
    keeps the bodies it was sent and counts connections."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the worker's aiohttp server
    bodies: list[dict[str, Any]] = []
    connections = 0

    def setup(self) -> None:
        super().setup()
        FakeWorker.connections += 1

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.bodies.append(body)
        if body["text"] == "refuse me":
            self._answer(400, {"error": REFUSED_BY_THE_WORKER})
        else:
            self._answer(200, {"verdict": "unique", "fingerprint": "0f", "candidates": []})

    def do_GET(self) -> None:
        self.bodies.append({"path": self.path})
        self._answer(200, {"id": unquote(self.path.rsplit("/", 1)[-1]), "verdict": None})

    def _answer(self, status: int, value: dict[str, Any]) -> None:
        raw = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def worker() -> Iterator[str]:
    FakeWorker.bodies, FakeWorker.connections = [], 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeWorker)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


REPO = Path(__file__).resolve().parents[2]


def neardup(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, from ``cwd`` (this tree's code still)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "worker.cli", *args], capture_output=True, text=True, timeout=60, cwd=cwd, env=env
    )


def test_a_unique_text_lists_its_refused_candidates_with_the_reason() -> None:
    answer = {
        "id": "bus-25",
        "verdict": "unique",
        "fingerprint": "0f",
        "candidates": [
            {"id": "bus-15", "distance": 3, "verified": False, "in_window": True, "refused": NUMBERS_DIFFER},
            {"id": "old", "distance": 9, "verified": False, "in_window": False},
        ],
    }
    assert list(check_lines(answer)) == [
        "bus-25  unique",
        "  candidate bus-15  distance 3  (their numbers differ)",
        "  candidate old  distance 9  (not similar enough, older than the retention window)",
    ]


def test_a_duplicate_names_its_original_and_its_verified_candidate() -> None:
    answer = {
        "verdict": "duplicate",
        "duplicate_of": "story",
        "distance": 2,
        "similarity": 0.91234,
        "candidates": [{"id": "story", "distance": 2, "verified": True, "in_window": True}],
    }
    assert list(check_lines(answer)) == [
        "duplicate of story  (distance 2, similarity 0.912)",
        "  candidate story  distance 2  (verified)",
    ]


def test_an_id_already_published_says_so_under_its_first_verdict() -> None:
    answer = {"id": "story", "verdict": "unique", "already_published": True, "candidates": []}
    assert list(check_lines(answer)) == [
        "story  unique",
        "  (this id is already published: a re-sent id gets its first verdict again)",
    ]


def test_an_id_already_published_with_another_text_says_that_text_is_not_decided() -> None:
    answer = {"id": "story", "verdict": "unique", "already_published": True, "another_text": True, "candidates": []}
    assert list(check_lines(answer))[1] == (
        "  (this id is already published with another text: it gets its first verdict again, this text is not decided)"
    )


def test_check_file_answers_every_good_line_and_names_each_bad_one(tmp_path: Path, worker: str) -> None:
    source = tmp_path / "events.jsonl"
    lines = [
        '\ufeff{"id": "c1", "text": "a post"}',  # a byte-order mark before line 1 is not part of it
        '{"id": "c2"}',
        '{"id": 7, "text": "a numeric id"}',
        '{"id": "c4", "text": "a post", "ts": "bad"}',
        "",
        '{"text": "no id is fine", "ts": 1700000000000}',
        '{"id": "c7", "text": "refuse me"}',
        "{broken",
        '{"id": "c9", "text": "deep", "n": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"id": "c10", "text": "unterminated',
    ]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = neardup("check", "--file", str(source), "--url", worker)
    assert proc.returncode == 2
    assert [(a.get("id"), a["verdict"]) for a in map(json.loads, proc.stdout.splitlines())] == [
        ("c1", "unique"),
        (None, "unique"),
    ]
    assert proc.stderr.splitlines() == [
        f"neardup check: {source}:2: missing field 'text'",
        f"neardup check: {source}:3: field 'id' must be a string, got a number",
        f"neardup check: {source}:4: field 'ts' 'bad' is not ISO-8601",
        f"neardup check: {source}:7: the worker refused it: {REFUSED_BY_THE_WORKER}",
        f"neardup check: {source}:8: invalid JSON: Expecting property name enclosed in double quotes at column 2",
        f"neardup check: {source}:9: event is nested more than 32 levels deep",  # as scan says it
        # The record is the line without its end, as scan and the worker read it.
        f"neardup check: {source}:10: invalid JSON: Unterminated string starting at column 23",
    ]
    # A line refused here costs no request; the others share one kept-alive connection. A line's
    # id goes with it (the worker checks it as that event, not as a copy of itself).
    assert FakeWorker.bodies == [
        {"text": "a post", "id": "c1"},
        {"text": "no id is fine", "ts": 1700000000000},
        {"text": "refuse me", "id": "c7"},
    ]
    assert FakeWorker.connections == 1


def test_check_file_of_good_lines_exits_zero_and_a_missing_file_is_one_line(tmp_path: Path, worker: str) -> None:
    (tmp_path / "ok.jsonl").write_text('{"id": "a", "text": "one"}\n{"id": "b", "text": "two"}\n', "utf-8")
    proc = neardup("check", "--file", "ok.jsonl", "--url", worker, cwd=tmp_path)
    assert (proc.returncode, proc.stderr, len(proc.stdout.splitlines())) == (0, "", 2)
    proc = neardup("check", "--file", "nope.jsonl", "--url", worker, cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, "neardup check: nope.jsonl: no such file\n")
    proc = neardup("check", "--file", "sample", "--url", worker, cwd=tmp_path)  # as scan and produce take it
    shipped = (REPO / "worker" / "data" / "sample_feed.jsonl").read_text("utf-8").splitlines()
    assert (proc.returncode, len(proc.stdout.splitlines())) == (0, len([line for line in shipped if line.strip()]))


def test_a_worker_that_cannot_be_reached_ends_check_file_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "ok.jsonl").write_text('{"id": "a", "text": "one"}\n{"id": "b", "text": "two"}\n', "utf-8")
    url = f"http://127.0.0.1:{free_port_pair()}"
    proc = neardup("check", "--file", "ok.jsonl", "--url", url, cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"neardup check: cannot reach a worker at {url} ")
    assert proc.stderr.rstrip().endswith("or ask a scan's kept state with --state DIR")


def test_explain_without_a_worker_suggests_only_what_explain_takes(tmp_path: Path) -> None:
    """``check`` reads a scan's kept state (``--state``); ``explain`` has no such option."""
    url = f"http://127.0.0.1:{free_port_pair()}"
    proc = neardup("explain", "some-id", "--url", url, cwd=tmp_path)
    assert proc.returncode == 1 and "--state" not in proc.stderr, proc.stderr
    assert proc.stderr.rstrip().endswith("start one with `neardup worker` or pass --url")


@pytest.mark.parametrize("url", ["notaurl", "ftp://host:1", "http://", "http://host:port"])
def test_a_url_that_is_no_http_address_is_refused_in_one_line(url: str) -> None:
    proc = neardup("check", "some text", "--url", url)
    assert (proc.returncode, proc.stderr) == (
        1,
        f"neardup check: --url {url!r} is not a worker's address: give http://HOST:PORT (or https://), "
        "e.g. http://127.0.0.1:6066\n",
    )


def test_an_empty_text_is_refused_before_the_worker_is_asked(worker: str) -> None:
    for text in ("", "   "):
        proc = neardup("check", text, "--url", worker)
        assert (proc.returncode, proc.stderr) == (
            1,
            "neardup check: give a text to check (an empty one is no event: the stream dead-letters it)\n",
        )
    assert FakeWorker.bodies == []


def test_an_empty_id_is_refused_before_the_worker_is_asked(worker: str) -> None:
    proc = neardup("explain", "", "--url", worker)
    assert (proc.returncode, proc.stderr) == (1, "neardup explain: give an event id (an empty one names no event)\n")
    assert FakeWorker.bodies == []
    proc = neardup("explain", "a/2", "--url", worker)
    assert (proc.returncode, proc.stdout) == (0, "a/2  no verdict yet (its answers are still being gathered)\n")
    assert FakeWorker.bodies == [{"path": "/explain/a%2F2"}]


def test_check_of_one_text_sends_the_id_it_is_given(tmp_path: Path, worker: str) -> None:
    proc = neardup("check", "a post", "--id", "p1", "--url", worker)
    assert (proc.returncode, proc.stdout.splitlines()[0]) == (0, "p1  unique")
    assert FakeWorker.bodies == [{"text": "a post", "id": "p1"}]
    events = tmp_path / "events.jsonl"
    events.write_text('{"id": "p2", "text": "a post"}\n')
    proc = neardup("check", "--file", str(events), "--id", "p1", "--url", worker)
    assert proc.returncode == 2 and "--id and --ts go with a TEXT" in proc.stderr


def test_explain_into_a_closed_pipe_ends_quietly(worker: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "worker.cli", "explain", "a2", "--url", worker],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert (proc.wait(timeout=60), stderr) == (141, "")


QUAKE = "Earthquake of magnitude 6.1 hits Tokyo; trains halted, no tsunami warning issued by the agency."
RAIN = "Heavy rain floods the streets of Osaka as the rainy season begins early this year, officials say."
QUAKE_COPY = f"BREAKING: {QUAKE} More soon"
FERRY = "A ferry carrying two hundred passengers ran aground off Crete; coast guard boats reached it within the hour."


def scanned(tmp_path: Path, name: str, events: list[tuple[str, str]], state: Path) -> list[dict[str, Any]]:
    """``neardup scan`` of ``events`` (id, text) into ``state``; its verdicts."""
    source, out = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.out.jsonl"
    source.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in events), encoding="utf-8")
    proc = neardup("scan", str(source), "-o", str(out), "--state", str(state))
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_check_against_a_scans_state_answers_as_that_scan_would_and_stores_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    scanned(tmp_path, "first", [("a1", QUAKE), ("b1", RAIN)], state)
    proc = neardup("check", QUAKE_COPY, "--state", str(state), "--json")
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert (answer["verdict"], answer["duplicate_of"]) == ("duplicate", "a1")
    assert [(c["id"], c["verified"]) for c in answer["candidates"]] == [("a1", True)]
    proc = neardup("check", FERRY, "--state", str(state))
    assert (proc.returncode, proc.stdout) == (
        0,
        "unique\n  (no stored event shares a block-table or exact key with it)\n",
    )
    # The scan of the same texts decides as the checks said, and finds no trace of them.
    verdicts = scanned(tmp_path, "second", [("a2", QUAKE_COPY), ("f1", FERRY)], state)
    assert [(v["id"], v["verdict"], v["duplicate_of"]) for v in verdicts] == [
        ("a2", "duplicate", "a1"),
        ("f1", "unique", None),
    ]
    assert (verdicts[0]["distance"], verdicts[0]["similarity"]) == (answer["distance"], answer["similarity"])


def test_check_against_a_missing_state_or_with_a_worker_option_is_refused(tmp_path: Path) -> None:
    proc = neardup("check", QUAKE, "--state", str(tmp_path / "none"))
    assert (proc.returncode, proc.stderr) == (
        1,
        f"neardup check: --state {tmp_path / 'none'} holds no index: "
        f"`neardup scan FILE --state {tmp_path / 'none'}` keeps one\n",
    )
    worker_state = tmp_path / "state" / "w1"  # a worker's: a scan would refuse to keep its index there
    (worker_state / "stores").mkdir(parents=True)
    proc = neardup("check", QUAKE, "--state", str(worker_state))
    assert proc.returncode == 1 and "through the worker: --url" in proc.stderr, proc.stderr
    assert f"--state {worker_state}` keeps one" not in proc.stderr
    (tmp_path / "feed.jsonl").write_text("{}\n", encoding="utf-8")
    proc = neardup("check", QUAKE, "--state", str(tmp_path / "feed.jsonl"))
    assert (proc.returncode, proc.stderr) == (
        1,
        f"neardup check: --state {tmp_path / 'feed.jsonl'} is a file: "
        "give the directory `neardup scan FILE --state DIR` kept\n",
    )
    proc = neardup("check", QUAKE, "--state", str(tmp_path), "--url", "http://127.0.0.1:1")
    assert proc.returncode == 2
    assert "--state checks a TEXT against a scan's state; --file, --id and --url ask a worker" in proc.stderr


def test_check_at_a_time_of_the_scans_events_finds_what_now_is_out_of_the_window(tmp_path: Path) -> None:
    """The shipped sample is of 2024: a copy of its text checked now is past its window; at the
    time of its events it is a copy (a newcomer took the first for a miss)."""
    state, source = tmp_path / "state", tmp_path / "old.jsonl"
    source.write_text(json.dumps({"id": "a1", "text": QUAKE, "ts": "2024-03-01T08:00:00Z"}) + "\n", encoding="utf-8")
    assert neardup("scan", str(source), "-o", str(tmp_path / "out.jsonl"), "--state", str(state)).returncode == 0
    proc = neardup("check", QUAKE_COPY, "--state", str(state))
    assert proc.stdout.splitlines()[0] == "unique"
    assert "older than the retention window" in proc.stdout
    assert (
        proc.stdout.splitlines()[-1]
        == "  (checked as an event of now: give the text's time with --ts to check it as of then)"
    )
    proc = neardup("check", QUAKE_COPY, "--state", str(state), "--ts", "2024-03-01T09:00:00Z")
    assert proc.stdout.startswith("duplicate of a1  ("), proc.stderr
    assert "--ts" not in proc.stdout
    proc = neardup("check", QUAKE_COPY, "--state", str(state), "--ts", "1709283600")  # seconds, not ms
    assert proc.returncode == 1 and "if it is seconds, send it x 1000" in proc.stderr


def test_check_sends_its_time_to_the_worker(worker: str) -> None:
    proc = neardup("check", "some text", "--ts", "1709283600000", "--url", worker)
    assert proc.returncode == 0, proc.stderr
    assert FakeWorker.bodies[-1] == {"text": "some text", "ts": 1709283600000}
    proc = neardup("check", "--file", "-", "--ts", "1709283600000", "--url", worker)
    assert proc.returncode == 2 and "--id and --ts go with a TEXT" in proc.stderr


def test_an_explanation_shows_two_texts_from_where_they_part() -> None:
    """Two texts that open alike for longer than a line: each shown from a little before their
    first difference, where two cut lines of one opening told nothing apart."""
    opening = "Deepen the reform and renew the mechanisms of the four good managements " * 3
    found = {
        "id": "ev197",
        "verdict": "duplicate",
        "duplicate_of": "ev066",
        "distance": 6,
        "similarity": 0.898,
        "chain": ["ev197", "ev066"],
        "event_time": None,
        "text": opening + "in the county, said the report on Monday.",
        "original": {"text": opening + "in every village of the province.", "event_time": None},
    }
    lines = list(explanation_lines(found))
    text, original = (line.split(None, 1)[1] for line in lines if line.startswith(("  text", "  original")))
    assert text.startswith("…") and text.endswith("four good managements in the county, said the report on Monday.")
    assert original.startswith("…") and original.endswith("four good managements in every village of the province.")
    found |= {"text": "Short one.", "original": {"text": "Short two.", "event_time": None}}
    assert [line for line in explanation_lines(found) if line.startswith(("  text", "  original"))] == [
        "  text       Short one.",
        "  original   Short two.",
    ]


def test_an_explanation_of_a_unique_event_says_whether_later_copies_still_find_it() -> None:
    """``--json`` had ``in_window``; the lines a person reads did not say it."""
    found = {"id": "e1", "verdict": "unique", "event_time": 1709283600000, "text": "a story"}
    assert next(explanation_lines({**found, "in_window": True})) == (
        "e1  unique (no earlier event within the thresholds; inside the retention window: later copies still find it)"
    )
    assert next(explanation_lines({**found, "in_window": False})).startswith("e1  unique, and behind the retention")
    assert next(explanation_lines(found)) == "e1  unique (no earlier event within the thresholds)"  # not known
