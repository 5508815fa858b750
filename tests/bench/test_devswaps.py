"""The dev set's fifth part: short posts, each with a hard negative one word apart."""

from __future__ import annotations

import gzip
import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bench import devswaps
from tests.bench.parts import SEED, assert_comes_last, first_part


@cache
def _built() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devswaps.extend(*first_part(), SEED, size=200)


def test_the_parts_before_are_unchanged_and_the_part_comes_last() -> None:
    assert_comes_last(_built(), devswaps.extend(*first_part(), SEED, size=200), "fw")
    assert len(_built()[0]) > 550


def test_each_swap_is_its_post_with_one_word_replaced() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    clusters = {t["id"]: t["cluster"] for t in truth}
    swaps = [t for t in truth if t["hard_negative"] == "short_word_swap"]
    assert len(swaps) >= 60 and {t["lang"] for t in swaps} == {"zh", "en"}
    for swap in swaps:
        before, after = text[swap["related"]], text[swap["id"]]
        assert before != after and clusters[swap["id"]] != clusters[swap["related"]]
        head = len(_common_prefix(before, after))
        tail = len(_common_prefix(before[::-1], after[::-1]))
        assert head + tail >= min(len(before), len(after)) - 12, "all but one word is the post's"


def test_a_swap_replaces_a_content_word_with_another() -> None:
    rng = random.Random(3)
    swapped = devswaps.word_swap("Database server is down", "en", rng, ["Check the backup volume"])
    assert swapped is not None and swapped != "Database server is down"
    assert swapped.endswith(" is down") or swapped.startswith("Database ")
    assert devswaps.word_swap("is it on", "en", rng, ["Check the backup volume"]) is None, "function words stay"
    zh = devswaps.word_swap("明天上午全市中小学停课", "zh", rng, ["今晚有大雨"])
    assert zh is not None and zh != "明天上午全市中小学停课"


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _log(path: Path, releases: list[tuple[str, str, list[str]]]) -> None:
    """A gzipped Debian change log of ``(version, signature date, entries)``, newest first."""
    text = "".join(
        f"tool ({version}) unstable; urgency=medium\n\n"
        + "".join(f"  * {entry}\n" for entry in entries)
        + f"\n -- Jane Doe <jane@example.org>  {date}\n\n"
        for version, date, entries in releases
    )
    path.mkdir(parents=True)
    with gzip.open(path / "changelog.Debian.gz", "wt", encoding="utf-8") as out:
        out.write(text)


def test_the_change_log_pool_ignores_later_uploads_and_a_sources_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package upgraded after the cutoff, and a second package of the same source, leave the
    pool of change-log posts as it was: the dev set does not move with the machine's updates."""
    old = [("1.0-1", "Mon, 02 Jan 2023 10:00:00 +0100", ["Fix crash when the config file is empty"])]
    upload = ("2.0-1", "Thu, 26 Nov 2026 03:25:22 -0500", ["New upstream release with many fixes"])
    monkeypatch.setattr(devswaps, "CHANGELOGS", tmp_path / "before")
    _log(tmp_path / "before" / "tool", old)
    before = devswaps.changelog_posts()
    monkeypatch.setattr(devswaps, "CHANGELOGS", tmp_path / "after")
    _log(tmp_path / "after" / "tool", [upload, *old])
    _log(tmp_path / "after" / "tool-common", [upload, *old])
    assert devswaps.changelog_posts() == before
    assert [post.text for post in before] == ["Fix crash when the config file is empty"]


def test_a_release_whose_date_cannot_be_read_is_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devswaps, "CHANGELOGS", tmp_path)
    _log(tmp_path / "tool", [("0.9-1", "sometime in 2019", ["Support the new config format"])])
    assert devswaps.changelog_posts() == []
