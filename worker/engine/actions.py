"""Social calls to action: the wrapper a feed account puts after every post.

Two actions asked of the reader in a row ("like, share and follow …", "点赞+转发+关注…") are
the account's, not the post's (:func:`call_to_action`); :mod:`worker.engine.boilerplate`
cuts them as it cuts a footer.
"""

from __future__ import annotations

import re

# "Tap like and subscribe", "转发并关注…抽奖": one action word is ordinary
# prose ("fans follow the team", "they share photos and like to sing"); a run of them is the
# wrapper a feed account puts around every post, which otherwise outweighs a short post inside
# it. The first action starts the segment (an English one within its first three words, the
# next joined to it by at most a comma or "and"; a Chinese one within six characters, the next
# within eight), and the segment must reach the end of the text within one line.
_WORDS_EN = ("like", "share", "follow", "retweet", "repost", "subscribe", "comment", "tap", "click", "join", "download")
_WORDS_ZH = ("转发", "转载", "关注", "点赞", "评论", "分享", "收藏", "抽奖", "私信", "订阅")
_ACTIONS_EN = "(?:" + "|".join(_WORDS_EN) + ")"
_ACTIONS_ZH = "(?:" + "|".join(_WORDS_ZH) + ")"
# Two actions in a row, then what may stand between the boundary and the first of them.
_CTA_EN = re.compile(rf"\b{_ACTIONS_EN}\s*(?:,|&|\+|/|and|or)?\s*(?:then\s+)?{_ACTIONS_EN}\b")
_CTA_ZH = re.compile(rf"{_ACTIONS_ZH}[^\n]{{0,8}}?{_ACTIONS_ZH}")
# Where a call to action may start: a sentence end, a line break, a bracket or a separator
# ("- tap like…", "· like, share…"); a Chinese one also after a space, which Chinese prose
# does not put inside a sentence.
_LEAD_EN = re.compile(r"[\n.!?\"')\]】\-|·•»:;]\s*(?:[a-z']+\s+){0,2}\Z")
_LEAD_ZH = re.compile(r"[\n.!?\"')\]】\-|·•»:;~。！？ ][^\n]{0,6}\Z")
_SEPARATORS = "-|·•»:;~ "  # cut with the call to action; a sentence end or bracket stays
_CTA_LONGEST = 200
_LEAD_LONGEST = 40
_PAIR_GAP = 12  # characters between two action words that may form a pair
# Any action word, as a plain substring: where the pair patterns may start.
_CTA_HINT = re.compile("|".join(_WORDS_ZH + _WORDS_EN))


def call_to_action(text: str) -> int | None:
    """Where a trailing call to action starts in ``text`` (case-folded), or None: the first
    pair of actions in the last line's last ``_CTA_LONGEST`` characters with a boundary just
    before it. One scan of the tail for action words; the patterns run only where two of
    them stand close, which prose seldom has."""
    start = max(0, len(text) - _CTA_LONGEST, text.rfind("\n") + 1)
    hits = [m.span() for m in _CTA_HINT.finditer(text, start)]
    for (first, end), (second, _) in zip(hits, hits[1:], strict=False):
        if second - end > _PAIR_GAP:
            continue
        pair, lead = (_CTA_EN, _LEAD_EN) if text[first].isascii() else (_CTA_ZH, _LEAD_ZH)
        if pair.match(text, first) is None:
            continue
        m = lead.search(text, max(0, first - _LEAD_LONGEST), first)
        if m is not None:
            return m.start() if m.group()[0] in _SEPARATORS else m.start() + 1
    return None
