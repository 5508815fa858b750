"""Lead windows: a teaser or cut of a long story is its copy, in either order of arrival."""

from __future__ import annotations

from tests.engine.pairs import is_duplicate
from worker.engine.fingerprint import fingerprint
from worker.engine.leads import (
    LONG_LEADS,
    MAX_WINDOWS,
    MIN_WINDOWS,
    OPENING_CHARS,
    SLACK_CHARS,
    WINDOW_CHARS,
    lead_windows,
    opening_key,
)
from worker.engine.normalize import normalize
from worker.engine.sketch import SKETCH_BYTES, compare, short_words
from worker.settings import Settings

SETTINGS = Settings()

STORY = (
    "The harbour authority reopened the northern channel on Tuesday morning, two days after a "
    "grain carrier lost power in heavy fog and drifted onto the sandbar near the lighthouse. "
    "Tugs from three ports worked through the night to pull the vessel free, and divers found "
    "no damage to its hull. Ferry services, which had been running on a reduced timetable, "
    "returned to their normal schedule by noon, although passengers were warned to expect "
    "queues at the southern terminal. The authority said it would review how warnings were "
    "passed to ships in poor visibility, after the carrier's crew reported that a radio "
    "message about the fog bank reached them only minutes before the engine failed. Local "
    "fishermen, who had been unable to leave the inner harbour since Sunday, said the closure "
    "had cost them the best days of the season. A spokesperson for the port promised a "
    "meeting with their association next week to discuss compensation. Meanwhile, engineers "
    "will survey the sandbar, which has grown steadily over the past decade, and a dredging "
    "contract could be awarded before the winter storms arrive."
)
STORY_ZH = (
    "本市北部港区航道周二上午重新开放。两天前，一艘运粮船在浓雾中失去动力，漂上灯塔附近的沙洲。"
    "来自三个港口的拖船连夜作业，终于将货船拖离浅滩，潜水员检查后未发现船体受损。此前减少班次的"
    "渡轮已于中午恢复正常运营，但港务部门提醒乘客，南码头可能仍需排队。港务局表示，将检讨在能见度"
    "低的情况下如何向船只发出警告。据船员反映，有关雾区的无线电通知在发动机故障前几分钟才送达。"
    "自周日以来一直无法出港的渔民表示，这次封港让他们错过了渔季最好的几天。港方发言人承诺下周与"
    "渔民协会会面，商讨补偿事宜。与此同时，工程人员将对近十年来不断扩大的沙洲进行勘测，疏浚合同"
    "有望在冬季风暴到来之前签订。"
)


def test_a_teaser_of_a_long_story_is_its_copy_either_way() -> None:
    """Cut every few characters: the word sketches' containment estimate alone let some of
    these English teasers through as new."""
    for cut in range(30, 290, 5):
        teaser = STORY[:cut].rstrip() + "… Read more"
        assert is_duplicate(teaser, STORY), cut
        assert is_duplicate(STORY, teaser), cut


def test_a_chinese_teaser_of_a_long_story_is_its_copy_either_way() -> None:
    for cut in range(20, 160, 4):
        teaser = STORY_ZH[:cut] + "…全文"
        assert is_duplicate(teaser, STORY_ZH), cut
        assert is_duplicate(STORY_ZH, teaser), cut


# Short texts (300 characters and fewer) too long for their 3-grams to be listed: the character
# sketch estimated a cut's containment under the 0.80 it needs (found by an ad-hoc run of cuts).
LONG_POSTS = [
    "他说，最近几年来，通过江泽民主席和叶利钦总统的五次会晤和双方的共同努力，中俄之间的友好合作取得了丰硕成果。"
    "两国建立平等、互信、面向２１世纪的战略协作伙伴关系，坚持相互尊重，睦邻友好，互利合作，共同发展，既不结盟，"
    "也不对抗，不针对第三国的原则，这完全符合中俄两国人民的根本利益，也有利于维护本地区乃至世界的和平与稳定。",
    "青岛拥有众多京剧戏迷和票友，吸引了许多京剧前贤来这个“大码头”演戏献艺。“四大名旦”、“四大须生”、周信芳、"
    "唐韵笙等京剧大师都多次来青岛演出，受到了极为热烈的欢迎。早在80多年前，青岛就已票房林立、人才辈出，不少名票"
    "下海后，进一步展示了他们的出众才艺。1959年，言少朋、张小楼伉俪在青岛振兴了几乎失传的言派老生艺术，在全国产生"
    "了极大反响。青岛与京剧的渊源，很深很厚，很值得一写。",
]


def test_a_short_post_of_a_hundred_and_more_cut_to_its_first_line_is_its_copy() -> None:
    """Its windows are the post's first: the post begins with it, whatever the sketches say."""
    for post in LONG_POSTS:
        cut = post[:34]
        assert is_duplicate(cut, post), cut
        assert is_duplicate(post, cut), cut
    assert not is_duplicate(LONG_POSTS[0][:34], LONG_POSTS[1]), "windows of another post"


def test_a_post_that_opens_as_the_story_does_is_not_taken_whole() -> None:
    """The windows do not vouch for a post that departs from the story within them: the
    pair is judged on its word sketches, as it was before the windows."""
    stranger = STORY[:60] + " was what my neighbour told me, but I think the ferries were late again today."
    probe, stored = fingerprint(stranger, SETTINGS), fingerprint(STORY, SETTINGS)
    similarity = compare(probe.sketch, stored.sketch)
    words = compare(probe.sketch[:SKETCH_BYTES], stored.sketch[:SKETCH_BYTES])
    assert similarity.containment == words.containment < 1.0


def test_a_number_after_the_last_window_keeps_the_windows_out() -> None:
    """What the windows do not check may be what tells two reports apart."""
    report = "disk usage on the primary web server reached 97"
    assert len(lead_windows(report, short=True)) == 0
    assert len(lead_windows(report + " percent of its capacity this morning", short=True)) >= MIN_WINDOWS


def test_windows_cover_a_short_text_but_its_last_characters() -> None:
    text = "a" * (5 * WINDOW_CHARS + 3)  # the slack takes the last window
    assert len(lead_windows(text, short=True)) == 4
    assert len(lead_windows(text, short=False)) == 5
    assert len(fingerprint(STORY, SETTINGS).sketch) == SKETCH_BYTES + LONG_LEADS


def test_a_short_text_longer_than_a_long_texts_windows_has_none() -> None:
    """With ``short_chars`` raised past 300, a short text's end would lie beyond every window a
    long text keeps: unchecked, so no windows at all."""
    longest = "a" * (MAX_WINDOWS * WINDOW_CHARS + SLACK_CHARS)
    assert len(lead_windows(longest, short=True)) == MAX_WINDOWS
    assert lead_windows(longest + "a" * WINDOW_CHARS, short=True) == b""
    wide = Settings(short_chars=2000)
    other = (
        "My own view is that the ferry company should publish its winter timetable earlier, because "
        "families who visit the islands at the weekend need to plan around the last crossing home."
    )
    probe, stored = fingerprint(STORY[:400] + " " + other, wide), fingerprint(STORY + " " + STORY, wide)
    assert compare(probe.sketch, stored.sketch).containment < 1.0


def test_a_short_text_with_windows_keeps_its_words() -> None:
    post = "Ferry services returned to their normal schedule by noon"
    fp = fingerprint(post, SETTINGS)
    assert lead_windows(post.lower(), short=True)
    assert short_words(fp.sketch) == "ferry services returned to their normal schedule by noon"


def test_a_long_entry_stored_before_the_windows_compares_on_words() -> None:
    teaser = STORY[:100] + "…"
    probe, stored = fingerprint(teaser, SETTINGS), fingerprint(STORY, SETTINGS)
    old = stored.sketch[:SKETCH_BYTES] + stored.sketch[SKETCH_BYTES + LONG_LEADS :]
    before, words = compare(probe.sketch, old), compare(probe.sketch[:SKETCH_BYTES], stored.sketch[:SKETCH_BYTES])
    assert (
        (before.resemblance, before.containment) == (words.resemblance, words.containment) != (words.resemblance, 1.0)
    )
    assert compare(probe.sketch, stored.sketch).containment == 1.0


def test_a_long_story_stores_its_opening_key_and_a_cut_of_it_looks_it_up() -> None:
    """The key that nominates a story for a teaser too short for its twelve-word anchor."""
    story = fingerprint(STORY, SETTINGS)
    key = opening_key(normalize(STORY))
    assert key is not None and key in story.marks and key not in story.probe_keys
    for words in range(5, 12):
        teaser = fingerprint(" ".join(STORY.split()[:words]), SETTINGS)
        assert key in teaser.lookups and key not in teaser.stored_keys, words
    letters = [at for at, char in enumerate(STORY) if char.isalnum()]
    opening_only = STORY[: letters[OPENING_CHARS + SLACK_CHARS - 2] + 1]  # the key's letters, not two windows
    assert opening_key(normalize(opening_only)) == key
    assert key not in fingerprint(opening_only, SETTINGS).lookups, "nothing could verify it whole"


def test_the_opening_key_reads_letters_and_digits_however_far_in() -> None:
    assert opening_key("-- . -- " * 40 + "harbour: reopened; the northern channel") == opening_key(
        "harbour reopened the northern channel"
    )
    assert opening_key("a few short words") is None
