"""Short posts one word apart are two messages; a slip, a cut or an addition is still a copy."""

from __future__ import annotations

import pytest

from tests.engine.pairs import is_duplicate, without_words
from worker.engine import words
from worker.engine.fingerprint import fingerprint
from worker.engine.match import Candidate, Entry, accepts
from worker.engine.sketch import short_words
from worker.settings import Settings

SETTINGS = Settings()

ONE_WORD_APART = [
    ("Database db1 is down", "Database db2 is down"),
    ("What is your favorite book?", "What is your favorite hobby?"),
    ("Deploy of api-gateway started in eu-west", "Deploy of api-gateway finished in eu-west"),
    ("框架的启动偏移量需要在配置文件里设置", "框架的结束偏移量需要在配置文件里设置"),
    ("受台风影响，明天上午全市中小学停课一天", "受台风影响，明天上午全市中小学放假一天"),
]


def _accepted(a: str, b: str, keep_words: bool) -> bool:
    probe, stored = fingerprint(a, SETTINGS), fingerprint(b, SETTINGS)
    sketch = stored.sketch if keep_words else without_words(stored.sketch)
    entry = Entry("stored", stored.simhash, 0, 0, sketch)
    return accepts(probe, Candidate(entry, (probe.simhash ^ stored.simhash).bit_count()), SETTINGS) is not None


@pytest.mark.parametrize(("a", "b"), ONE_WORD_APART)
def test_short_posts_one_word_apart_are_not_copies(a: str, b: str) -> None:
    assert not is_duplicate(a, b)
    assert not is_duplicate(b, a)
    assert _accepted(a, b, keep_words=False), "their character grams alone pass: the words tell them apart"


TICKET = "Where can I buy a cheap train ticket to Berlin for next weekend, leaving on Friday evening?"


def test_a_question_is_not_a_copy_of_a_longer_post_that_opens_with_its_words() -> None:
    """The post has more grams than the question's sketch fills bins, fewer than the sketch
    has: both are listed, so the question's containment is counted, not estimated, and the
    words differ ("bike" where "train ticket" stands)."""
    assert short_words(fingerprint(TICKET, SETTINGS).sketch) is not None
    assert not is_duplicate("Where can I buy a cheap bike?", TICKET)
    assert not is_duplicate(TICKET, "Where can I buy a cheap bike?")


@pytest.mark.parametrize(
    "copy",
    [
        "Where can I buy a cheap train ticket to Berlin",  # cut
        "Where can I buy a cheap train ticket to Berlin for next weekend?",  # a sentence's end cut
        TICKET + " Thanks!",  # one added
        TICKET.replace("train", "trian"),  # a slip
        "RT @rail_fan: " + TICKET,  # a retweet
    ],
)
def test_cuts_additions_and_slips_of_such_a_post_stay_copies(copy: str) -> None:
    assert is_duplicate(copy, TICKET)
    assert is_duplicate(TICKET, copy)


REVIEW = (
    "酒店的位置不错，离地铁站很近。房间有一股烟味，我们要求前台给我们换了房间，换了以后味道有所减轻，"
    "但还是有一点。晚上开着窗户睡觉，第二天天一亮我们就退房了。"
)


def test_two_characters_misread_side_by_side_in_a_longer_post_stay_a_copy() -> None:
    """Both are listed (their sets compared exactly), but over the size whose words judge a
    pair: 夫夫 for 天天 is two misread characters, not another word."""
    misread = REVIEW.replace("第二天天一亮", "第二夫夫一亮")
    assert short_words(fingerprint(REVIEW, SETTINGS).sketch) is not None
    assert is_duplicate(misread, REVIEW)
    assert is_duplicate(REVIEW, misread)


@pytest.mark.parametrize(
    ("copy", "original"),
    [
        ("Databse db1 is down", "Database db1 is down"),  # a dropped letter
        ("What is your favroite book?", "What is your favorite book?"),  # two letters swapped
        ("the modem was reset at the station", "the modern was reset at the station"),  # OCR rn/m
        ("the one dream man ro", "the one dream man robert h"),  # cut mid-word
        (
            "killing time that's all that's going on heer, radcal scout launch",
            "killing time that's all that's going on here",
        ),
        ("我己经到家了", "我已经到家了"),  # a look-alike
        ("框架的起动偏移量需要在配置文件里设置", "框架的启动偏移量需要在配置文件里设置"),  # a homophone
    ],
)
def test_slips_cuts_and_additions_stay_copies(copy: str, original: str) -> None:
    assert is_duplicate(copy, original)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Invalid packet", "invalid password packet size"),
        ("Invalid packet", "invaalid password packet size"),  # a slip in the longer one
        ("v850 architecture", "v850 E3 architecture"),
        ("Invalid numbe...", "invalid maximum number of unchanged stats between opens"),  # a teaser of another line
        ("Great service", "Great customer service"),
        ("Invalid file name", "File name transformations: invalid width"),  # in another order
        ("d/copyright: update years", "Update d/copyright"),
        ("argument missing", "missing rqeuired argument role name"),
    ],
)
def test_two_or_three_words_standing_apart_in_another_post_are_not_its_copy(a: str, b: str) -> None:
    assert words.split_apart(words.canonical(a.lower()), words.canonical(b.lower()))
    assert not is_duplicate(a, b)
    assert not is_duplicate(b, a)


@pytest.mark.parametrize(
    ("copy", "original"),
    [
        ("RT @netops: Invalid packet", "Invalid packet"),  # a wrapper
        ("ALERT: Disk full", "Disk full"),  # a header
        ("Invalid packet size", "Invalid packet"),  # a word appended
        ("Server down - via @ops", "Server down"),
        ("Invaild packet", "Invalid packet"),  # a slip
        ("Disk nearly full on db1", "Disk full on db1"),  # a word put into four: an edit
    ],
)
def test_two_or_three_words_kept_together_stay_a_copy(copy: str, original: str) -> None:
    assert is_duplicate(copy, original)
    assert is_duplicate(original, copy)


def test_entries_stored_before_the_words_compare_as_before() -> None:
    a, b = ONE_WORD_APART[0]
    assert short_words(fingerprint(b, SETTINGS).sketch) == "database db2 is down"
    assert _accepted(a, b, keep_words=False), "an entry without words is verified on its grams alone"


def test_what_counts_as_another_word() -> None:
    assert words.changed(["book"], ["hobby"])
    assert words.changed(["up"], ["on"])
    assert words.changed(["db1"], ["db2"]), "other digits"
    assert not words.changed(["book"], ["bok"]) and not words.changed(["the"], ["teh"])
    assert not words.changed(["modern"], ["modem"]), "OCR reads rn as m"
    assert words.changed(list("启动"), list("结束"))
    assert not words.changed(list("启动"), list("动启")), "the same characters reordered are a slip"
    assert not words.changed(["好"], ["差"]), "one Han character alone is left to the grams"
    assert not words.differ("going on here", "going on heer radcal scout launch"), "a slip before an addition"
    assert not words.differ("stationed at a 54 kilometer", "stationed at a 54 kilo"), "a cut mid-word"
    assert not words.differ("nouncement of the deal", "announcement of the deal"), "a cut at the front"
    assert words.differ("status of db1 ok", "status of db2 ok")
    assert words.differ("fix leak in mlx5e_ptp_open", "fix leak in jsc5e_ptp_open"), "an identifier's parts"


@pytest.mark.parametrize(
    ("copy", "original"),
    [
        ("Use wide separ tors when the flag is true", "Use wide separators when the flag is true"),
        ("Caps Lock toggles the Shift Lockstate of every key", "Caps Lock toggles the Shift Lock state of every key"),
        ("병렬 작업(-j)은 이 플랫폼에서 지원하지 않 니다.", "병렬 작업(-j)은 이 플랫폼에서 지원하지 않습니다."),
        ("외부 테이블의l내용이 바뀔 수 있습니다.", "외부 테이블의 내용이 바뀔 수 있습니다."),
    ],
)
def test_a_slip_that_splits_a_word_or_runs_two_together_stays_a_copy(copy: str, original: str) -> None:
    """A space typed for a letter, or a letter for a space (a keyboard's slip, OCR's): the
    replaced run, read without its spaces, is one slip from the other side's."""
    assert is_duplicate(copy, original)
    assert is_duplicate(original, copy)


def test_another_word_in_a_split_stays_another_word() -> None:
    assert words.differ("cancel the db1 job now", "cancel the db 2 job now"), "other digits"
    assert words.differ("net atlantic determine stranded tx buffers", "net at1antic free stranded tx buffers"), (
        "a slip beside another word: read word for word, not joined"
    )
    assert not words.differ("the qiuck brown fox jumps", "teh quick brown fox jumps"), "two slips side by side"
    assert not words.differ("pay 1000 now please", "pay 10 00 now please"), "the same figures split"
    assert words.differ("the meeting is postponed today", "the meeting is on hold today")
    assert not words.differ("the meeting is postponed today", "the meeting is post poned today")


TOKYO = "東京都は10日、新型コロナウイルスの感染者が新たに300人確認されたと発表した。都の担当者は、年末年始の帰省を控えるよう呼びかけている。"


def test_a_japanese_post_in_another_politeness_form_stays_a_copy() -> None:
    """Hiragana are syllables, as Han characters are: "しました" for "した" adds two of them, where
    a run of hiragana read as one word made it another word in the first one's place."""
    polite = TOKYO.replace("発表した", "発表しました")
    assert is_duplicate(polite, TOKYO)
    assert is_duplicate(TOKYO, polite)
    assert not words.differ("発表した", "発表しました"), "two syllables added, none replaced"


def test_a_japanese_post_about_another_place_is_not_a_copy() -> None:
    osaka = TOKYO.replace("東京都", "大阪府").replace("都の担当者", "府の担当者")
    assert not is_duplicate(osaka, TOKYO)
    assert not is_duplicate(TOKYO, osaka)


def test_a_katakana_loanword_in_place_of_another_is_another_word() -> None:
    """Katakana stay words: read a syllable each, "テンプレート" and "パーサ" would align on "ー"
    and leave single syllables replaced, which the grams alone judge."""
    assert words.differ("テキスト検索テンプレートを生成する", "テキスト検索パーサを生成する")
    assert words.differ(
        "この操作はビューに対してはサポートされていません", "この操作はテーブルに対してはサポートされていません"
    )


def test_edit_distance_counts_a_swap_of_neighbours_as_one() -> None:
    assert words.edit_distance("favorite", "favroite") == 1
    assert words.edit_distance("book", "hobby") == 4
    assert words.edit_distance("", "abc") == 3


SAID_THE_OPPOSITE = [
    ("Fed will not raise rates this year, officials say", "Fed will raise rates this year, officials say"),
    ("The vaccine is not safe for children under five", "The vaccine is safe for children under five"),
    ("Apple will never release a new iPhone this fall", "Apple will release a new iPhone this fall"),
    ("There is no evidence of fraud, judge says", "There is evidence of fraud, judge says"),
    # The verb in another tense where the negation stands (an operator's try: both were copies).
    (
        "The central bank did not raise interest rates by a quarter point on Tuesday, citing persistent inflation.",
        "The central bank raised interest rates by a quarter point on Tuesday, citing persistent inflation.",
    ),
    ("The company says it did not raise prices last month", "The company says it raised prices last month"),
    ("Council will not close the old harbour bridge", "Council closed the old harbour bridge"),
    ("Police have not charged the driver, they said", "Police charged the driver, they said"),
    # Listed, but too long for the words to judge a slip: the negation is still read.
    (
        "Unions will not advise members to reject the offer because it includes a wage freeze.",
        "Unions will advise members to reject the offer because it includes a wage freeze.",
    ),
]


@pytest.mark.parametrize(("a", "b"), SAID_THE_OPPOSITE)
def test_a_post_that_says_not_where_another_does_not_is_another_message(a: str, b: str) -> None:
    assert not is_duplicate(a, b) and not is_duplicate(b, a)


@pytest.mark.parametrize(
    ("copy", "original"),
    [
        ("Not again. Storm closes schools across the north coast", "Storm closes schools across the north coast"),
        (
            "Storm closes schools across the north coast. No school tomorrow",
            "Storm closes schools across the north coast",
        ),
        ("Storm closes schools across the north coast, no", "Storm closes schools across the north coast"),
        ("Storm does not close schools", "Storm does not close schools"),
        ("Storm doesn't close schools", "Storm does not close schools"),
    ],
)
def test_a_negation_in_a_header_a_sentence_after_or_written_another_way_stays_a_copy(copy: str, original: str) -> None:
    assert is_duplicate(copy, original)


def test_negated_reads_a_negation_put_in_or_left_out_between_shared_words_only() -> None:
    assert words.negated("fed will not raise rates", "fed will raise rates")
    assert words.negated("it is never too late to start", "it is too late to start")
    assert not words.negated("fed will not raise rates", "fed will not raise rates")
    assert not words.negated("no fed will raise rates", "fed will raise rates")  # in front: a header
    assert not words.negated("fed will raise rates not", "fed will raise rates")  # at the end: a cut
    assert not words.negated("fed will not and cannot raise rates", "fed will raise rates")  # other words too
    assert words.negated("fed did not raise rates", "fed raised rates")
    assert words.negated("fed raised rates", "fed will never raise rates")
    assert words.negated("russia did not defend itself", "russia defended itself")
    assert words.negated("the court has not denied it", "the court denied it")
    assert not words.negated("fed did not say it raised rates", "fed raised rates")  # not the verb negated
    assert not words.negated("fed not raised rates", "fed cut rates")  # another verb


# One story in two outlets' styles (words.SAME_WORD): before each style joined it, the word
# check read the one word for the other as another word and refused these short copies.
STYLED_COPIES = {
    "number spelt out (AP)": [
        ("5 killed in bus crash near Lyon", "Five killed in bus crash near Lyon"),
        ("Two dead after floods in Valencia", "2 dead after floods in Valencia"),
        ("Ten arrested at protest in Paris", "10 arrested at protest in Paris"),
    ],
    "month shortened before a date (AP)": [
        ("Storm to hit coast on Nov. 30, forecasters say", "Storm to hit coast on November 30, forecasters say"),
        ("Vote set for Sept. 12 in Ohio", "Vote set for September 12 in Ohio"),
    ],
    "a wire brief's units (Reuters)": [
        ("Company raises $5 mln in seed round", "Company raises $5 million in seed round"),
        ("BRIEF-Acme Corp says Q3 revenue $2.1 bln", "BRIEF-Acme Corp says Q3 revenue $2.1 billion"),
        ("Acme to cut 1,200 jobs, shares up 3 pct", "Acme to cut 1,200 jobs, shares up 3 percent"),
        ("Acme Q3 revenue rises 5 pct to $2 bln", "Acme Q3 revenue rises 5 percent to $2 billion"),
    ],
    "a unit against the figure (British and financial outlets)": [
        ("Acme fined £1.2bn over emissions", "Acme fined £1.2 billion over emissions"),
        ("Start-up raises $5m from investors", "Start-up raises $5 million from investors"),
        ("Inflation hits 10pc as energy bills soar", "Inflation hits 10 percent as energy bills soar"),
        ("Debt passes $3tn mark, Treasury says", "Debt passes $3 trillion mark, Treasury says"),
    ],
    "a headline's abbreviation": [
        ("Govt to cut fuel tax from Jan 1", "Government to cut fuel tax from January 1"),
        ("Dow closes up 300 pts on rate hopes", "Dow closes up 300 points on rate hopes"),
    ],
    "an ordinal in figures": [
        ("The 2nd round of talks ended without a deal", "The second round of talks ended without a deal"),
        ("Nadal through to 3rd round in Paris", "Nadal through to third round in Paris"),
        ("Storm expected to hit the coast on Nov. 30th", "Storm expected to hit the coast on November 30"),
        ("Vote set for March 1st in Ohio", "Vote set for March 1 in Ohio"),
    ],
    "a title before a name (AP)": [
        ("Gov. Gavin Newsom signs climate bill", "Governor Gavin Newsom signs climate bill"),
        ("Sen. Chuck Schumer blocks vote on border bill", "Senator Chuck Schumer blocks vote on border bill"),
        ("Lt. Gov. Dan Patrick backs plan", "Lieutenant Governor Dan Patrick backs plan"),
        ("Dr. Anthony Fauci testifies before Congress", "Doctor Anthony Fauci testifies before Congress"),
        ("Mt. Everest climber dies in fall", "Mount Everest climber dies in fall"),
    ],
    "a name or a period abbreviated": [
        ("Biden says U.S. will defend Taiwan", "Biden says United States will defend Taiwan"),
        ("NYC subway delays after power outage", "New York City subway delays after power outage"),
        ("UN condemns attack on aid convoy in Gaza", "United Nations condemns attack on aid convoy in Gaza"),
        ("Apple's Q3 revenue beats forecasts", "Apple's third-quarter revenue beats forecasts"),
        ("Acme H1 profit falls on weak demand", "Acme first-half profit falls on weak demand"),
        ("Team USA wins gold in relay", "Team U.S. wins gold in relay"),
    ],
    "versus": [
        ("Lakers vs Celtics: LeBron scores 40", "Lakers versus Celtics: LeBron scores 40"),
        ("Arsenal v Chelsea: Saka scores twice", "Arsenal vs. Chelsea: Saka scores twice"),
    ],
}


@pytest.mark.parametrize(
    ("styled", "plain"),
    [pytest.param(*pair, id=f"{style}: {pair[0]}") for style, pairs in STYLED_COPIES.items() for pair in pairs],
)
def test_a_word_in_another_outlets_style_stays_a_copy(styled: str, plain: str) -> None:
    assert is_duplicate(styled, plain) and is_duplicate(plain, styled)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Five killed in bus crash near Lyon", "6 killed in bus crash near Lyon"),
        ("Two dead after floods in Valencia", "3 dead after floods in Valencia"),
        ("One killed in bus crash near Lyon", "1 killed in bus crash near Lyon"),  # "one" is no count
    ],
)
def test_another_number_spelt_out_is_another_word(a: str, b: str) -> None:
    assert not is_duplicate(a, b) and not is_duplicate(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Storm to hit coast on Nov. 30, forecasters say", "Storm to hit coast on Dec. 30, forecasters say"),
        ("Company raises $5 mln in seed round", "Company raises $5 billion in seed round"),
        ("Company raises $5 mln in seed round", "Company raises $6 million in seed round"),
        ("Gov. Gavin Newsom signs climate bill", "Sen. Gavin Newsom signs climate bill"),
        ("Gov. Gavin Newsom signs climate bill", "Senator Gavin Newsom signs climate bill"),
        ("Lakers vs Celtics: LeBron scores 40", "Lakers vs Knicks: LeBron scores 40"),
        ("Acme fined £1.2bn over emissions", "Acme fined £1.2m over emissions"),
        ("Acme fined £1.2bn over emissions", "Acme fined £1.2 million over emissions"),
        ("Start-up raises $5m from investors", "Start-up raises $6 million from investors"),
        ("The 2nd round of talks ended without a deal", "The 3rd round of talks ended without a deal"),
        ("The second round of talks ended without a deal", "The 3rd round of talks ended without a deal"),
        ("Storm expected to hit the coast on Nov. 30th", "Storm expected to hit the coast on November 29"),
        ("Vote set for March 1st in Ohio", "Vote set for March one in Ohio"),
    ],
)
def test_another_month_amount_title_or_team_in_either_style_is_another_word(a: str, b: str) -> None:
    assert not is_duplicate(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("US and China agree new trade deal", "UK and China agree new trade deal"),  # a letter apart
        ("United States and China agree new trade deal", "United Kingdom and China agree new trade deal"),
        ("U.S. and China agree new trade deal", "United Kingdom and China agree new trade deal"),
        ("UN condemns attack on aid convoy", "EU condemns attack on aid convoy"),
        ("Apple's third-quarter revenue beats forecasts", "Apple's Q4 revenue beats forecasts"),
        ("Acme first-half profit falls on weak demand", "Acme H2 profit falls on weak demand"),
    ],
)
def test_another_name_or_period_in_either_style_is_another_word(a: str, b: str) -> None:
    assert not is_duplicate(a, b) and not is_duplicate(b, a)


def test_a_slip_in_a_name_that_has_an_abbreviation_stays_a_slip() -> None:
    plain = "New York is often referred to as New York State to distinguish it from New York City."
    assert is_duplicate(plain.replace("York City", "Y0rk City"), plain)


# Texts of a hundred characters or so, too long for the word check of short posts: one word in
# place of another that no slip makes of it says another thing (an operator's try found these
# published as copies, similarity 0.76 and 0.61).
BRIDGE = "The city council voted on Tuesday to close the old harbour bridge to all traffic from next spring."
STRIKE = "Rail strike called off after unions and operators agree to a new pay deal, ending weeks of disruption"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (BRIDGE, BRIDGE.replace("close", "keep").replace("bridge", "bridge open")),
        (
            STRIKE,
            "Rail strike goes ahead after unions and operators fail to agree a new pay deal, extending weeks of disruption",
        ),
    ],
)
def test_a_longer_post_with_a_word_swapped_for_a_far_one_is_another_message(a: str, b: str) -> None:
    assert not is_duplicate(b, a) and not is_duplicate(a, b)


@pytest.mark.parametrize(
    "copy",
    [
        BRIDGE.replace("the old", "teh old").replace("traffic", "trafic"),  # slips
        BRIDGE.replace("on Tuesday", "om Tuesday").replace("harbour", "harbuor"),
        BRIDGE.replace("the old", "tbe old"),  # OCR
        BRIDGE.replace("Tuesday", "Tuesday,") + " More to follow.",
    ],
)
def test_a_longer_post_with_slips_stays_a_copy(copy: str) -> None:
    assert is_duplicate(copy, BRIDGE)


def test_a_cut_that_ends_before_a_repeated_phrase_stays_a_copy() -> None:
    # "and Pennsylvania to the" and "and Vermont to the" share a context; the cut keeps the
    # first and loses the second, which is no word put in place of another.
    story = "New York is bordered by New Jersey and Pennsylvania to the south, and by Connecticut, Massachusetts and Vermont to the east."
    cut = "New York is bordered by New Jersey and Pennsylvania to the south, and by Connecticut, Massachusetts and…"
    assert is_duplicate(cut, story) and is_duplicate(story, cut)
    swapped = story.replace("and Vermont to the", "and Virginia to the")
    assert not is_duplicate(swapped.replace("Pennsylvania", "Delaware"), story)


@pytest.mark.parametrize(
    ("copy", "original"),
    [
        ("thi seky has already been designated as a revoker", "this key has already been designated as a revoker"),
        ("msu tbe superuser to create subscriptions", "must be superuser to create subscriptions"),
    ],
)
def test_a_space_moved_with_a_slip_beside_it_stays_a_copy(copy: str, original: str) -> None:
    assert is_duplicate(copy, original) and is_duplicate(original, copy)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "The council passed a non-binding resolution on the bridge",
            "The council passed a binding resolution on the bridge",
        ),
        ("character forbidden in non-transitional mode (TR46)", "character forbidden in transitinoal mode (TR46)"),
    ],
)
def test_non_before_a_word_is_a_negation_slip_or_none(a: str, b: str) -> None:
    assert not is_duplicate(a, b) and not is_duplicate(b, a)
