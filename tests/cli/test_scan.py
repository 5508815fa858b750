"""`neardup scan` end to end on real text: the CLI, its files, its exit status, its state."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import opencc
import pytest

from bench.wrappers import misread
from tests.engine.pairs import ADDED, FIELDS, HEADER, MORE, REVIEW
from worker.cli.inputs import default_sample

SAMPLE = Path(default_sample())


def real_texts(cjk: bool, count: int) -> list[str]:
    """Long real texts from the shipped sample corpus, one language at a time."""
    texts = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        text = json.loads(line)["text"]
        has_cjk = any("\u4e00" <= ch <= "\u9fff" for ch in text)
        if has_cjk == cjk and len(text) > (300 if cjk else 700) and text[:40] not in {t[:40] for t in texts}:
            texts.append(text)
    assert len(texts) >= count, "the shipped sample must hold enough long texts"
    return texts[:count]


def to_full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def run_scan(
    tmp_path: Path, lines: list[str | bytes], *extra: str, env: dict[str, str] | None = None
) -> tuple[int, list[dict], str]:
    source = tmp_path / "in.jsonl"
    with source.open("wb") as f:
        for line in lines:
            f.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli", "scan", str(source), "-o", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env=None if env is None else {**os.environ, **env},
    )
    verdicts = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return proc.returncode, verdicts, proc.stderr


def event(event_id: str, text: str, **fields: object) -> str:
    return json.dumps({"id": event_id, "text": text, **fields}, ensure_ascii=False)


def duplicate_of(tmp_path: Path, lines: list[str | bytes]) -> dict[str, str | None]:
    """Each event's earlier copy (None when unique), from a scan that must succeed."""
    status, verdicts, stderr = run_scan(tmp_path, lines)
    assert status == 0, stderr
    return {v["id"]: v.get("duplicate_of") for v in verdicts}


@pytest.fixture(scope="module")
def zh() -> list[str]:
    return real_texts(cjk=True, count=3)


@pytest.fixture(scope="module")
def en() -> list[str]:
    return real_texts(cjk=False, count=3)


def test_reposts_are_duplicates_of_the_original(tmp_path: Path, zh: list[str], en: list[str]) -> None:
    traditional = opencc.OpenCC("s2t").convert(zh[0])
    lines = [
        event("zh-orig", zh[0]),
        event("en-orig", en[0]),
        event("zh-other", zh[1]),
        event("zh-trad", traditional + " #新闻# https://t.cn/A6x9kLm"),
        event("en-repost", to_full_width(en[0]) + "\n\nRead more: https://example.com/a/1?utm=x #breaking @newsdesk"),
        event("en-other", en[1]),
    ]
    status, verdicts, _ = run_scan(tmp_path, lines)
    assert status == 0
    by_id = {v["id"]: v for v in verdicts}
    assert [v["id"] for v in verdicts] == ["zh-orig", "en-orig", "zh-other", "zh-trad", "en-repost", "en-other"]
    assert by_id["zh-trad"]["verdict"] == "duplicate" and by_id["zh-trad"]["duplicate_of"] == "zh-orig"
    assert by_id["en-repost"]["verdict"] == "duplicate" and by_id["en-repost"]["duplicate_of"] == "en-orig"
    for unique in ("zh-orig", "en-orig", "zh-other", "en-other"):
        assert by_id[unique]["verdict"] == "unique" and by_id[unique]["duplicate_of"] is None
    assert all(len(v["fingerprint"]) == 16 and int(v["fingerprint"], 16) >= 0 for v in verdicts)


def test_earliest_original_wins_and_ids_are_idempotent(tmp_path: Path, en: list[str]) -> None:
    first, second, third = en[0], en[0] + " (AP)", en[0] + " Follow us on Twitter."
    lines = [
        event("a", first),
        event("b", second),
        event("c", third),
        event("b", "completely different text now"),
        event("a", first),
    ]
    status, verdicts, _ = run_scan(tmp_path, lines)
    assert status == 0
    assert [(v["id"], v["verdict"], v["duplicate_of"]) for v in verdicts] == [
        ("a", "unique", None),
        ("b", "duplicate", "a"),
        ("c", "duplicate", "a"),
        ("b", "duplicate", "a"),
        ("a", "unique", None),
    ]
    written = (tmp_path / "out.jsonl").read_bytes().splitlines()
    assert (written[3], written[4]) == (written[1], written[0]), "a re-sent id's line is its first, byte for byte"


def test_bad_lines_are_dead_lettered_and_the_run_goes_on(tmp_path: Path, en: list[str]) -> None:
    lines: list[str | bytes] = [
        event("ok-1", en[0]),
        b"{broken json",
        b"\xff\xfe\x00garbage",
        json.dumps({"id": 42, "text": "numeric id"}),
        json.dumps({"id": "no-text"}),
        json.dumps(["not", "an", "object"]),
        event("too-big", "x" * 2_000_001),
        event("ok-2", en[1]),
    ]
    status, verdicts, stderr = run_scan(tmp_path, lines)
    assert status == 2
    assert [v["id"] for v in verdicts] == ["ok-1", "ok-2"]
    rejected = [json.loads(line) for line in (tmp_path / "out.deadletter.jsonl").read_text().splitlines()]
    assert [r["line"] for r in rejected] == [2, 3, 4, 5, 6, 7]
    reasons = " | ".join(r["reason"] for r in rejected)
    for expected in (
        "invalid JSON",
        "invalid UTF-8",
        "'id' must be a string",
        "missing field 'text'",
        "JSON object",
        "over the limit",
    ):
        assert expected in reasons
    assert "line 3 rejected: invalid UTF-8" in stderr
    assert "6 rejected" in stderr


def test_a_resent_id_gets_its_first_verdict_and_is_counted(tmp_path: Path, en: list[str]) -> None:
    """As the stream counts and warns of them: an id sent again gets its first verdict, and
    one sent with another text is told apart, since that text is never decided."""
    lines = [event("a", en[0]), event("b", en[1]), event("a", en[0]), event("b", en[2])]
    status, verdicts, stderr = run_scan(tmp_path, lines)
    assert status == 0 and [v["id"] for v in verdicts] == ["a", "b", "a", "b"]
    assert verdicts[3] == verdicts[1], "the first text's verdict, not a decision of the second"
    assert "2 re-sent ids given their first verdict again (1 with another text, which is not decided)" in stderr
    status, _, stderr = run_scan(tmp_path, lines[:3])
    assert status == 0 and "; 1 re-sent id given its first verdict again" in stderr


def test_blank_lines_are_skipped_and_counted(tmp_path: Path, en: list[str]) -> None:
    status, verdicts, stderr = run_scan(tmp_path, [event("a", en[0]), "", "   \t", event("b", en[1])])
    assert status == 0 and [v["id"] for v in verdicts] == ["a", "b"]
    assert "2 events: 2 unique, 0 duplicates, 0 rejected, 2 blank lines skipped in " in stderr
    assert not (tmp_path / "out.deadletter.jsonl").exists()


def test_state_dir_dedups_a_second_file_against_the_first(tmp_path: Path, zh: list[str]) -> None:
    state = tmp_path / "state"
    first = tmp_path / "one"
    second = tmp_path / "two"
    first.mkdir()
    second.mkdir()
    status, verdicts, _ = run_scan(first, [event("day1", zh[2])], "--state", str(state))
    assert status == 0 and verdicts[0]["verdict"] == "unique"
    status, verdicts, _ = run_scan(second, [event("day2", "【转载】" + zh[2] + "（完）")], "--state", str(state))
    assert status == 0
    assert verdicts[0]["verdict"] == "duplicate" and verdicts[0]["duplicate_of"] == "day1"


def test_short_texts_match_only_exactly(tmp_path: Path) -> None:
    lines = [
        event("s1", "Earthquake hits Tokyo"),
        event("s2", "EARTHQUAKE  hits Tokyo!! https://t.co/xyz"),
        event("s3", "Earthquake hits Osaka"),
        event("s4", "东京发生地震"),
        event("s5", "東京發生地震"),
        event("s6", "大阪发生地震"),
    ]
    status, verdicts, _ = run_scan(tmp_path, lines)
    assert status == 0
    assert [(v["verdict"], v["duplicate_of"]) for v in verdicts] == [
        ("unique", None),
        ("duplicate", "s1"),
        ("unique", None),
        ("unique", None),
        ("duplicate", "s4"),
        ("unique", None),
    ]


def test_texts_without_words_and_footer_like_posts_still_match_their_copies(tmp_path: Path) -> None:
    lines = [
        event("e1", "🔥🔥🔥😮👀"),
        event("e2", "🔥🔥🔥😮👀"),
        event("e3", "🚀🚀"),
        event("f1", "Our Standards: The Trust Principles. The council approved the new budget on Monday."),
        event("f2", "Our Standards: The Trust Principles. The council approved the new budget on Monday."),
        event("r1", "Read more: our analysis of the vote count in every district"),
        event("r2", "READ MORE: our analysis of the vote count in every district"),
    ]
    status, verdicts, _ = run_scan(tmp_path, lines)
    assert status == 0
    assert [(v["id"], v["duplicate_of"]) for v in verdicts] == [
        ("e1", None),
        ("e2", "e1"),
        ("e3", None),
        ("f1", None),
        ("f2", "f1"),
        ("r1", None),
        ("r2", "r1"),
    ]


def slip_words(text: str, every: int) -> str:
    """A stray key typed into one word of ``every``: a hasty retype. A consonant, which a word's
    skeleton keeps (a vowel slip, or two letters swapped around one, it folds away)."""
    words = text.split(" ")
    return " ".join(w[:2] + "q" + w[2:] if i % every == 3 and len(w) > 3 else w for i, w in enumerate(words))


def slip_han(text: str, every: int) -> str:
    """One Chinese character of ``every`` swapped with the next."""
    chars = list(text)
    for i in [i for i, c in enumerate(chars) if "\u4e00" <= c <= "\u9fff"][5::every]:
        if i + 1 < len(chars):
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return "".join(chars)


def test_long_stories_with_slips_throughout_are_found_by_word_bands(tmp_path: Path) -> None:
    """Slips in many words break both anchors and move the SimHash past the tables' reach;
    the word sketch's band keys still nominate the story (and with them off, it is missed)."""
    en, zh = real_texts(cjk=False, count=6), real_texts(cjk=True, count=6)
    lines = [event(f"en{i}", text) for i, text in enumerate(en)] + [event(f"zh{i}", text) for i, text in enumerate(zh)]
    lines += [event("en-slips", slip_words(en[3], 12)), event("zh-slips", slip_han(zh[5], 25))]
    status, verdicts, _ = run_scan(tmp_path, lines)
    by_id = {v["id"]: v for v in verdicts}
    assert status == 0 and [v["verdict"] for v in verdicts[:12]] == ["unique"] * 12
    assert (by_id["en-slips"]["verdict"], by_id["en-slips"]["duplicate_of"]) == ("duplicate", "en3")
    assert (by_id["zh-slips"]["verdict"], by_id["zh-slips"]["duplicate_of"]) == ("duplicate", "zh5")
    _, without, _ = run_scan(tmp_path, lines, env={"NEARDUP_WORD_BANDS": "0"})
    assert [v["verdict"] for v in without[12:]] == ["unique", "unique"]


def test_a_store_takes_another_number_of_word_bands(tmp_path: Path) -> None:
    """Band i is the same key whatever the number of bands: a state stored with 8 is read with
    16 (no rebuild, no new deployment), and what it holds is found through the bands both have."""
    en = real_texts(cjk=False, count=4)
    state = tmp_path / "state"
    first, second, third = (tmp_path / name for name in ("first", "second", "third"))
    for run in (first, second, third):
        run.mkdir()
    stored = [event(f"en{i}", text) for i, text in enumerate(en)]
    status, _, _ = run_scan(first, stored, "--state", str(state), env={"NEARDUP_WORD_BANDS": "8"})
    assert status == 0
    shutil.copytree(state, tmp_path / "control")  # the same store, read without word bands
    copy = [event("en-slips", slip_words(en[3], 12))]
    status, verdicts, stderr = run_scan(second, copy, "--state", str(state), env={"NEARDUP_WORD_BANDS": "16"})
    assert status == 0, stderr
    assert (verdicts[0]["verdict"], verdicts[0]["duplicate_of"]) == ("duplicate", "en3")
    status, without, _ = run_scan(third, copy, "--state", str(tmp_path / "control"), env={"NEARDUP_WORD_BANDS": "0"})
    assert status == 0 and without[0]["verdict"] == "unique"


def test_a_copy_across_the_short_length_is_found_either_way(tmp_path: Path) -> None:
    """A review under ``short_chars`` reposted under a header with a sentence added past it, and
    a longer review reposted under a header with its last sentences cut under it: both copies,
    in both arrival orders (the second order: the original after its copy). Only word bands
    find three of the four; the grown copy after its post is also found by a header lead."""
    post, grown = REVIEW, HEADER + REVIEW + ADDED
    story, shrunk = REVIEW + ADDED, HEADER + REVIEW
    for i, (a, b) in enumerate([(post, grown), (grown, post), (story, shrunk), (shrunk, story)]):
        run = tmp_path / str(i)
        run.mkdir()
        assert duplicate_of(run, [event("a", a), event("b", b)]) == {"a": None, "b": "a"}


def test_a_post_reposted_under_a_header_of_fields_is_found(tmp_path: Path) -> None:
    """A post too short for word bands, reposted under "date, account, 发布" with sentences
    after it that take it past ``short_chars``: found by the lead it has after the header, in
    either arrival order."""
    post = REVIEW[: REVIEW.index("早餐")]
    repost = FIELDS + post + ADDED + MORE
    (tmp_path / "after").mkdir()
    (tmp_path / "before").mkdir()
    after = [event("post", post), event("repost", repost)]
    assert duplicate_of(tmp_path / "after", after) == {"post": None, "repost": "post"}
    before = [event("repost", repost), event("post", post)]
    assert duplicate_of(tmp_path / "before", before) == {"repost": None, "post": "repost"}


def test_same_opening_different_story_is_unique(tmp_path: Path, zh: list[str], en: list[str]) -> None:
    zh_mix = zh[0][:80] + zh[1][80:]
    en_mix = en[0][:150] + en[1][150:]
    status, verdicts, _ = run_scan(
        tmp_path, [event("z0", zh[0]), event("e0", en[0]), event("z1", zh_mix), event("e1", en_mix)]
    )
    assert status == 0
    assert [v["verdict"] for v in verdicts] == ["unique"] * 4


def test_fingerprints_computed_ahead_give_exactly_the_verdicts_of_one_process(tmp_path: Path) -> None:
    """A large file is parsed and fingerprinted ahead by a helper process; the decision must not change.

    The shipped sample twice over (every second copy a repost of the first), with refused and
    blank lines among them, through ``scan`` with and without the helper."""
    import io

    from worker.cli.scan import scan
    from worker.settings import Settings

    lines = SAMPLE.read_bytes().splitlines()
    copies = [json.dumps({**json.loads(line), "id": "copy-" + json.loads(line)["id"]}).encode() for line in lines]
    feed = b"\n".join(lines + [b"", b"{not json", b'{"id": 7, "text": "x"}'] + copies) + b"\n"
    results = {}
    for ahead in (False, True):
        out, dead = io.BytesIO(), tmp_path / f"dead-{ahead}.jsonl"
        summary = scan(io.BytesIO(feed), out, dead, Settings(), tmp_path / f"state-{ahead}", ahead=ahead)
        results[ahead] = (out.getvalue(), dead.read_text(encoding="utf-8"), summary.events, summary.rejected)
    assert results[True] == results[False]
    verdicts = [json.loads(line) for line in results[True][0].splitlines()]
    assert len(verdicts) == 2 * len(lines) and results[True][3] == 2
    assert sum(v["verdict"] == "duplicate" and v["id"].startswith("copy-") for v in verdicts) == len(lines)


def test_a_scan_without_a_state_decides_as_one_with_it_and_leaves_nothing_behind(tmp_path: Path) -> None:
    """Without ``--state`` the index lives in a temporary directory, never flushed and released
    without being made durable; the verdicts must be those of a kept state, the exit clean, and
    the directory gone."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    copies = [json.dumps({**json.loads(line), "id": "copy-" + json.loads(line)["id"]}) for line in lines]
    temp = tmp_path / "tmp"
    temp.mkdir()
    kept_dir, temp_dir = tmp_path / "kept", tmp_path / "temp"
    kept_dir.mkdir(), temp_dir.mkdir()
    kept = run_scan(kept_dir, [*lines, *copies], "--state", str(tmp_path / "state"))
    temporary = run_scan(temp_dir, [*lines, *copies], env={"TMPDIR": str(temp)})
    assert temporary[0] == kept[0] == 0, temporary[2]
    assert temporary[1] == kept[1]
    assert sum(v["verdict"] == "duplicate" for v in temporary[1]) >= len(lines)
    assert "Traceback" not in temporary[2]
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("ahead", [False, True])
def test_a_text_that_cannot_be_fingerprinted_is_dead_lettered_and_the_scan_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, en: list[str], ahead: bool
) -> None:
    """A panic in the native code reaches Python as pyo3's PanicException, a BaseException: the
    line is rejected with the reason, in the helper process (forked, so it sees this patch) or not."""
    import io

    from worker.cli.scan import scan
    from worker.engine import fingerprint as engine
    from worker.settings import Settings

    class PanicException(BaseException):
        pass

    real = engine.fingerprint

    def panics(text: str, settings: Settings) -> engine.Fingerprint:
        if "PANIC" in text:
            raise PanicException("index out of bounds")
        return real(text, settings)

    monkeypatch.setattr(engine, "fingerprint", panics)
    lines = [event("a", en[0]), event("bad", "PANIC " + en[1]), event("b", en[1]), event("a-copy", en[0])]
    out, dead = io.BytesIO(), tmp_path / "dead.jsonl"
    feed = ("\n".join(str(line) for line in lines) + "\n").encode()
    summary = scan(io.BytesIO(feed), out, dead, Settings(), tmp_path / "state", ahead=ahead)
    verdicts = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(v["id"], v["verdict"], v.get("duplicate_of")) for v in verdicts] == [
        ("a", "unique", None),
        ("b", "unique", None),
        ("a-copy", "duplicate", "a"),
    ]
    rejected = [json.loads(line) for line in dead.read_text(encoding="utf-8").splitlines()]
    assert [(r["line"], r["reason"]) for r in rejected] == [
        (2, "fingerprint failed: PanicException: index out of bounds")
    ]
    assert summary.rejected == 1 and summary.events == 3


def test_a_short_post_with_one_slip_in_its_middle_is_found(tmp_path: Path) -> None:
    """A swap mid-post breaks both edge keys and most bands; a half key finds the original and
    its words verify it. One Han character changed is another message."""
    lines = [
        event("post", "3.结账太慢，要等待很久"),
        event("other", "门口停车很方便，推荐"),
        event("swap", "3.结账慢太，要等待很久"),
        event("changed", "3.结账太快，要等待很久"),
        event("typo", "Update gbp.cnof now"),
        event("fixed", "Update gbp.conf now"),
    ]
    assert duplicate_of(tmp_path, lines) == {
        "post": None, "other": None, "swap": "post", "changed": None, "typo": None, "fixed": "typo",
    }  # fmt: skip


def test_a_copy_under_a_title_repeating_its_opening_is_found(tmp_path: Path) -> None:
    """A forum header made of a short post's first words is as long as the post; dropped, the
    copy is its original. A header that opens another post does not make it a copy."""
    lines = [
        event("post", "送货速度快，"),
        event("titled", "【分享】送货速度快 送货速度快，"),
        event("other", "【送货速度快】 送货速度快的店，推荐"),
        event("thread", "Fix the build."),
        event("re", "[Thread] Fix the build\nFix the build."),
        event("gone", "xdg-su is gone."),
        event("said", "xdg-su is gone:\nxdg-su is gone."),
    ]
    assert duplicate_of(tmp_path, lines) == {
        "post": None, "titled": "post", "other": None, "thread": None, "re": "thread", "gone": None, "said": "gone",
    }  # fmt: skip


def _scan_once(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "in.jsonl"
    source.write_text(event("e1", "Heavy rain floods the streets of Osaka, officials say.") + "\n", encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "worker.cli", "scan", str(source), "-o", str(tmp_path / "out.jsonl"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_state_that_is_a_file_or_someone_elses_directory_is_refused_in_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine", encoding="utf-8")
    proc = _scan_once(tmp_path, "--state", str(a_file))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert (
        proc.stderr.strip()
        == f"neardup scan: --state {a_file} is a file; give it a directory: a new one, or one a scan made"
    )
    theirs = tmp_path / "photos"
    theirs.mkdir()
    (theirs / "cat.jpg").write_bytes(b"\xff\xd8")
    proc = _scan_once(tmp_path, "--state", str(theirs))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "no neardup index" in proc.stderr
    assert sorted(p.name for p in theirs.iterdir()) == ["cat.jpg"]  # nothing written among their files
    assert a_file.read_text(encoding="utf-8") == "mine"


def test_a_state_of_other_settings_is_refused_before_the_output_is_touched(tmp_path: Path) -> None:
    """Refused after the output was opened, a rerun with a wrong flag emptied the last run's verdicts."""
    state = tmp_path / "state"
    assert _scan_once(tmp_path, "--state", str(state)).returncode == 0
    kept = (tmp_path / "out.jsonl").read_bytes()
    assert b'"e1"' in kept
    proc = _scan_once(tmp_path, "--state", str(state), "--plan", "4x16")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"--state {state} was built with plan 10x" in proc.stderr and "not 4x16" in proc.stderr
    assert (tmp_path / "out.jsonl").read_bytes() == kept
    proc = _scan_once(tmp_path, "--state", str(state), "--shingle-n", "1")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"--state {state} was built with NEARDUP_SHINGLE_N=2, not 1:" in proc.stderr
    assert (tmp_path / "out.jsonl").read_bytes() == kept


def test_a_state_in_use_or_of_a_worker_is_refused_before_the_output_is_touched(tmp_path: Path) -> None:
    """A second scan of one --state left a RocksDB traceback after emptying its output; a
    worker's stores were written into, a verdict store given an index's families."""
    from worker.settings import Settings
    from worker.state.index import BlockIndex
    from worker.state.partition import IndexPartition
    from worker.state.verdicts import VerdictPartition

    settings = Settings()
    (tmp_path / "out.jsonl").write_text("the last run's verdicts\n", encoding="utf-8")
    held = tmp_path / "held"
    with BlockIndex(held, settings.block_plan, retention_ms=settings.retention_ms):
        proc = _scan_once(tmp_path, "--state", str(held))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"--state {held} is in use by another process" in proc.stderr
    store = IndexPartition(tmp_path / "index-0", settings.block_plan, settings.retention_ms)
    store.index.put_record("changelog:topic", b"acme.index-changelog")
    store.close()
    proc = _scan_once(tmp_path, "--state", str(tmp_path / "index-0"))
    assert proc.returncode == 1 and "is a worker's index store (a copy of acme.index-changelog)" in proc.stderr
    VerdictPartition(tmp_path / "verdict-0", settings.retention_ms).close()
    proc = _scan_once(tmp_path, "--state", str(tmp_path / "verdict-0"))
    assert proc.returncode == 1 and "holds a database that is not a neardup index" in proc.stderr
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8") == "the last run's verdicts\n"


def test_events_older_than_the_window_behind_the_newest_are_counted_as_not_stored(tmp_path: Path) -> None:
    day, t0 = 86_400_000, 1_700_000_000_000
    texts = [
        "The regional water authority said on Thursday that reservoir levels had fallen below forty percent.",
        "A new rail line between the two harbour towns opened to passengers after six years of building work.",
    ]
    lines = [
        event("new", texts[0], ts=t0 + 30 * day),
        event("old", texts[1], ts=t0 + 1 * day),  # 29 days behind the newest: outside 7 days
        event("old-copy", texts[1] + " (Reuters)", ts=t0 + 1 * day + 1),
    ]
    status, verdicts, stderr = run_scan(tmp_path, lines)
    assert status == 0
    assert [v["verdict"] for v in verdicts] == ["unique", "unique", "unique"]  # "old" left no trace
    assert "2 events older than the retention window (7 days) behind the newest event" in stderr
    status, _, stderr = run_scan(tmp_path, lines[:1])
    assert status == 0 and "older than the retention window" not in stderr


def test_an_id_of_an_earlier_run_gets_its_first_verdict_again(tmp_path: Path, en: list[str]) -> None:
    """A run into a store that holds events looks every id up: a new run's skip of the lookup
    (for ids it has not seen itself) is only for a store that never held an event."""
    state = tmp_path / "state"
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    status, verdicts, _ = run_scan(
        first, [event("x1", en[0]), event("x2", "Breaking: " + en[0])], "--state", str(state)
    )
    assert status == 0 and verdicts[1]["duplicate_of"] == "x1"
    status, again, _ = run_scan(second, [event("x2", en[1])], "--state", str(state))  # re-sent id, other text
    assert status == 0 and again == verdicts[1:]


REPO = Path(__file__).resolve().parents[2]


def scan_in(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``neardup scan`` run from ``cwd`` (this tree's code still), as a user in their directory."""
    return subprocess.run(
        [sys.executable, "-m", "worker.cli", "scan", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_output_dash_is_stdout_and_dead_letters_go_to_the_current_directory(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(event("a", "first post") + "\n" + '{"id": 7, "text": "x"}\n' + event("b", "other"), "utf-8")
    proc = scan_in(tmp_path, str(source), "-o", "-")
    assert proc.returncode == 2
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == ["a", "b"]
    assert "neardup scan: 2 events: 2 unique" in proc.stderr  # the summary stays on stderr
    assert "neardup scan: 1 rejected line written to neardup-deadletter.jsonl" in proc.stderr
    assert not (tmp_path / "-").exists()
    assert json.loads((tmp_path / "neardup-deadletter.jsonl").read_text("utf-8"))["line"] == 2
    assert "JSON Lines" not in proc.stderr  # some lines were events: the file is of the right kind


def test_a_clean_run_says_the_dead_letter_file_it_finds_is_an_earlier_runs(tmp_path: Path) -> None:
    """A newcomer's second, clean run left the first run's dead letters beside its verdicts
    without a word, as if it had rejected them."""
    source = tmp_path / "in.jsonl"
    source.write_text(event("a", "first post") + "\n" + '{"id": "no-text"}\n', "utf-8")
    assert scan_in(tmp_path, str(source), "-o", "out.jsonl").returncode == 2
    source.write_text(event("a", "first post") + "\n", "utf-8")
    proc = scan_in(tmp_path, str(source), "-o", "out.jsonl")
    assert proc.returncode == 0
    assert proc.stderr.splitlines()[-1] == (
        "neardup scan: out.deadletter.jsonl is an earlier run's: this one rejected no line"
    ), proc.stderr


def test_a_file_of_no_event_at_all_is_told_what_a_line_must_be(tmp_path: Path) -> None:
    """A newcomer's CSV got a rejection a line and nothing that said the file was of another kind."""
    source = tmp_path / "feed.csv"
    source.write_text("id,text\na1,hello world\na2,another line\n", "utf-8")
    proc = scan_in(tmp_path, str(source), "-o", "-")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f'neardup scan: no line of {source} was an event: it takes JSON Lines, one object {{"id": ..., "text": ...,'
        ' "ts"?: ...} a line'
    )


def test_output_to_a_device_puts_dead_letters_in_the_current_directory(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(event("a", "first post") + "\n" + '{"id": "no-text"}\n', "utf-8")
    proc = scan_in(tmp_path, str(source), "-o", os.devnull)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert "1 rejected line written to neardup-deadletter.jsonl" in proc.stderr
    assert (tmp_path / "neardup-deadletter.jsonl").exists()
    assert not Path(os.devnull + ".deadletter.jsonl").exists()
    explicit = tmp_path / "mine.jsonl"
    proc = scan_in(tmp_path, str(source), "-o", "-", "--dead-letter", str(explicit))
    assert proc.returncode == 2 and f"written to {explicit}" in proc.stderr and explicit.exists()


def test_a_missing_input_is_one_line_naming_it(tmp_path: Path) -> None:
    proc = scan_in(tmp_path, "nope.jsonl")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "neardup scan: nope.jsonl: no such file\n")


def test_a_leading_byte_order_mark_is_not_part_of_line_one(tmp_path: Path) -> None:
    lines = [event("first", "a post saved by a Windows editor"), event("second", "another post entirely")]
    status, verdicts, stderr = run_scan(tmp_path, [b"\xef\xbb\xbf" + lines[0].encode(), lines[1]])
    assert status == 0, stderr
    assert [v["id"] for v in verdicts] == ["first", "second"]
    proc = scan_in(tmp_path, "-", stdin="\ufeff" + lines[0] + "\n")
    assert proc.returncode == 0 and json.loads(proc.stdout)["id"] == "first"


def test_chunks_prepared_here_while_the_helper_is_behind_keep_the_input_order(tmp_path: Path) -> None:
    """While the next chunk to decide is still with the helper, the scan prepares a later one
    itself; the chunks must still come out in input order, each with its own lines' events."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    from worker.cli import scan as scan_module
    from worker.settings import Settings

    settings = Settings()
    lines = SAMPLE.read_bytes().splitlines()
    chunks = [
        [scan_module._Line(at + i, len(raw), raw) for i, raw in enumerate(lines[at : at + 10])]
        for at in range(0, 120, 10)
    ]
    submitted = []

    def slow_prepare(raws: list[bytes], settings: Settings) -> list:
        submitted.append(raws[0])
        time.sleep(0.3)  # a helper far behind: this process prepares meanwhile
        return scan_module.prepare(raws, settings)

    class SlowHelper(ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
            return super().submit(slow_prepare, *args, **kwargs)

    with SlowHelper(max_workers=1) as helper:
        out = list(scan_module._prepared(iter(chunks), helper, settings))
    assert [chunk for chunk, _ in out] == chunks
    assert [ready for _, ready in out] == [scan_module.prepare([line.raw for line in c], settings) for c in chunks]
    assert 0 < len(submitted) < len(chunks)


@pytest.mark.parametrize(
    "args",
    [
        ("-o", "{input}"),
        ("-o", "{tmp}/out.jsonl", "--dead-letter", "{input}"),
        ("-o", "{tmp}/out.jsonl", "--dead-letter", "{tmp}/out.jsonl"),
        ("-o", "{tmp}/new", "--state", "{tmp}/new"),
    ],
)
def test_an_output_that_is_the_input_or_another_output_is_refused_untouched(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """Opened for writing, ``-o`` the input emptied it (the scan read 0 events), ``--dead-letter``
    the input cut it short mid-run, and one file for both interleaved broken lines."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(SAMPLE.read_bytes())
    given = [arg.format(input=source, tmp=tmp_path) for arg in args]
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli", "scan", str(source), *given],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "give each its own path" in proc.stderr
    assert source.read_bytes() == SAMPLE.read_bytes()
    assert not (tmp_path / "new").exists()


def test_sigterm_ends_a_scan_as_ctrl_c_does_leaving_no_helper_and_no_temporary_index(tmp_path: Path) -> None:
    """By the default action the helper stayed blocked on its pipe forever, the temporary index
    stayed on disk, and nothing was said."""
    import signal
    import time

    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    source = tmp_path / "big-input-for-sigterm.jsonl"
    with source.open("w", encoding="utf-8") as f:
        for copy in range(40):  # over the 2 MB from which a helper fingerprints ahead
            for line in lines:
                f.write(json.dumps({**json.loads(line), "id": f"{copy}-{json.loads(line)['id']}"}) + "\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "worker.cli", "scan", str(source), "-o", str(out)],
        env={**os.environ, "TMPDIR": str(temp)},
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not (out.exists() and out.stat().st_size > 0):  # deciding, with its helper
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted; the output holds the verdicts of the lines before" in stderr
    decided = re.search(r"\((\d+) events? decided, 0 rejected\)", stderr)
    assert decided is not None and int(decided.group(1)) == len(out.read_text().splitlines()), stderr
    assert "Traceback" not in stderr
    assert list(temp.iterdir()) == []
    time.sleep(1)
    running = [p for p in Path("/proc").glob("[0-9]*/cmdline") if _reads(p, source.name)]
    assert running == [], "a helper outlived the scan"


def _reads(cmdline: Path, name: str) -> bool:
    try:
        return name.encode() in cmdline.read_bytes()
    except OSError:  # the process ended meanwhile
        return False


def test_a_story_in_a_pages_frame_markup_or_a_wrong_decoding_is_found_by_its_plain_text(tmp_path: Path) -> None:
    """What a scraped or converted copy carries: a site's menu and footer, HTML escapes,
    UTF-8 misread as Windows-1252, Taiwan's words. Each copy is found by scan, candidates and
    all, and two stories in one site's frame stay apart."""
    frame = (
        '<nav><a href="/">Home</a> | <a href="/news">News</a> | <a href="/sport">Sport</a> | '
        '<a href="/weather">Weather</a></nav><h1>Local News</h1><p>{}</p><div class="share">Share on '
        "Facebook · Share on Twitter · Email this story</div><footer>© 2024 Springfield Daily. All rights "
        "reserved.</footer>"
    )
    bridge = "The council voted to close the old bridge for two years of repairs."
    fire = "Police said a fire at the harbour warehouse was put out overnight."
    review = "配置合理，速度较快，没有系统，没有软件。屏幕没坏点，外观还可以"
    cafe = "Don’t miss the café’s “grand reopening” on Friday, the chef’s new menu is out"
    lines = [
        event("bridge-page", frame.format(bridge)),
        event("fire-page", frame.format(fire)),
        event("bridge", bridge),
        event("review", review),
        event("review-tw", "配置合理，速度較快，沒有系統，沒有軟體。螢幕沒壞點，外觀還可以"),
        event("cafe", cafe),
        event("cafe-misread", misread(cafe)),
        event("cafe-escaped", cafe.replace("’", "&#8217;").replace("“", "&ldquo;").replace("”", "&rdquo;")),
    ]
    found = duplicate_of(tmp_path, lines)
    assert found == {
        "bridge-page": None,
        "fire-page": None,
        "bridge": "bridge-page",
        "review": None,
        "review-tw": "review",
        "cafe": None,
        "cafe-misread": "cafe",
        "cafe-escaped": "cafe",
    }
