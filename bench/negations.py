"""A post and the same post saying the opposite; a post and its copy in another outlet's style.

"Fed will not raise rates" and "Fed will raise rates" are two messages whose words agree but
for one; an outlet that writes "does not" and one that writes "doesn't" send one message in
two styles. Neither set holds either pair. This probe takes English development-set texts
that hold an auxiliary verb (posts of 10-99 characters, or with ``--stories`` stories of 150
and more, as ``bench/wrappers.py`` takes them) and makes of each:

* ``flipped``: a hard negative, "not" put in after its first auxiliary ("will" -> "will not"),
  or taken out after it where it was there;
* ``styled``: a copy, its negations contracted ("does not" -> "doesn't") or, where it had
  contractions, written out;
* ``denied``: a hard negative, its first past-tense verb after a word denied in the present
  ("raised" -> "did not raise").

It scans each kind with the texts alone and prints how many flips were called a copy of their
text (a false duplicate each) and the recall of the styled copies. A development probe, not a
held-out set.

    python -m bench.negations
    python -m bench.negations --stories --per-language 200
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from bench.wrappers import Event, scan_scored, stories

_AUXILIARY = re.compile(
    r"\b(is|are|was|were|will|would|can|could|should|does|do|did|has|have|had|must)( not)?\b(?! not)(?!')", re.I
)
_CONTRACTIONS = {
    "is not": "isn't", "are not": "aren't", "was not": "wasn't", "were not": "weren't", "will not": "won't",
    "would not": "wouldn't", "can not": "can't", "cannot": "can't", "could not": "couldn't",
    "should not": "shouldn't", "does not": "doesn't", "do not": "don't", "did not": "didn't",
    "has not": "hasn't", "have not": "haven't", "had not": "hadn't", "must not": "mustn't",
}  # fmt: skip
_WRITTEN = re.compile(r"\b(" + "|".join(_CONTRACTIONS) + r")\b", re.I)
_CONTRACTED = re.compile(r"\b(" + "|".join(map(re.escape, set(_CONTRACTIONS.values()))) + r")", re.I)
_WRITTEN_OUT = {short: full for full, short in _CONTRACTIONS.items() if full != "cannot"}


def flipped(text: str) -> str | None:
    """``text`` saying the opposite: "not" after its first auxiliary, or taken out after it."""
    found = _AUXILIARY.search(text)
    if found is None:
        return None
    replacement = found.group(1) if found.group(2) else found.group(1) + " not"
    return text[: found.start()] + replacement + text[found.end() :]


_PAST = re.compile(r"(?<=[a-z] )([a-z]{2,})ed\b")


def denied(text: str) -> str | None:
    """``text`` denying its first past-tense verb: "raised" -> "did not raise"."""
    found = _PAST.search(text)
    if found is None:
        return None
    word = found.group()
    base = word[:-2] if word[-3] in "tdklmnprw" and word[-4] not in "aeiou" else word[:-1]
    return text[: found.start()] + "did not " + base + text[found.end() :]


def styled(text: str) -> str | None:
    """``text`` in the other style of negations: contracted, or written out where it was contracted."""
    if _WRITTEN.search(text):
        return _WRITTEN.sub(lambda m: _cased(_CONTRACTIONS[m.group().lower()], m.group()), text)
    if _CONTRACTED.search(text):
        return _CONTRACTED.sub(lambda m: _cased(_WRITTEN_OUT[m.group().lower()], m.group()), text)
    return None


def _cased(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word


def build(kind: str, texts: Sequence[str]) -> list[Event]:
    """The texts, then each one's ``flipped``, ``styled`` or ``denied`` version (where it has one)."""
    change = {"flipped": flipped, "styled": styled, "denied": denied}[kind]
    originals = [Event(f"en{i}", text, "en") for i, text in enumerate(texts)]
    made = [(story, change(story.text)) for story in originals]
    return originals + [Event(f"{kind}:{s.id}", text, "en", s.id) for s, text in made if text and text != s.text]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--per-language", type=int, default=1500, help="texts taken, at most")
    parser.add_argument("--stories", action="store_true", help="stories of 150 characters and more, not posts")
    args = parser.parse_args(argv)
    texts = stories(args.per_language, short=not args.stories)["en"]
    kind = "stories of 150 characters and more" if args.stories else "posts of 10-99 characters"
    print(f"{len(texts)} English {kind} of the development set")
    print(f"{'kind':<9}{'made':>6}   {'called a copy of their text':>28}   called a copy of another text")
    for name in ("flipped", "styled", "denied"):
        recall, joined, made = scan_scored(build(name, texts))
        print(f"{name:<9}{made:>6}   {recall.get('en', 0.0):>28.2f}   {joined}")
    print(
        "(flipped, denied: each one called a copy is a false duplicate; styled: the share called a copy is the recall)"
    )


if __name__ == "__main__":
    main()
