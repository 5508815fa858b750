"""``found_by``: where the index met an event and its original, as ``/explain`` reports it."""

from __future__ import annotations

from worker.engine.blocks import plan_for
from worker.engine.fingerprint import Fingerprint, fingerprint
from worker.engine.match import found_by
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
