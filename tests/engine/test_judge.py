"""Verification says why it refuses a candidate: ``/check`` and ``neardup ask check`` show it."""

from __future__ import annotations

from worker.engine.fingerprint import fingerprint
from worker.engine.match import WORDS_DIFFER, Candidate, Entry, Judgement, accepts, judge
from worker.engine.sketch import NUMBERS_DIFFER, TOO_FEW_GRAMS, compare
from worker.settings import Settings

SETTINGS = Settings()


def _judged(text: str, stored: str) -> Judgement:
    probe, kept = fingerprint(text, SETTINGS), fingerprint(stored, SETTINGS)
    candidate = Candidate(Entry("stored", kept.simhash, 0, 0, kept.sketch), (probe.simhash ^ kept.simhash).bit_count())
    judged = judge(probe, candidate, SETTINGS)
    assert accepts(probe, candidate, SETTINGS) == judged.similarity, "accepts is judge's similarity"
    return judged


def test_a_copy_is_accepted_with_no_reason() -> None:
    judged = _judged("Flood warnign for the river valley tonight", "Flood warning for the river valley tonight")
    assert judged.similarity is not None and judged.similarity > 0.6
    assert judged.refused == ""


def test_reports_of_one_template_are_refused_for_their_numbers() -> None:
    judged = _judged(
        "Route 12 bus to Easton delayed by 25 minutes, next departure 9:30.",
        "Route 12 bus to Easton delayed by 15 minutes, next departure 9:30.",
    )
    assert judged == Judgement(None, NUMBERS_DIFFER)


def test_short_posts_one_word_apart_are_refused_for_the_word() -> None:
    judged = _judged("What is your favorite hobby?", "What is your favorite book?")
    assert judged == Judgement(None, WORDS_DIFFER)


def test_two_tiny_posts_that_differ_are_refused_as_too_short() -> None:
    assert _judged("good morning", "good evening") == Judgement(None, TOO_FEW_GRAMS)
    assert _judged("早上好", "晚上好") == Judgement(None, TOO_FEW_GRAMS)


def test_unrelated_stories_are_refused_with_the_figures_they_missed() -> None:
    judged = _judged(
        "The central bank raised its benchmark interest rate by a quarter point on Wednesday, citing "
        "persistent inflation in housing and services, and signalled that further increases remain possible.",
        "Heavy rain flooded several districts of the coastal city overnight, closing schools and two metro "
        "lines while emergency crews pumped water from underground car parks.",
    )
    assert judged.similarity is None
    assert judged.refused.startswith("too little in common: resemblance 0.")
    assert "(needs 0.60)" in judged.refused and "(needs 0.80)" in judged.refused


STORY = (
    "The regional water authority said on Thursday that the reservoir serving the northern suburbs "
    "had fallen to its lowest level in twenty years after a dry winter, and asked households to cut "
    "their use by a fifth until the autumn rains. Garden sprinklers and car washing at home will be "
    "banned from Monday, and fines will follow for repeated breaches. Engineers are also bringing "
    "forward repairs to leaking mains, which lose about a tenth of the water pumped, and the authority "
    "is talking to neighbouring districts about buying water through the old canal link. Farmers "
    "downstream warned that lower releases from the dam would hurt the summer harvest."
)


def test_a_teaser_of_a_long_story_is_held_to_the_teaser_containment() -> None:
    """A short text against a long one (a teaser and its story) estimates its containment from a
    resemblance of a few hundredths, so the floor it needs is ``min_teaser_containment``."""
    # A teaser with a line of its own: its containment is under 1, so a floor can refuse it.
    teaser, story = fingerprint(STORY[:150] + " Watch the video.", SETTINGS), fingerprint(STORY, SETTINGS)
    candidate = Candidate(Entry("story", story.simhash, 0, 0, story.sketch), 0)
    similarity = compare(teaser.sketch, story.sketch)
    assert similarity.teaser and not similarity.long
    assert not compare(story.sketch, fingerprint(STORY + " Rain is forecast.", SETTINGS).sketch).teaser
    assert not compare(teaser.sketch, fingerprint(STORY[:100], SETTINGS).sketch).teaser
    needed = similarity.containment
    above = round(needed + 0.01, 2)
    assert needed < above <= 1
    refused = judge(teaser, candidate, Settings(min_containment=0.0, min_teaser_containment=above))
    assert refused.similarity is None and f"(needs {above:.2f})" in refused.refused
    assert judge(teaser, candidate, Settings(min_containment=1.0, min_teaser_containment=needed)).similarity == needed


def test_an_unrelated_post_against_a_story_is_refused_at_the_teaser_floor() -> None:
    judged = _judged("Flood warning for the river valley tonight, residents told to move to higher ground", STORY)
    assert judged.similarity is None and f"(needs {Settings().min_teaser_containment:.2f})" in judged.refused
