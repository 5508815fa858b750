"""fingerprint(): one text in, the SimHash, sketch and exact keys the index needs out."""

from __future__ import annotations

import pickle

import mmh3
import pytest

from tests.engine.reference import textbook_simhash
from worker.engine.features import hashed_features
from worker.engine.fingerprint import Fingerprint, fingerprint
from worker.engine.leads import LONG_LEADS
from worker.engine.normalize import normalize
from worker.engine.segment import tokenize
from worker.engine.sketch import SHORT_SKETCH_BYTES, SKETCH_BYTES, compare
from worker.settings import Settings

SETTINGS = Settings()

ZH = (
    "国务院总理主持召开国务院常务会议，研究部署推动经济持续回升向好的政策措施。会议指出，今年以来，"
    "各地区各部门认真贯彻落实党中央决策部署，经济运行总体回升向好，高质量发展扎实推进。会议强调，"
    "要加大宏观政策调控力度，着力扩大内需、提振信心、防范风险，不断推动经济运行持续好转。"
    "会议还研究了进一步优化营商环境、支持民营企业发展壮大的具体举措，要求抓紧出台实施细则。"
)
EN = (
    "The Federal Reserve held interest rates steady on Wednesday but signaled that it could cut "
    "borrowing costs later this year if inflation keeps cooling. Officials said the labor market "
    "remained strong and consumer spending had held up better than expected. Markets rallied after "
    "the announcement, with the benchmark index closing at a record high. Analysts said the central "
    "bank was trying to balance the risk of cutting too soon against the damage of waiting too long."
)
OTHER_EN = (
    "Heavy rain flooded parts of the coastal city overnight, forcing hundreds of residents to leave "
    "their homes. Emergency crews used boats to reach stranded families, and the regional government "
    "opened schools as shelters. Forecasters warned that more storms were expected over the weekend "
    "and urged people to avoid travel unless necessary."
)


def distance(a: Fingerprint, b: Fingerprint) -> int:
    return (a.simhash ^ b.simhash).bit_count()


@pytest.mark.parametrize("text", [ZH, EN])
def test_simhash_is_the_weighted_simhash_of_the_features(text: str) -> None:
    tokens = tokenize(normalize(text))
    hashed = hashed_features(tokens, SETTINGS.shingle_n, fold=SETTINGS.fold_words)
    fp = fingerprint(text, SETTINGS)
    assert fp.simhash == textbook_simhash(list(zip(hashed.hashes.tolist(), hashed.weights.tolist(), strict=False)))
    assert fp.words == len(set(tokens))
    short = len(normalize(text)) <= SETTINGS.short_chars
    assert len(fp.sketch) >= SHORT_SKETCH_BYTES if short else len(fp.sketch) == SKETCH_BYTES + LONG_LEADS


def test_same_text_same_fingerprint() -> None:
    assert fingerprint(ZH, SETTINGS) == fingerprint(ZH, SETTINGS)


@pytest.mark.parametrize("text", [EN, "db1 is down again tonight, paging the on-call team", "好"])
def test_a_fingerprint_comes_back_whole_from_the_helper_process(text: str) -> None:
    # The helpers send fingerprints back pickled, field by field in order.
    fp = fingerprint(text, SETTINGS)
    back = pickle.loads(pickle.dumps(fp, pickle.HIGHEST_PROTOCOL))
    assert back == fp
    assert (back.exact_keys, back.probe_keys, back.in_tables) == (fp.exact_keys, fp.probe_keys, fp.in_tables)


def test_near_copies_are_close_and_resemble_unrelated_texts_do_not() -> None:
    copy = "WASHINGTON (Reuters) - " + EN.replace("strong", "sturdy") + " (Reporting by Jane Doe)"
    original, edited, other = (fingerprint(t, SETTINGS) for t in (EN, copy, OTHER_EN))
    assert distance(original, edited) <= SETTINGS.max_distance
    assert compare(original.sketch, edited.sketch).resemblance >= SETTINGS.min_resemblance
    assert distance(original, other) > SETTINGS.k
    assert compare(original.sketch, other.sketch).resemblance < 0.2
    zh_copy = fingerprint("新华社北京1月5日电 " + ZH.replace("，", ","), SETTINGS)
    assert distance(fingerprint(ZH, SETTINGS), zh_copy) <= SETTINGS.k


def test_teaser_shares_the_opening_anchor_and_is_contained() -> None:
    story = fingerprint(EN, SETTINGS)
    teaser = fingerprint(EN[: len(EN) // 3], SETTINGS)
    assert story.exact is None and len(story.anchors) == 2
    assert story.exact_keys == story.anchors + story.word_bands + story.heads
    assert teaser.anchors[0] == story.anchors[0] and teaser.anchors[1] != story.anchors[1]
    assert compare(teaser.sketch, story.sketch).containment >= SETTINGS.min_containment


def test_short_texts_get_an_exact_hash_of_their_normalised_words() -> None:
    short = fingerprint("Closing bell: markets rally", SETTINGS)
    variant = fingerprint("ＣＬＯＳＩＮＧ bell: Markets   rally https://t.co/x", SETTINGS)
    assert short.exact is not None and short.exact == variant.exact
    assert short.exact_keys == (short.exact, *short.bands) and short.anchors == ()
    assert short.exact == mmh3.hash64("closing bell markets rally", 0xE8AC7, signed=False)[0]
    assert fingerprint("Closing bell: bonds slump", SETTINGS).exact != short.exact


def test_texts_without_words_still_get_an_exact_hash() -> None:
    a, b = fingerprint("😀😀", SETTINGS), fingerprint("🎉", SETTINGS)
    assert a.exact is not None and b.exact is not None and a.exact != b.exact
    assert a.words == 0 and a.simhash == a.exact


def test_unigram_only_setting_still_fingerprints() -> None:
    unigrams = Settings(shingle_n=1)
    edited = fingerprint(EN.replace("strong", "sturdy"), unigrams)
    assert distance(fingerprint(EN, unigrams), edited) <= SETTINGS.max_distance
    assert fingerprint(EN, unigrams).simhash != fingerprint(EN, SETTINGS).simhash
