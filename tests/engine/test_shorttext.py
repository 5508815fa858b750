"""Short texts: character sketch, numbers that must agree, band and edge keys (issue 28)."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import pytest

from tests.engine.pairs import is_duplicate
from worker.engine import shorttext
from worker.engine.fingerprint import Fingerprint, fingerprint
from worker.engine.leads import LONG_LEADS, letters
from worker.engine.normalize import normalize
from worker.engine.numbers import numbers_mask
from worker.engine.shorttext import is_dense
from worker.engine.sketch import SHORT_SKETCH_BYTES, SKETCH_BYTES, compare
from worker.engine.sounds import fold_sounds
from worker.settings import Settings

SETTINGS = Settings()

# Unrelated short posts of one to five words (and a few a little longer), both languages.
STRANGERS = [
    "Hi", "Thanks!", "Good morning", "Good evening", "Happy new year", "Happy birthday mom",
    "I love this", "I love this song", "I hate Mondays", "See you tomorrow", "See you soon",
    "Great game tonight", "Great news today", "Coffee first", "Need more coffee", "What a day",
    "What a game", "The best day ever", "Not again", "Traffic is terrible today", "Rain again today",
    "Lunch with friends", "Back to work", "Working from home today",
    "早上好", "晚安", "谢谢大家", "今天天气很好", "今天天气不好", "生日快乐", "新年快乐", "我爱这首歌",
    "又下雨了", "堵车太严重了", "周末愉快", "明天见", "好久不见", "加油", "太好吃了", "工作日快乐",
    # Han posts long enough to match by containment, some of one template with another word.
    "今天的天气真的很好", "今天的天气真的很差", "房间很干净，服务也好", "房间很干净，就是有点小",
    "地铁三号线今天停运", "地铁五号线今天停运", "明天上午九点开会", "明天下午三点开会",
    "这家店的菜很好吃", "这家店的菜不好吃", "快递今天终于到了", "快递到现在还没到",
]  # fmt: skip


def _shared_keys(a: Fingerprint, b: Fingerprint) -> set[int]:
    return set(a.exact_keys) & set(b.exact_keys)


def test_no_false_duplicates_among_unrelated_short_posts() -> None:
    for a, b in itertools.permutations(STRANGERS, 2):
        assert not is_duplicate(a, b), (a, b)


@pytest.mark.parametrize(
    ("original", "copy"),
    [
        ("The council approved the new bridge today", "The councl approved the new bridge today"),
        ("Flood warning for the river valley tonight", "Flood warnign for the river valley tonight"),
        ("Modern art museum opens in the old harbour", "Modem art museum opens in the old harbour"),
        ("今天下午市政府召开新闻发布会介绍最新情况", "今天下午市政府召开新闻发布会介绍最新清况"),
        ("这家店的服务态度非常好，下次还会再来", "这家店的服务态度非常好，下次还会在来"),
    ],
)
def test_one_slip_in_a_short_post_is_found_and_verified(original: str, copy: str) -> None:
    a, b = fingerprint(original, SETTINGS), fingerprint(copy, SETTINGS)
    assert min(len(a.sketch), len(b.sketch)) >= SHORT_SKETCH_BYTES
    assert _shared_keys(a, b), "a band or edge key must nominate the copy"
    assert is_duplicate(copy, original)


def test_a_cut_anywhere_shares_the_leading_edge_and_is_contained() -> None:
    full = "The Hudson and Mohawk Rivers could be navigated only as far as Central New York."
    cut = "The Hudson and Mohawk Rivers could be navigated on…"
    a, b = fingerprint(full, SETTINGS), fingerprint(cut, SETTINGS)
    (lead, tail), (cut_lead, cut_tail) = _edges(full), _edges(cut)
    assert lead == cut_lead and {lead, tail} <= set(a.bands) and {cut_lead, cut_tail} <= set(b.bands)
    assert tail not in b.bands
    assert is_duplicate(cut, full)


def _edges(text: str) -> tuple[int, int]:
    return shorttext.edge_keys(_basis(text), shorttext.EDGE_CHARS)


def _basis(text: str) -> str:
    """A text's letters and digits, folded by sound, as its short keys are cut from."""
    return "".join(ch for ch in fold_sounds(normalize(text)) if ch.isalnum())


POST = (
    "中华人民共和国国务院新闻办公室今天上午举行新闻发布会，介绍今年前三季度国民经济运行情况，"
    "有关负责人表示，经济运行总体平稳，就业形势基本稳定，居民消费价格温和上涨，下一步将继续扩大内需。"
)


def test_a_han_post_cut_to_its_first_line_is_found_by_the_posts_lead() -> None:
    """A cut of 16-36 Han characters keeps edges 7 wide, the post it was cut from 16 wide: the
    cut also looks up the post's lead key (a lookup, not a key it stores)."""
    cut = POST[:17] + "…"
    post, copy = fingerprint(POST, SETTINGS), fingerprint(cut, SETTINGS)
    assert set(copy.lookups) & set(post.stored_keys), "the cut's lookups hold the post's lead key"
    assert not set(copy.lookups) & set(copy.exact_keys), "and it does not store it"
    assert is_duplicate(cut, POST)


@pytest.mark.parametrize("kept", [10, 11, 12])
def test_a_han_post_cut_to_a_tenth_is_found_by_its_narrow_lead(kept: int) -> None:
    """A cut of 10-15 Han characters keeps no key of a post of a hundred: it looks up the
    post's narrow lead, which only a post longer than a dense short text's edges stores."""
    cut = POST[:kept] + "…"
    post, copy = fingerprint(POST, SETTINGS), fingerprint(cut, SETTINGS)
    assert not set(copy.stored_keys) & set(post.stored_keys)
    assert set(copy.lookups) & set(post.stored_keys), "the cut's lookups hold the post's narrow lead"
    assert is_duplicate(cut, POST)


def test_a_cut_under_ten_han_characters_looks_up_no_lead() -> None:
    post, cut = fingerprint(POST, SETTINGS), fingerprint(POST[:9], SETTINGS)
    assert not set(cut.probe_keys) & set(post.stored_keys)


def test_the_narrow_lead_joins_only_a_cut_to_its_post() -> None:
    """Two posts that open alike never meet under it: neither looks up a narrow lead, and a
    headline stores none."""
    other = (
        POST[:12]
        + "，今天下午又举行了第二场发布会，介绍就业和物价情况，有关负责人回答了记者提问，并表示将继续稳定就业。"
    )
    headline = fingerprint(POST[:12], SETTINGS)
    post, opener = fingerprint(POST, SETTINGS), fingerprint(other, SETTINGS)
    narrow = shorttext.lead_keys(_basis(POST))[0]
    assert narrow and set(narrow) <= set(post.marks) & set(opener.marks)
    assert not set(narrow) & (set(post.probe_keys) | set(opener.probe_keys))
    assert not set(narrow) & set(headline.stored_keys)


@pytest.mark.parametrize("mark", ["…", "……", "...", "，", "、"])
def test_a_cut_that_says_it_was_cut_is_found_by_its_post_arriving_after_it(mark: str) -> None:
    """A share preview ("…") or a cut mid-sentence (a comma) comes first: it stores a key of its
    opening that every longer post looks up."""
    for kept in (12, 20):
        cut, post = fingerprint(POST[:kept] + mark, SETTINGS), fingerprint(POST, SETTINGS)
        assert set(post.lookups) & set(cut.stored_keys), (kept, mark)
        assert is_duplicate(POST, POST[:kept] + mark)


STORY = "The ferry service resumes across the bay after the storm, with extra sailings on Sunday."


@pytest.mark.parametrize("kept", ["The ferry serv", "The ferry service"[:15]])
def test_an_english_post_cut_to_twelve_to_fifteen_letters_is_found_by_its_narrow_lead(kept: str) -> None:
    """A Latin cut that short keeps no edge of a post over 36 letters: it looks up the post's
    first 12 under a seed only such a post stores, so two long posts never meet under it."""
    post, cut = fingerprint(STORY, SETTINGS), fingerprint(kept, SETTINGS)
    assert set(cut.lookups) & set(post.marks) - set(cut.stored_keys)
    assert is_duplicate(kept, STORY)
    other = fingerprint(STORY[:20] + " tomorrow morning, the port authority said in a statement today.", SETTINGS)
    assert not set(other.probe_keys) & set(post.marks) and not set(post.probe_keys) & set(other.marks)


def test_reach_keys_cut_from_a_texts_ends_are_those_of_its_whole_basis() -> None:
    """A long short text's reach keys come from its first and last characters only; they are the
    keys its whole letters and digits give, ASCII or not, whatever its punctuation."""
    texts = [POST, POST[:20] + "…", REVIEW * 3, STORY, STORY * 3, "、" * 70 + POST, POST + "！" * 70, "a_b " * 40]
    for text in texts:
        heard = fold_sounds(normalize(text))
        basis = shorttext._NON_WORD.sub("", heard)
        assert letters(heard) == basis
        if is_dense(text):
            lead, tail = shorttext.lead_keys(basis, heard.endswith(shorttext.CUT_MARKS)), shorttext.tail_keys(basis)
            expected = (lead[0] + tail[0], lead[1] + tail[1])
        else:
            expected = shorttext.latin_lead_keys(basis, len(basis))
        assert shorttext.reach_keys(heard, is_dense(text)) == expected, text


REVIEW = "比较旧了，但整体感觉还行，前台的服务员态度也很热情，早餐品种不算多但味道不错。"


@pytest.mark.parametrize("last", ["服务也还可以，下次再来。", "房间干净，床很舒服，下次出差还会再来住。"])
def test_a_post_with_its_first_sentence_taken_out_is_found_by_the_posts_tail(last: str) -> None:
    """What is left, 10-36 characters, keeps edges narrower than the post's: it looks up the
    post's tail key (16 and more) or its narrow tail (10-15), which only a longer post stores."""
    post, copy = fingerprint(REVIEW + last, SETTINGS), fingerprint(last, SETTINGS)
    stored, _ = shorttext.tail_keys(_basis(REVIEW + last))
    _, looked = shorttext.tail_keys(_basis(last))
    assert looked and set(looked) <= set(copy.lookups) & set(post.stored_keys) - set(copy.stored_keys)
    assert len(stored) == 1 and set(stored) <= set(post.marks), "the post stores its narrow tail"
    assert is_duplicate(last, REVIEW + last)


def test_a_headline_that_ends_as_a_sentence_is_not_nominated_for_its_story() -> None:
    """The same opening with no mark of a cut (a title, a sentence): the story after it is news
    the headline did not carry, and does not look up its keys."""
    for headline in (POST[:12], POST[:20], POST[:12] + "。", POST[:12] + "："):
        assert not set(fingerprint(POST, SETTINGS).lookups) & set(fingerprint(headline, SETTINGS).stored_keys)


def test_a_post_that_opens_as_another_and_goes_on_otherwise_is_only_a_candidate() -> None:
    other = POST[:17] + "，服务员态度很差"
    post, opener = fingerprint(POST, SETTINGS), fingerprint(other, SETTINGS)
    assert set(opener.lookups) & set(post.exact_keys)
    assert not is_duplicate(other, POST)


def test_a_header_line_keeps_the_trailing_edge() -> None:
    post = "这家店的服务态度非常好，下次还会再来"
    a, b = fingerprint(post, SETTINGS), fingerprint("【好评】\n" + post, SETTINGS)
    assert a.bands[-1] == b.bands[-1]
    assert is_duplicate("【好评】\n" + post, post)


@pytest.mark.parametrize(
    ("original", "copy"),
    [
        ("军民鱼水情（图片）", "11月10日 晚安小镇 发布 军民鱼水情（图片）"),  # a header: the tail edge
        ("贫困是一个沉重的事实。", "贫困是一个沉重的事实。刻录速度快，发热不大。"),  # an addition: the lead edge
        ("宽屏看起来有点过宽。", "【宽屏看起来】\n宽屏看起来有点过宽。"),
    ],
)
def test_a_very_short_han_post_is_found_under_a_header_or_an_addition(original: str, copy: str) -> None:
    a, b = fingerprint(original, SETTINGS), fingerprint(copy, SETTINGS)
    assert _shared_keys(a, b), "an edge or band key must nominate the copy"
    assert is_duplicate(copy, original)


@pytest.mark.parametrize(
    ("original", "copy"),
    [
        ("再次表示疑问：这样的酒店上怎么会有这么高的分数，", "10月28日 一只猫 发布\n再次表示疑问：这样的酒店上怎么会有这么高的分数，总之对此宾馆印象极差。"),
        ("外观很棒，全黑的质感我喜欢。", "【分享】外观很棒，全黑的质感我喜欢。驱动不好装。"),
        ("Will a human ever be able to stand on the surface of Venus?",
         "quietreader wrote on July 10: Will a human ever be able to stand on the surface of Venus? Asking for a friend"),
    ],
)  # fmt: skip
def test_a_post_with_a_header_and_an_addition_is_found_by_an_inner_edge(original: str, copy: str) -> None:
    a, b = fingerprint(original, SETTINGS), fingerprint(copy, SETTINGS)
    assert not set(a.bands[-2:]) & set(b.bands[-2:]), "neither edge of the copy is one of the post's"
    assert set(b.lookups) & set(a.exact_keys), "an inner edge of the copy is the post's edge"
    assert not set(b.lookups) & set(b.exact_keys), "inner edges are looked up, not stored"
    assert is_duplicate(copy, original)


def test_inner_edges_are_the_first_and_last_few_word_runs() -> None:
    one_run = fold_sounds("今天天气很好我们去公园散步吧")
    assert shorttext.inner_edge_keys(one_run, True, ()) == (), (
        "a text of one run starts and ends only where its edges do"
    )
    many = fold_sounds("一二三四五六七，八九十甲乙丙丁。戊己庚辛壬癸子，丑寅卯辰巳午未。申酉戌亥天地人，" * 2)
    # A lead and a tail at each of INNER_EDGES clauses, in a dense text each at both edge widths.
    assert 0 < len(shorttext.inner_edge_keys(many, True, ())) <= 2 * 2 * shorttext.INNER_EDGES


def test_a_dense_post_of_more_than_the_narrow_length_is_found_under_a_field_with_a_sentence_after() -> None:
    """A dense post of more than ``DENSE_EDGE_MAX_CHARS`` letters is stored under edges
    ``EDGE_CHARS`` wide; its copy under a header field and with a sentence after, a short text
    too, looks up the leads at its first clause at both widths and finds the post's."""
    post = "小区东门今晚十点起停水，预计明早六点恢复，请居民提前储水。二号楼和三号楼的住户请注意关好水龙头。"
    assert len(letters(normalize(post))) > shorttext.DENSE_EDGE_MAX_CHARS
    copy = fingerprint("物业通知 " + post + "另外周末电梯检修，请走楼梯。", Settings())
    assert set(copy.lookups) & set(fingerprint(post, Settings()).stored_keys)


def test_header_leads_are_a_posts_lead_after_each_of_the_first_breaks() -> None:
    """What a post of more than ``DENSE_EDGE_MAX_CHARS`` letters is stored under includes its
    lead key, of its first ``EDGE_CHARS``; a longer text looks it up after a header of one to
    ``HEADER_BREAKS`` fields, not deeper. (A shorter dense post's lead is narrower, and no copy
    of it past ``short_chars`` is a repost of it.)"""
    post = "小区东门今晚十点起停水，预计明早六点恢复，请居民提前储水。二号楼和三号楼的住户请注意关好水龙头，以免来水时漏水。"
    stored = set(fingerprint(post, Settings()).stored_keys)
    for header in ("【通知】", "物业通知：", "10月20日 物业 发布 "):
        assert stored & set(shorttext.header_leads(normalize(header + post + "另外周末电梯检修。"))), header
    deep = "一 二 三 四 " + post  # the post after four breaks: past HEADER_BREAKS
    assert not stored & set(shorttext.header_leads(normalize(deep)))
    assert len(shorttext.header_leads(normalize(deep))) == shorttext.HEADER_BREAKS


def test_a_longer_text_has_header_leads_up_to_twice_the_short_length() -> None:
    settings = Settings()
    text = "城市新闻：" + "今天上午市政府召开新闻发布会，介绍了全市冬季供暖的准备情况和应急预案。" * 9
    assert settings.short_chars < len(normalize(text)) <= 2 * settings.short_chars
    heads = fingerprint(text, settings).heads
    assert heads and set(heads) <= set(fingerprint(text, settings).exact_keys)  # stored and looked up
    assert fingerprint(text * 3, settings).heads == ()


def test_the_smallest_set_that_matches_by_containment_depends_on_the_script() -> None:
    # Five 3-grams of Han characters are three or four words; seven of Latin letters, two.
    assert is_duplicate("【提醒】空格键似乎要坏", "空格键似乎要坏")
    assert not is_duplicate("I love this song", "I love this")
    assert is_dense("今天天气很好") and is_dense("iPad 坏了怎么办") and not is_dense("Good morning")
    assert not is_dense("iPhone 15 发布会") and not is_dense("!!!")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Route 12 bus to Easton delayed by 15 minutes, next departure 9:30.",
         "Route 12 bus to Easton delayed by 25 minutes, next departure 9:30."),
        ("Easton weather: high of 6F, low of 1F, air quality index 54.",
         "Easton weather: high of 8F, low of 1F, air quality index 54."),
        ("地铁3号线人民广场站因设备故障暂停运营约15分钟。", "地铁4号线人民广场站因设备故障暂停运营约15分钟。"),
    ],
)  # fmt: skip
def test_short_reports_whose_numbers_differ_are_not_duplicates(a: str, b: str) -> None:
    assert compare(fingerprint(a, SETTINGS).sketch, fingerprint(b, SETTINGS).sketch).resemblance == 0.0
    assert not is_duplicate(a, b)


def test_reports_of_one_template_with_other_numbers_do_not_pass_for_each_other() -> None:
    # A probe of a template's reports checks dozens of them: one number whose bits all lie
    # among another report's would make two alerts of different hosts one post.
    rng = random.Random(5)
    reports = {
        normalize(f"ALERT: cpu load on web-{rng.randrange(400):03d} reached {rng.randint(80, 99)}% at 14:{m:02d} UTC")
        for m in rng.choices(range(60), k=300)
    }
    masks = [numbers_mask(text) for text in reports]
    assert len(masks) > 290
    passing = [(a, b) for a, b in itertools.permutations(masks, 2) if a & b == a]
    assert passing == []


def test_numbers_a_copy_may_lose_or_gain() -> None:
    full = "New York became an independent state on July 9, 1776, and enacted its constitution in 1777."
    assert is_duplicate("New York became an independent state on July 9, 17…", full)
    cut, whole = numbers_mask("july 9, 17..."), numbers_mask(full.lower())
    assert cut & whole == cut
    assert numbers_mask("he11o w0rld") == numbers_mask("0f course, 1ike it") == 0
    assert numbers_mask("route 12 at 9:30") != numbers_mask("route 13 at 9:30")


def test_a_short_and_a_long_text_compare_on_their_word_sketches() -> None:
    short = fingerprint("Markets rallied on Friday after the central bank held rates.", SETTINGS)
    # Not the long text's beginning, which its lead windows would tell (tests/engine/test_leads.py).
    long = fingerprint("In the news: " + "Markets rallied on Friday after the central bank held rates. " * 8, SETTINGS)
    assert len(long.sketch) == SKETCH_BYTES + LONG_LEADS and long.bands == ()
    mixed, words_only = compare(short.sketch, long.sketch), compare(short.sketch[:SKETCH_BYTES], long.sketch)
    assert (mixed.resemblance, mixed.containment) == (words_only.resemblance, words_only.containment)
    assert not mixed.long and words_only.long  # the long pair's looser floor is for two long texts only


def test_short_chars_zero_turns_the_character_part_off() -> None:
    off = replace(SETTINGS, short_chars=0)
    fp = fingerprint("The council approved the new bridge today", off)
    assert len(fp.sketch) == SKETCH_BYTES + LONG_LEADS and fp.bands == ()
