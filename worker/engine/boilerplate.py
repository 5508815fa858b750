"""The wrapper outlets put around a story: datelines in front, footers behind, links and tags.

Patterns for :func:`worker.engine.normalize.normalize`, kept apart from its character steps.
Datelines and footers are anchored to the ends of the text, so body text is never eaten;
every repetition is bounded, so a hostile event cannot make a pattern take quadratic time.
"""

from __future__ import annotations

import re

from worker.engine.actions import call_to_action

# --- datelines (start of text) -------------------------------------------------------------

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_EN_DATE = _MONTH + r"\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?"
# One or more all-caps place words ("BEIJING", "NEW YORK", "ST. LOUIS", "SAN FRANCISCO/NEW
# YORK"); the first word has 3+ characters so a capitalised "OK —" or "AI —" is not a city.
_EN_PLACE = r"[A-Z][A-Z.'\-]{2,}(?:[ /]+[A-Z][A-Z.'\-]*)*"
# An optional region in title case after a comma: "KYIV, Ukraine", "AUSTIN, Texas", ", D.C.".
_EN_REGION = r",\s+[A-Z][A-Za-z.]*(?:\s+[A-Z][A-Za-z.]*){0,2}"
# Agency credit in parentheses: (Reuters), (AP), (AFP), (dpa), (Reuters Breakingviews).
_EN_AGENCY = r"\([A-Za-z][\w&.' /\-]{0,40}\)"
_EN_DASH = r"\s*(?:-{1,3}|[\u2013\u2014\u2015])\s*"

_EN_DATELINE = (
    r"(?:"
    + _EN_PLACE
    + f"(?:{_EN_REGION})?"
    + rf"(?:,?\s+{_EN_DATE})?"
    + rf"(?:\s*{_EN_AGENCY})?"
    + "|"
    + _EN_DATE
    + rf"(?:\s*{_EN_AGENCY})?"
    + "|"
    + _EN_AGENCY
    + ")"
    + _EN_DASH
    # A web page's byline bar: "Singapore | May 9, 2024 |".
    + r"|[A-Z][A-Za-z.']+(?: [A-Z][A-Za-z.']+){0,2}\s*\|\s*"
    + _EN_DATE
    + r"\s*\|"
)

_ZH = "\u4e00-\u9fff"
# Wire dateline: outlet (ends in 社/网/报/台/端, e.g. 新华社, 中新网, 本报, 客户端), optional place,
# date, then 电/讯: "新华社北京1月5日电", "中新网5月3日电", "本报北京1月5日讯". Requiring the outlet
# suffix keeps body text such as "今年1月5日电力…" intact.
_ZH_WIRE = (
    rf"[{_ZH}]{{0,12}}?(?:社|网|报|台|端)[{_ZH}]{{0,10}}?"
    r"(?:\d{4}年)?\d{1,2}月\d{1,2}日(?:电|讯|消息)"
)
# Flash credit without a date: "本报讯", "新京报讯", "央视网消息", "环球网报道".
_ZH_FLASH = rf"(?:[{_ZH}]{{0,10}}?(?:报|社|网|台|端)讯|[{_ZH}]{{1,10}}?网(?:消息|报道))"
# Bracketed lead credit: "【环球网报道】", "【环球时报综合报道】", "【新华社快讯】".
_ZH_BRACKET = r"【[^】\n]{0,20}(?:报道|讯|电|消息)】"
# Reporter credit right after a dateline: "(记者 张三)" (full-width brackets are ASCII by now).
_ZH_REPORTER = r"(?:\s*(?:\([^()\n]{0,40}\)|【[^】\n]{0,40}】))?"
# "原标题:…" on its own first line (reposts put the original headline there).
_ZH_ORIGINAL_TITLE = r"原标题\s*:[^\n]*\n"

# A reply's attribution on a line of its own: "maria_k wrote:", "newsbot99 wrote on Sept. 9:",
# "On Tue, Jan 5, Ann Lee wrote:", ended by a line break or a spaced dash.
_EN_WROTE = (
    r"(?:On [^\n]{1,60}?,\s+)?[\w.@\-]{1,40}(?: [\w.\-]{1,40})? wrote(?: on " + _EN_DATE + r")?:(?:[ \t]*\n|\s+-\s)"
)

# A byline on a line of its own: "By Jane Doe, Associated Press", "By JANE DOE", "By Jane Doe
# and John Roe | Reuters", "By Jean de la Fontaine". A name is up to four capitalised words
# (particles between them); the line must end after the outlet, so "By Monday, officials
# said" is prose, and a line must follow: a post that is a byline alone ("By Ron Miller", a
# signature) keeps it as its text. Left in before a story, it is most of a short post, and an
# item of the byline alone read as the opening of every later story under it.
_EN_NAME = r"[A-Z][\w.'\-]{0,24}(?: (?:(?:de|da|del|der|van|von|la|le|bin|al) ){0,2}[A-Z][\w.'\-]{0,24}){0,3}"
_EN_OUTLET = r"[A-Z][\w&.'\-]{0,24}(?: [A-Za-z][\w&.'\-]{0,24}){0,4}"
_EN_BYLINE = rf"By {_EN_NAME}(?:,? and {_EN_NAME})?(?: ?[,|\u2014\u2013-] ?{_EN_OUTLET})?[ \t]*\n(?=\s*\S)"
# A Chinese article's author line: "作者:张三", "文/张三", "文|张三" (full-width marks are ASCII by now).
_ZH_AUTHOR = r"(?:作者|撰文|文)\s*[:/|]\s*[^\n]{1,16}?[ \t]*\n(?=\s*\S)"

_DATELINE = re.compile(
    r"\s*(?:"
    + _EN_DATELINE
    + f"|{_EN_BYLINE}"
    + f"|{_ZH_AUTHOR}"
    + f"|{_EN_WROTE}"
    + f"|(?:{_ZH_WIRE}|{_ZH_FLASH}){_ZH_REPORTER}\\s*[:,]?"
    + f"|{_ZH_BRACKET}"
    + f"|{_ZH_ORIGINAL_TITLE}"
    + r")\s*"
)

# --- footers (end of text) -----------------------------------------------------------------

# A footer starts after a line break, a sentence end or a closing bracket (or is the whole
# text), and must run to the very end of the text.
_FOOTER_BOUNDARY = "[\\n.!?。！？…\"')\\]】]"
_FOOTERS_EN = (
    # "(Reporting by X; Editing by Y)", "(Additional reporting by …)", "(This story has been refiled …)"
    r"\((?:additional |further )?(?:reporting|writing|editing|compiled|research|graphics"
    r"|translation)\b[^()\n]{0,300}\)",
    r"\(this (?:story|article|version)\b[^()\n]{0,300}\)",
    # calls to action the feed appends
    r"(?:read more\s*(?::|at\b|on\b|here\b|>|»|\.\.\.|…|(?=\n)|\Z)|more from\b[^\n.!?]{0,40}:"
    r"|see also\s*:|related(?: articles| stories| coverage)?\s*:"
    r"|follow (?:us|me|him|her|them|@\w+)\b|sign up\b|subscribe (?:to|for|now)\b"
    r"|click here\b|share (?:this|on|via)\b|like us on\b|download (?:our|the) app\b|our standards\s*:"
    r"|continue reading\b|read (?:the )?(?:full|whole|complete|entire|original) (?:story|article|report|post)\b)"
    r"[^\n]{0,300}",
    # "Copyright 2024 …", "© 2024 Reuters", "(c) 2024 …", "All rights reserved."
    r"(?:copyright\s*(?:©|\(c\)|(?:19|20)\d\d)|©|\(c\)\s*(?:19|20)\d\d)[^\n]{0,200}",
    r"all rights reserved\.?",
)
_FOOTERS_ZH = (
    # "(完)", "【完】", "[完]"
    r"[(\[【]完[)\]】]",
    # credit lines: "责任编辑:张三", "来源:新华社", "原标题:…", "(编辑:张三)"
    r"[(\[【]?(?:责任编辑|责编|实习编辑|值班编辑|编辑|校对|审核|审校|终审|监制|主编|来源|文章来源"
    r"|本文来源|图片来源|原标题|作者|撰文|摄影|记者|通讯员|出品|策划|制作)\s*[:|][^\n]{0,80}",
    # calls to action: "点击查看原文", "扫码关注…", "更多精彩:…"
    r"点击(?:查看|进入|阅读|下载|关注|这里)[^\n]{0,80}",
    r"(?:扫码|扫描二维码|长按二维码|长按识别|欢迎关注|关注我们)[^\n]{0,80}",
    r"(?:更多|相关)(?:精彩|阅读|新闻|内容|报道|链接)\s*[:>][^\n]{0,120}",
    # provenance / disclaimers: "本文来自…", "声明:…"
    r"(?:本文|文章)(?:来自|转自|转载自)[^\n]{0,120}",
    r"(?:免责)?声明\s*:[^\n]{0,200}",
)
_FOOTER_BODY = "(" + "|".join(_FOOTERS_EN + _FOOTERS_ZH) + r")\s*\Z"
# A cut's "to be continued" mark: "(未完)", "【未完待续】", "(continued)", "[...]". It follows the
# cut wherever that fell, mid-word or mid-sentence, so it needs no boundary before it; left in,
# it is a word or two of a post of a line that its original never had.
_UNFINISHED = re.compile(
    r"[(\[【](?:未完待续|未完|待续|续|to be continued|continued|cont(?:'?d)?\.?|more|\.\.\.|…)[)\]】]\s*\Z", re.I
)
_UNFINISHED_WINDOW = 24  # the longest mark, and the spaces after it
# Searching from a boundary character lets ``re`` skip to candidates with its charset scan.
_FOOTER = re.compile(_FOOTER_BOUNDARY + r"\s*" + _FOOTER_BODY, re.I)
# Footers are short; only the tail is searched so a long text costs nothing extra.
_FOOTER_WINDOW = 400
# Real feeds stack a few credits or footers; the bound keeps a hostile event (thousands of
# "(完)") from costing one pass, and one copy of the text, per repetition.
_MAX_STACKED = 6


def strip_dateline(text: str) -> str:
    """Drop stacked leading credits ("原标题…\\n【环球网报道】…"), a few at most.

    Rules (``_DATELINE``, matched only at the start of the text, case-sensitive):

    * English wire dateline ending in a dash (-, --, en/em dash): all-caps place(s) with an
      optional title-case region, optional date ("Jan. 5", "March 3, 2024"), optional agency
      in parentheses — "BEIJING, Jan. 5 (Reuters) -", "WASHINGTON (AP) —",
      "KYIV, Ukraine (AP) —", "LONDON, March 3 --"; or just "Jan 5 (Reuters) -" / "(AFP) -";
      or a byline bar, "Singapore | May 9, 2024 |".
    * Chinese wire dateline: outlet ending in 社/网/报/台/端, optional place, date, 电/讯/消息,
      optional reporter credit in brackets — "新华社北京1月5日电（记者 张三）", "中新网5月3日电".
    * Chinese flash credit: "本报讯", "新京报讯（记者 李四）", "央视网消息（新闻联播）：".
    * Bracketed lead credit ending in 报道/讯/电/消息: "【环球网报道】", "【新华社快讯】".
    * "原标题：…" as the whole first line.
    * A reply's attribution line: "maria_k wrote:", "newsbot99 wrote on Sept. 9:", "On Tue, Jan
      5, Ann Lee wrote:", then a line break (or " - ").
    """
    for _ in range(_MAX_STACKED):
        m = _DATELINE.match(text)
        if m is None or m.end() == 0:
            break
        text = text[m.end() :]
    return text


def strip_footers(text: str) -> str:
    """Drop stacked trailing footers ("…(Reporting by X) Copyright 2024 Y"), a few at most.

    Rules (``_FOOTER``, case-insensitive): a footer starts at a line break, a sentence end or
    a closing bracket, is short (bounded length, one line) and reaches the end of the text:

    * credits in parentheses: "(Reporting by …; Editing by …)", "(Additional reporting by …)",
      "(This story has been refiled …)";
    * calls to action: "Read more: …", "More from Reuters: …", "Related: …", "Follow us on …",
      "Sign up …", "Subscribe to …", "Click here …", "Share on …", "Our Standards: …",
      "Continue reading …", "Read the full story …";
    * rights: "Copyright 2024 …", "© 2024 …", "(c) 2024 …", "All rights reserved.";
    * a cut's mark, right after the cut: "（未完）", "【未完待续】", "(continued)", "[...]";
    * Chinese end marks and credits: "（完）", "【完】", "责任编辑：…", "责编：…", "编辑：…",
      "来源：…", "原标题：…", "作者：…", "记者：…", "校对：…", "审核：…";
    * Chinese calls to action and provenance: "点击查看…", "扫码关注…", "更多精彩：…",
      "本文来自…", "声明：…";
    * social calls to action, two actions in a row (:func:`call_to_action`): "- tap like and
      subscribe…", "· like, share and follow…", "点赞+转发+关注…", " 转发并关注，抽5位送…".
    """
    for _ in range(_MAX_STACKED):
        m = _FOOTER.search(text, max(0, len(text) - _FOOTER_WINDOW))
        cut = m.start(1) if m is not None else _unfinished(text)
        cut = call_to_action(text) if cut is None else cut
        if cut is None or not text[:cut].strip():
            # Never the whole text: a post that *is* one line like "Read more: …" or
            # "Our Standards: …" is content, and stripping it would leave nothing to match on.
            break
        text = text[:cut].rstrip()
    return text


def _unfinished(text: str) -> int | None:
    """Where a cut's mark starts, if the text ends with one. Looked for only when the text ends
    with a closing bracket: a search of every text's tail for it doubled the footers' cost."""
    if text.rstrip()[-1:] not in (")", "]", "】"):
        return None
    m = _UNFINISHED.search(text, max(0, len(text) - _UNFINISHED_WINDOW))
    return None if m is None else m.start()


# --- links, mentions, hashtags -------------------------------------------------------------

# URL characters per RFC 3986; a URL does not end in sentence punctuation. Every repetition
# is bounded or possessive so that a long run of dots and letters cannot make a regex
# retry the whole run from each of its positions (quadratic time on a 1 MB event).
_URL_CHARS = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]{0,2048}"
_URL_END = r"[A-Za-z0-9\-_~/#=&%+]"
_DOMAIN = r"(?:[a-z0-9\-]{1,63}+\.){1,8}+[a-z]{2,24}+"
LINKS = re.compile(
    r"(?:https?://|www\.)"
    + _URL_CHARS
    + _URL_END
    # bare domain with a path: "t.cn/A6x", "example.com/news/1"
    + r"|\b"
    + _DOMAIN
    + "/"
    + "(?:"
    + _URL_CHARS
    + _URL_END
    + ")?"
    # e-mail address
    + r"|\b[a-z0-9._%+\-]{1,64}+@"
    + _DOMAIN
    + r"\b",
    re.I,
)
# Each alternative starts with a literal "#" or "@" so ``re`` skips to candidates quickly;
# the lookbehinds after it check the character before the sign.
TAGS = re.compile(
    # Weibo topic "#两会#": no spaces inside, contains a Chinese character
    f"#(?=[^#\\s]{{0,60}}[{_ZH}])[^#\\s]{{1,60}}#"
    # Twitter-style "#tag" (not "c#", not "&#39;"), with a letter in it: "#1 seed", "#9
    # Envelope" and "issue #42" are numbers, as Twitter reads them
    + r"|#(?<![\w&#]#)(?=[\w\-]*[^\W\d_])\w[\w\-]*"
    # "@name" up to whitespace/punctuation (not the middle of an e-mail address)
    + r"|@(?<![\w.@]@)[\w\-]+"
)
# An emoji a client writes as a code and another shows as a picture, so that one copy of a
# post has it as text and the next has nothing (or a symbol, which step 1 drops): Weibo's and
# WeChat's "[哈哈]", "[doge]" (one to four Chinese characters, or one of Weibo's Latin codes, in
# ASCII brackets; "【…】" is a header) and the ":tada:" of Slack, Discord and GitHub (lower
# case: ":Source:" opening a line is a label).
EMOJI_CODES = re.compile(f"\\[(?:[{_ZH}]{{1,4}}|doge|good|ok|cool|bm)\\]")
# Each pattern opens with its literal character, which ``re`` skips to: with the lookbehind
# first, every position of a text was a try.
SHORTCODES = re.compile(r":(?<![\w:]:)[a-z0-9_+\-]{2,32}:(?![\w:])")
# Cheap test for a bare domain with a path ("t.cn/…"), so the link regex runs only when needed.
DOMAIN_HINT = re.compile(r"\.[a-z]{2,}/")


# --- repost wrappers (after case folding, before mentions are dropped) ---------------------

_HANDLE = r"@[\w\-]{1,40}"
# In front: "RT @a:", "MT @a", "via @a:", "h/t @a", "RT:", "转发微博//@a:", "//@a:", "转：@a", "【转】".
_REPOST_LEAD = re.compile(
    r"\s*(?:(?:rt|mt|ht|h/t|via|cc)\s*:?\s*" + _HANDLE + r"\s*:?"
    r"|rt\s*:"
    r"|(?:转发微博|转发|转载|转自|转)\s*[:/]*\s*" + _HANDLE + r"\s*:?"
    r"|//\s*" + _HANDLE + r"\s*:?"
    r"|[【\[]\s*转(?:发|载|帖)?\s*[】\]]"
    r"|(?:转发微博|转载|转)\s*:"
    r")\s*"
)
# Behind: "via @a", "(via @a)", "/via @a", "h/t @a", "HT @a", "RT", "分享自@a", "(转自@a)",
# "来自@a的微博", "//@a: 转发", and a source credited in brackets, "(via Reuters)".
_REPOST_TAIL = re.compile(
    r"(?:(?<![a-z0-9])[(\[]?\s*/?(?:via|h/t|ht|cc|rt|mt)\s*:?\s*" + _HANDLE + r"\s*[)\]]?"
    r"|[(\[]\s*via\s+[a-z][\w .&'-]{0,40}[)\]]"
    r"|[(\[]?\s*(?:分享自|转自|来自)\s*:?\s*" + _HANDLE + r"(?:的微博)?\s*[)\]]?"
    r"|//\s*" + _HANDLE + r"\s*:?\s*(?:转发微博|转发)?"
    r"|(?<![a-z0-9])rt"
    r")\s*\Z"
)
_REPOST_WINDOW = 120
# Wrappers without a mention ("RT:", a trailing "RT", "【转】", "转：", "转发微博:").
_REPOST_HINT = re.compile(r"\brt\b|【转|转(?:发微博|发|载)?\s*:")


def may_have_repost(text: str) -> bool:
    """Whether :func:`strip_reposts` may change ``text``: it has a mention, or one of its ends a
    mention-less wrapper. A substring test first: a regular expression over the whole text would
    cost ~15 µs/KB on every event."""
    tail = text[-_REPOST_WINDOW:]
    return "@" in text or _repost_hint(text[:40]) or _repost_hint(tail) or "via " in tail


def _repost_hint(end: str) -> bool:
    maybe = "转" in end or end.startswith("rt") or " rt" in end  # "rt" must start a word
    return maybe and _REPOST_HINT.search(end) is not None


def strip_reposts(text: str) -> str:
    """Drop the repost wrapper around a post: retweet and forward markers in front ("RT @a:",
    "MT @a", "via @a:", "转发微博//@a:", "//@a:", "【转】", "转：@a"), via and share credits
    behind ("via @a", "(via @a)", "(via Reuters)", "h/t @a", "RT", "分享自@a", "（转自@a）", "//@a: 转发"), a few
    stacked at most. Never the whole text. Runs on case-folded text that still has its
    @mentions: a wrapper is recognised by the mention it credits (or by its fixed form)."""
    for _ in range(_MAX_STACKED):
        m = _REPOST_LEAD.match(text)
        if m is None or m.end() == 0 or m.end() >= len(text):
            break
        text = text[m.end() :]
    for _ in range(_MAX_STACKED):
        m = _REPOST_TAIL.search(text, max(0, len(text) - _REPOST_WINDOW))
        if m is None or not text[: m.start()].strip():
            break
        text = text[: m.start()].rstrip()
    return text


# --- a title that repeats the opening (after case folding, links and tags) -----------------

_TITLE_LINE = 160  # a title line ends within this many characters
_TITLE_SPACE = 64  # a title that ends at the first space ends within this many
_TITLE_DASH = re.compile(" [-|\u2013\u2014\u2015]{1,2} ")  # a literal space first: the scan skips to spaces
_TITLE_GAP = " \n-|\u2013\u2014\u2015"  # between a title and its text
_NOT_CORE = re.compile(r"[\W_]+")
_HAN_CHAR = re.compile(f"[{_ZH}]")
# The least of a header the text after it must repeat: a few Han characters are a phrase, a
# few letters a word or two.
_REPEAT_HAN, _REPEAT_OTHER = 4, 8


def strip_title(text: str) -> str:
    """Drop a title or header line that repeats the opening of the text after it ("【分享】电源口
    有些松 电源口有些松，…", "re: update debian/rules\nupdate debian/rules."). A copy under such
    a header differs from its original by the whole header, which on a short post is as long as
    the post. Only when what the header repeats is at least half of its letters and digits, so
    a header saying something of its own ("posted by …", a date) stays. Stacked titles go one
    after the other, so that normalising twice changes nothing."""
    for _ in range(_MAX_STACKED):
        shorter = _strip_one_title(text)
        if shorter is text:
            break
        text = shorter
    return text


def _strip_one_title(text: str) -> str:
    # Where a title may end: the first line break, the first dash or bar between spaces (a
    # feed's "title - description"), or the first space (a Chinese header's separator; an
    # English title of a few words ends at one of the others). A title that repeats the whole
    # text must end at a line break or a dash: a word said twice ("bye bye") is no title.
    dash = _TITLE_DASH.search(text, 0, _TITLE_LINE)
    line, dashed, space = (
        text.find("\n", 0, _TITLE_LINE),
        -1 if dash is None else dash.start(),
        text.find(" ", 1, _TITLE_SPACE),
    )
    for end, may_be_whole in ((line, True), (dashed, True), (space, False)):
        if end <= 0:
            continue
        lead = text[end : end + 8]
        start = end + len(lead) - len(lead.lstrip(_TITLE_GAP))
        # Cheap first: the header holds the first characters after it.
        if start < len(text) and text.find(text[start : start + _REPEAT_HAN], 0, end) != -1:
            opening = _NOT_CORE.sub("", text[start : start + end + 16])
            whole = may_be_whole and start + end + 16 >= len(text)
            if _repeats(_NOT_CORE.sub("", text[:end]), opening, whole):
                return text[start:]
    return text


def _repeats(head: str, opening: str, whole: bool = False) -> bool:
    """Whether ``head`` ends with the start of ``opening``, over at least half of it. A header
    that repeats the whole of a text (``whole``: ``opening`` is all of it) is stripped however
    short the text: "Re: audio CD\naudio CD" is the post "audio CD" under its own title."""
    for k in range(min(len(head), len(opening)), (len(head) + 1) // 2 - 1, -1):
        if head.endswith(opening[:k]):
            least = _REPEAT_HAN if _HAN_CHAR.search(opening[:k]) else _REPEAT_OTHER
            return k >= least or whole and k == len(opening) > 0
    return False
