"""``found_by``: where the index met an event and its original, as ``/explain`` reports it."""

from __future__ import annotations

from tests.engine.pairs import ADDED, FIELDS, HEADER, MORE, REVIEW, is_duplicate
from worker.engine.blocks import plan_for
from worker.engine.fingerprint import Fingerprint, fingerprint
from worker.engine.match import found_by
from worker.engine.normalize import normalize
from worker.settings import Settings

PLAN = plan_for(k=3, expected=10_000_000)
STORY = (
    "The city council approved the new budget on Tuesday after a long debate about school funding, "
    "road repairs and the cost of the new library in the northern district."
)


def bare(simhash: int) -> Fingerprint:
    return Fingerprint(simhash, b"", None, 0)


def test_tables_are_those_whose_block_keys_agree() -> None:
    fp = 0x0123_4567_89AB_CDEF
    assert found_by(PLAN, bare(fp), bare(fp)) == [f"table {t}" for t in range(len(PLAN.tables))]
    flipped = fp ^ 0b1011  # three bits: the plan guarantees at least one shared table
    shared = found_by(PLAN, bare(fp), bare(flipped))
    expected = [f"table {t}" for t, (a, b) in enumerate(zip(PLAN.keys(fp), PLAN.keys(flipped), strict=True)) if a == b]
    assert shared == expected and 1 <= len(shared) < len(PLAN.tables)
    assert found_by(PLAN, bare(fp), bare(~fp & (1 << 64) - 1)) == []


def test_anchors_and_exact_texts_are_named() -> None:
    settings = Settings()
    story, teaser = fingerprint(STORY, settings), fingerprint(STORY + " Read more at our site today.", settings)
    assert any(name.startswith("anchor 0") for name in found_by(PLAN, teaser, story))
    short = fingerprint("Breaking: quake", settings)
    assert short.exact is not None
    assert "exact text" in found_by(PLAN, short, fingerprint("breaking:  QUAKE", settings))
    assert "exact text" not in found_by(PLAN, short, fingerprint("Breaking: flood", settings))


def test_word_bands_are_named() -> None:
    settings = Settings()
    story = STORY * 3
    words = story.split(" ")
    slipped = " ".join(w[0] + w[2] + w[1] + w[3:] if i % 10 == 4 and len(w) > 3 else w for i, w in enumerate(words))
    found = found_by(PLAN, fingerprint(slipped, settings), fingerprint(story, settings))
    assert any(name.startswith("word band ") for name in found)
    other = (
        "Heavy rain flooded parts of the coastal city overnight, forcing hundreds of residents to leave their "
        "homes, and emergency crews used boats to reach stranded families while schools opened as shelters."
    )
    assert found_by(PLAN, fingerprint(slipped, settings), fingerprint(other * 3, settings)) == []


def test_a_post_and_its_copy_across_the_short_length_meet_by_word_bands() -> None:
    """A header and an added sentence take a short post past ``short_chars``, a header and a
    dropped sentence bring a longer one under it: the two sides of a pair are found by
    different keys (character keys, block tables), and with both ends edited no anchor is
    left. A short text of half ``short_chars`` and more keeps its word bands for that."""
    settings = Settings()
    post, grown = fingerprint(REVIEW, settings), fingerprint(HEADER + REVIEW + ADDED, settings)
    assert post.bands and not grown.bands and grown.in_tables  # one short text, one in the tables
    assert not set(post.anchors) & set(grown.anchors)
    assert any(name.startswith("word band ") for name in found_by(PLAN, grown, post))
    assert is_duplicate(HEADER + REVIEW + ADDED, REVIEW)

    story, shrunk = fingerprint(REVIEW + ADDED, settings), fingerprint(HEADER + REVIEW, settings)
    assert story.in_tables and shrunk.bands
    assert any(name.startswith("word band ") for name in found_by(PLAN, shrunk, story))
    assert is_duplicate(HEADER + REVIEW, REVIEW + ADDED)


def test_a_post_under_half_the_short_length_keeps_no_word_bands() -> None:
    """Under half of ``short_chars`` a copy past it would hold less than half of the words
    the post's bands were drawn from, and they would rarely meet: the post's character keys
    and anchors are all it stores."""
    settings = Settings()
    half = settings.short_chars // 2
    under = next(REVIEW[:n] for n in range(1, len(REVIEW)) if len(normalize(REVIEW[:n])) == half - 1)
    at = next(REVIEW[:n] for n in range(1, len(REVIEW)) if len(normalize(REVIEW[:n])) == half)
    assert fingerprint(under, settings).bands and fingerprint(under, settings).word_bands == ()
    assert fingerprint(at, settings).bands and fingerprint(at, settings).word_bands


def test_a_short_post_under_a_header_of_fields_is_found_by_a_header_lead() -> None:
    """A post of 139 characters (too few for word bands) under a header of three fields with
    two reviews' worth of sentences after it: a longer text, in the tables, that shares neither
    anchor with the post. It is stored under, and looks up, the lead key the post would have
    after each of its first breaks, and the post is stored under, and looks up, its own: the
    two meet in either arrival order."""
    settings = Settings()
    post = REVIEW[: REVIEW.index("早餐")]
    copy = FIELDS + post + ADDED + MORE
    short, grown = fingerprint(post, settings), fingerprint(copy, settings)
    assert short.bands and not short.word_bands and grown.in_tables
    assert any(name.startswith("header lead ") for name in found_by(PLAN, grown, short))
    assert found_by(PLAN, short, grown)  # the post after its repost
    assert is_duplicate(copy, post) and is_duplicate(post, copy)
