"""A post of a dozen characters with one slip is still a copy: found by its halves, verified by its
words; and a story with slips in one word of seven: its words fold to their skeletons."""

from __future__ import annotations

import pytest

from tests.engine.pairs import is_duplicate
from worker.engine import shorttext, slips, words
from worker.engine.blocks import plan_for
from worker.engine.fingerprint import fingerprint
from worker.engine.match import found_by
from worker.engine.normalize import normalize
from worker.engine.shapes import fold_shapes_and_sounds
from worker.engine.sketch import TOO_FEW_GRAMS, compare
from worker.settings import Settings

SETTINGS = Settings()

# (copy, original): each fails the 3-gram thresholds (or is too short for them) and passes on its words.
ONE_SLIP = [
    ("Updatc gbp.conf.", "Update gbp.conf."),  # OCR: a letter changed
    ("libeckti-dev (<= 1.20.0-1)", "libeckit-dev (<= 1.20.0-1)"),  # two letters swapped, a version kept
    ("Drop debain/tests", "Drop debian/tests"),  # two letters swapped in a path
    ("世界游锦泳标赛余卓成一米板夺冠", "世界游泳锦标赛余卓成一米板夺冠"),  # two Han characters swapped
    ("农行将住抓这次历史性的机遇，重塑辉煌。", "农行将抓住这次历史性的机遇，重塑辉煌。"),
]


@pytest.mark.parametrize(("copy", "original"), ONE_SLIP)
def test_a_short_post_with_one_slip_is_a_copy(copy: str, original: str) -> None:
    assert is_duplicate(copy, original) and is_duplicate(original, copy)
    canonical = [words.canonical(c.casefold()) for c in (copy, original)]
    assert slips.slipped(*canonical) is not None


def test_the_grams_alone_would_refuse_them() -> None:
    """What the slips rule adds: without it these pairs are refused on their grams."""
    for copy, original in ONE_SLIP:
        probe, stored = fingerprint(copy, SETTINGS), fingerprint(original, SETTINGS)
        similarity = compare(probe.sketch, stored.sketch)
        assert similarity.ruled_out == TOO_FEW_GRAMS or similarity.resemblance < SETTINGS.min_resemblance
        assert similarity.ruled_out or similarity.containment < SETTINGS.min_containment


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("服务态度很好，下次还来", "服务态度很差，下次还来"),  # a Han character changed: as often a word
        ("这家店的菜好吃，推荐", "这家店的菜不好吃，推荐"),  # one added
        ("Build 1.20.1 failed on arm64", "Build 1.20.2 failed on arm64"),  # a digit: another figure
        ("Updatc gbp.conb.", "Update gbp.conf."),  # two slips in 13 letters: one too many
        ("Deploy to eu-west", "Deploy to us-west"),  # one letter, but of a two-letter word: another word
    ],
)
def test_what_is_not_a_slip(a: str, b: str) -> None:
    assert not is_duplicate(a, b) and not is_duplicate(b, a)


def test_a_slip_budget_grows_with_the_text() -> None:
    base = "abcdefghijklmnopqrstuvwxyzabcd"  # 30 letters: three slips allowed
    three = "bacdefghijklmnopqrsutvwxyzabdc"
    assert slips.slipped(base, three) == pytest.approx(0.9)
    assert slips.slipped(base[:10], "bacdefghji") is None, "two slips in ten letters"
    assert slips.slipped("abcdefg", "abcdefh") is None, "under MIN_SLIP_CHARS: equal or nothing"


def _halves(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A text's half keys and half lookups, from its words as the fingerprint folds them."""
    return shorttext.half_keys(words.canonical(fold_shapes_and_sounds(normalize(text))).replace(" ", ""))


@pytest.mark.parametrize(
    ("copy", "original"),
    [
        ("3.结账太慢要等待了", "3.结账慢太要等待了"),  # a swap in the middle breaks both edges
        ("Update gbp.cnf now", "Update gbp.conf now"),  # a letter dropped: the copy looks up a length one more
        ("Update gbp.cconf now", "Update gbp.conf now"),  # one doubled: one less
    ],
)
def test_a_copy_with_one_slip_shares_a_half_key(copy: str, original: str) -> None:
    stored, _ = _halves(original)
    own, near = _halves(copy)
    assert set(own + near) & set(stored)
    probe, kept = fingerprint(copy, SETTINGS), fingerprint(original, SETTINGS)
    assert set(probe.probe_keys) & set(kept.exact_keys), "the fingerprint carries them"


def test_half_keys_only_for_texts_of_a_dozen_characters_or_so() -> None:
    assert _halves("短文本") == ((), ())
    assert _halves("x" * (shorttext.DENSE_EDGE_MAX_CHARS + 2)) == ((), ())
    assert len(_halves("这家店的服务态度非常好")[0]) == 2


# (copy, original): a short post under a header or with a sentence after it, and a slip in it:
# the grams fall under the containment floor; its words are a run of the copy's, one slip apart.
WITHIN = [
    (
        "题目：此时\n此时，他激动地连声道谢，上脸洋溢着幸福的微笑。机子确实比较热....",
        "此时，他激动地连声道谢，脸上洋溢着幸福的微笑。",
    ),
    (
        "【这是罗斯１９９】 这是罗斯１９９８年对中东的首轮和平交外斡旋。（国家计委国家统计局）",
        "这是罗斯１９９８年对中东的首轮和平外交斡旋。",
    ),
    (
        "[Thread] The ferry servcie resumes across the bay after the storm. More at noon",
        "The ferry service resumes across the bay after the storm",
    ),
]


@pytest.mark.parametrize(("copy", "original"), WITHIN)
def test_a_short_post_with_a_slip_inside_a_longer_one_is_a_copy(copy: str, original: str) -> None:
    assert is_duplicate(copy, original) and is_duplicate(original, copy)
    canonical = [words.canonical(c.casefold()) for c in (copy, original)]
    assert slips.slipped(*canonical) is None and slips.slipped_within(*canonical) is not None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Fix typo in the README", "Fix tpyo in the README and in the manual page of the tool"),  # too few letters
        (
            "服务态度很好，下次还会再来这家店",
            "服务态度很差，下次还会再来这家店吃饭，推荐给朋友",
        ),  # a Han character changed
        ("Disk usage on db1 is above ninety percent", "ALERT: Disk usage on db2 is above ninety percent again"),
        ("The council approved the budget on Monday", "The council rejected the budget on Monday after a vote"),
    ],
)
def test_a_run_of_a_longer_post_with_another_word_is_not_a_copy(a: str, b: str) -> None:
    assert not is_duplicate(a, b) and not is_duplicate(b, a)


# A story of 635 characters, a copy with 16 slips (11 of them a vowel or a doubled letter, 5 a
# consonant: "truvks", "sjop", "cosrs"), and another story that shares its topic and many words.
STORY = (
    "The city council voted on Tuesday evening to close the old harbour bridge to heavy trucks from next month, "
    "after engineers found cracks in two of its supporting beams during a routine inspection. Repairs are expected "
    "to take at least eight weeks, and freight companies will have to use the ring road, which adds about twenty "
    "minutes to every trip between the port and the industrial estate. Local shop owners welcomed the decision, "
    "saying the constant traffic had made the waterfront unsafe for pedestrians, but the haulage association warned "
    "that delivery costs would rise and that some of those costs would be passed on to customers."
)
SLIPPED = (
    "The city councel voted on Tusday evening to close the old harbor bridge to heacy truvks from next month, "
    "after engineers found cracks in two of its suporting beams durring a routine inspecton. Repairs are expectd "
    "to take at least eight weks, and freight companeis will have to use the ring raod, which adds about twenty "
    "mintues to every trip between the port and the industriel estate. Local sjop owners welcomed the decisoin, "
    "saying the constant trafic had made the waterfront unsafe for pedestrains, but the haulage assocation warnde "
    "that delivery cosrs would rise and that some of thoes costs would be pased on to customers."
)
OTHER = (
    "The city council voted on Tuesday evening to keep the old harbour bridge open to heavy trucks for another year, "
    "after engineers said the cracks found in its supporting beams last spring had not grown. A full survey will be "
    "carried out in the summer, and the council will decide then whether the ring road needs to be widened before "
    "any closure. Freight companies welcomed the decision, saying a detour would have added twenty minutes to every "
    "trip, but residents of the waterfront said the constant traffic made the area unsafe for pedestrians and "
    "promised to keep campaigning for a ban."
)


def test_a_story_with_slips_in_many_words_is_a_copy() -> None:
    plan = plan_for(k=SETTINGS.k, expected=SETTINGS.expected_fingerprints)
    probe, stored = fingerprint(SLIPPED, SETTINGS), fingerprint(STORY, SETTINGS)
    assert found_by(plan, probe, stored) and found_by(plan, stored, probe)
    assert is_duplicate(SLIPPED, STORY) and is_duplicate(STORY, SLIPPED)
    # What folding adds: without it, a slip in one word in seven costs the pair most of its word pairs.
    assert not is_duplicate(SLIPPED, STORY, SETTINGS.replace(fold_words=False))


def test_a_story_on_the_same_topic_is_not_a_copy_of_it() -> None:
    assert not is_duplicate(OTHER, STORY) and not is_duplicate(STORY, OTHER)


@pytest.mark.parametrize(
    ("copy", "original"),
    [
        ("Resource 1ost", "Resource lost"),  # a digit for a letter
        ("Has 0IDs: yes", "Has OIDs: yes"),
        ("Top 5ecret file", "Top Secret file"),
        ("Harcl or soft float", "Hard or soft float"),  # two letters for one
        ("use rnail map file", "use mail map file"),
        ("inc1ude the c1ass file", "include the class file"),  # the pairs folded on both sides
    ],
)
def test_a_short_post_misread_by_ocr_stays_a_copy(copy: str, original: str) -> None:
    assert is_duplicate(copy, original) and is_duplicate(original, copy)


@pytest.mark.parametrize(
    ("a", "b"),
    [("Paper size: C1", "Paper size: A1"), ("Paper size: B1", "Paper size: A1"), ("Tray B5 empty", "Tray A5 empty")],
)
def test_a_letter_beside_a_digit_changed_is_another_name(a: str, b: str) -> None:
    # Read as OCR reads it on both sides, "b1" and "a1" would be "bl" and "al", one slip apart.
    assert slips.slipped(*(words.canonical(t.casefold()) for t in (a, b))) is None
    assert not is_duplicate(a, b) and not is_duplicate(b, a)


def test_a_space_beside_a_figure_is_no_slip() -> None:
    assert is_duplicate("iPhone15 sodl out", "iPhone 15 sold out")


@pytest.mark.parametrize(("copy", "original"), [("element is lcosed", "element is closed"), ("Pirnt XML", "Print XML")])
def test_a_keyboard_slip_read_as_written_when_ocr_reading_moves_it_away(copy: str, original: str) -> None:
    # Read as OCR's, "lcosed" is further from "dosed" ("closed") than as written.
    assert is_duplicate(copy, original)
