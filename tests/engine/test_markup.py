"""Markup: a story that arrives as HTML or Markdown is the story its plain text tells."""

from __future__ import annotations

import pytest

from tests.engine.pairs import is_duplicate
from worker.engine.markup import strip_markup
from worker.engine.normalize import normalize

STORY = (
    "The city council voted on Monday to close the old bridge for repairs that will last two years.\n"
    "Drivers will be sent over the new ring road, which adds twenty minutes to the trip at rush hour.\n"
    "Shop owners on both banks say they fear losing customers, and ask for a ferry during the works."
)
ZH_STORY = "市政府周一宣布，老桥将封闭维修两年。\n司机需绕行新建的环路，高峰时段将多花二十分钟。\n两岸商户担心客流减少，希望施工期间开通渡轮。"


def test_html_paragraphs_and_breaks_read_as_the_lines_they_show() -> None:
    html_story = "<p>" + "</p>\n<P class='x'>".join(STORY.split("\n")) + "</p>"
    assert normalize(html_story) == normalize(STORY)
    assert normalize(ZH_STORY.replace("\n", "<br />")) == normalize(ZH_STORY)


def test_comments_and_cdata_marks_go_and_the_text_stays() -> None:
    assert normalize("<!-- wp:paragraph --><p>Prices rose</p><!-- /wp:paragraph -->") == "prices rose"
    assert normalize("<![CDATA[Prices rose <b>again</b>]]>") == "prices rose again"
    assert strip_markup("a <!-- b") == "a <!-- b"  # no end: no comment
    assert strip_markup("x --> y <!-- z --> w") == "x --> y  w"


def test_a_pages_frame_goes_and_its_story_stays() -> None:
    page = (
        "<nav><a href='/'>Home</a> | <a href='/news'>News</a></nav><h1>Local</h1>"
        "<p>The council voted to close the old bridge.</p><script>var s = '<p>x</p>';</script>"
        "<aside>Most read: ten things to do</aside><div>Share on Facebook</div>"
        "<footer>© 2024 Springfield Daily</footer>"
    )
    assert normalize(page) == "local the council voted to close the old bridge."
    assert strip_markup("<NAV>menu</Nav >story") == "\nstory"
    assert strip_markup("<nav>never closed, story") == "\nnever closed, story"  # its tag goes, its text stays


def test_two_stories_in_one_sites_frame_stay_apart_and_each_finds_its_plain_text() -> None:
    frame = "<nav>Home | News | Sport | Weather</nav>{}<div>Share on Facebook · Share on Twitter</div><footer>© 2024 Springfield Daily. All rights reserved.</footer>"
    bridge, fire = (
        "The council voted to close the old bridge for two years of repairs.",
        "Police said a fire at the harbour warehouse was put out overnight.",
    )
    assert is_duplicate(bridge, frame.format(f"<p>{bridge}</p>"))
    assert not is_duplicate(frame.format(f"<p>{fire}</p>"), frame.format(f"<p>{bridge}</p>"))


def test_an_inline_tag_leaves_its_words_whole() -> None:
    assert normalize('Prices <b>rose</b> at <a href="https://example.com/x">the market</a>') == (
        "prices rose at the market"
    )


def test_a_dateline_in_a_paragraph_is_still_a_dateline() -> None:
    assert normalize("<p>新华社北京1月5日电 国务院今天召开常务会议。</p>") == "国务院今天召开常务会议。"


def test_a_footer_in_a_paragraph_of_its_own_is_still_a_footer() -> None:
    assert normalize("<p>Oil prices rose on Monday.</p><p>(Reporting by Jane Doe; Editing by Mark Roe)</p>") == (
        "oil prices rose on monday."
    )


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("Tom &amp; Jerry", "Tom & Jerry"),
        ("don&#8217;t say &quot;never&quot;", 'don’t say "never"'),
        ("&#x4E2D;&#x6587;", "中文"),
        ("a&nbsp;b", "a\u00a0b"),
        ("&#20013;&#25991", "中文"),  # numeric without its semicolon, as browsers read it (a cut one)
    ],
)
def test_character_references_are_decoded(raw: str, plain: str) -> None:
    assert strip_markup(raw) == plain


@pytest.mark.parametrize(
    "text",
    [
        "AT&T and R&D&notes",  # no semicolon: HTML's legacy references would make "¬es"
        "if x <y and z> 3 then",  # no element of HTML
        "a < b and c > d",
        "&lt;p&gt; is how a paragraph starts",  # escaped markup is text showing a tag
        "see [1](2) and [note]",  # a Markdown link needs a target
        "5 * 3 = 15",
    ],
)
def test_plain_text_that_looks_like_markup_stays(text: str) -> None:
    assert strip_markup(text) == text.replace("&lt;", "<").replace("&gt;", ">")


def test_markdown_links_become_their_text_and_images_nothing() -> None:
    assert strip_markup('Read [the report](https://example.com/r.pdf "PDF") now ![chart](/img/c.png)') == (
        "Read the report now "
    )


@pytest.mark.parametrize(
    "copy",
    [
        "<p>" + "</p><p>".join(STORY.split("\n")) + "</p>",
        STORY.replace("'", "&#39;").replace(",", "&#44;").replace(" the ", " the&nbsp;"),
        STORY + '\n<a href="https://example.com/bridge">Read the full story</a>',
        STORY + "\n\n[Read the full story](https://example.com/bridge?utm_source=telegram)",
        "<div>" + ZH_STORY.replace("\n", "<br>") + "</div>",
        "".join(f"&#{ord(c)};" for c in ZH_STORY),  # a page that escaped every character
    ],
)
def test_a_copy_in_markup_is_a_duplicate_of_the_plain_story(copy: str) -> None:
    original = ZH_STORY if "市政府" in copy or "&#24066;" in copy else STORY
    assert is_duplicate(copy, original)
