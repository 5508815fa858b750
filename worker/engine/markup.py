"""The markup a text may arrive in: HTML tags, HTML character references, Markdown links.

Feeds pass on text as their source wrote it. An RSS or Atom description, a scraped page or a
CMS export keeps its ``<p>`` and ``<br />`` and its ``&amp;``, ``&#8217;`` and ``&nbsp;``; a
Telegram, Reddit or Mastodon repost writes a link as ``[text](url)``. The same story
arrives once as markup and once as plain text, and the markup's words (``p``, ``br``,
``amp``, ``quot``) and broken lines keep the boilerplate rules from seeing where a footer
starts. :func:`strip_markup` turns such a text into the plain text a reader sees, before the
rest of normalisation.

It stays narrow on purpose, since plain text holds ``<`` and ``&`` too: a tag is one of the
HTML elements feeds carry (``x <y and z>`` is no tag); a named character reference needs its
closing semicolon (``AT&T``, ``&copy2024`` stay as they are: HTML's legacy references without
one would turn ``R&D&notes`` into ``R&D¬es``), a numeric one is read with or without, as
browsers read it (a cut through one leaves it without); a Markdown link needs a link target.
A block element becomes a line break, as a browser shows it, so that a footer in its own
``<p>`` still starts a line; an inline element disappears, so that ``<b>word</b>`` stays one
word. Comments (a CMS's ``<!-- wp:paragraph -->``) go, and so do an RSS item's CDATA marks,
whose content stays. Escaped markup (``&lt;p&gt;``) is text that shows a tag, and stays text:
tags go before references are decoded.
"""

from __future__ import annotations

import html
import re

# Elements that start a line where a browser shows them; the others are inline.
_BLOCK = (
    "p|br|div|h[1-6]|ul|ol|li|dl|dt|dd|blockquote|pre|hr|table|thead|tbody|tfoot|tr|th|td"
    "|figure|figcaption|section|article|header|footer|aside|nav|main|address"
)
_INLINE = (
    "a|abbr|b|big|cite|code|del|em|font|i|img|ins|mark|picture|q|s|small|source|span|strike"
    "|strong|sub|sup|time|u|video|audio|iframe|wbr|center"
)
# A tag of one of those elements, its attributes bounded (a tag does not run past another '<').
_TAG = re.compile(rf"</?(?:({_BLOCK})|(?:{_INLINE}))\b[^<>]{{0,1000}}>", re.I)
# A character reference: decimal or hexadecimal, its semicolon optional as browsers read it, or
# named, with its semicolon.
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7};?|#[xX][0-9a-fA-F]{1,6};?|[A-Za-z][A-Za-z0-9]{1,31};)")
# A Markdown link, ``[text](target "title")``, its target a URL or a path; an image is one
# after "!". Each pattern opens with its literal character, which ``re`` skips to: with an
# optional "!" first, every position of a text was a try.
_LINK_BODY = (
    r"\[([^\[\]\n]{1,300})\]\(\s*<?(?:[a-z][a-z0-9+.\-]{1,15}:|www\.|/)[^()\s<>]{0,2048}>?"
    r"(?:\s+\"[^\"\n]{0,200}\")?\s*\)"
)
_MARKDOWN_IMAGE = re.compile("!" + _LINK_BODY, re.I)
_MARKDOWN_LINK = re.compile(_LINK_BODY, re.I)


# Elements whose content is a page's frame, not its story: navigation, a page's footer, an aside,
# and code. The frame a site puts around every story outweighs a short one (a story of a line
# inside its site's menu and share links no longer found the same line on its own).
_FRAME = re.compile(r"<(nav|footer|aside|script|style|noscript)\b[^<>]{0,1000}>", re.I)


def strip_markup(text: str) -> str:
    """``text`` as a reader sees it: comments and CDATA marks out, a page's frame out
    (:data:`_FRAME`), tags out (a block one a line break), character references decoded, a
    Markdown link its text and an image nothing. A text without ``<``, ``&`` or ``](`` costs
    three substring tests."""
    if "<" in text and ">" in text:
        if "<!" in text:
            text = _comments_out(text)
        text = _frame_out(text)
        text = _TAG.sub(_tag_sub, text)
    if "&" in text:
        text = _REFERENCE.sub(_reference_sub, text)
    if "](" in text:
        text = _MARKDOWN_IMAGE.sub("", text) if "![" in text else text
        text = _MARKDOWN_LINK.sub(r"\1", text)
    return text


def _comments_out(text: str) -> str:
    """Without its HTML comments (a CMS's "<!-- wp:paragraph -->") and an RSS item's CDATA
    marks ("<![CDATA[…]]>", its content kept). Found with ``str.find``, one pass: a regex
    looking for each "<!--" its "-->" would read the rest of a text of many "<!--" again for each."""
    if "<![CDATA[" in text:
        text = text.replace("<![CDATA[", "").replace("]]>", "")
    kept: list[str] = []
    at = 0
    while (start := text.find("<!--", at)) >= 0 and (end := text.find("-->", start + 4)) >= 0:
        kept.append(text[at:start])
        at = end + 3
    return "".join(kept) + text[at:] if kept else text


def _frame_out(text: str) -> str:
    """Without the content of the frame's elements, each up to its first closing tag. An element
    never closed is left (its tags go later); once one is found unclosed, no later element of
    that name can be closed either, so none is looked for again: one pass however many there are."""
    kept: list[str] = []
    at, unclosed = 0, set()
    for opening in _FRAME.finditer(text):
        name = opening.group(1).lower()
        if opening.start() < at or name in unclosed:
            continue
        closing = re.compile(rf"</{name}\s*>", re.I).search(text, opening.end())
        if closing is None:
            unclosed.add(name)
            continue
        kept.append(text[at : opening.start()])
        at = closing.end()
        kept.append("\n")
    return "".join(kept) + text[at:] if kept else text


def _tag_sub(match: re.Match[str]) -> str:
    return "\n" if match.group(1) else ""


def _reference_sub(match: re.Match[str]) -> str:
    return html.unescape(match.group())
