"""Teasers: development-set stories cut at any point, each cut after its story.

A feed shows a story's first words alone: a push notice, a share preview, a timeline's
"...more". The quality sets cut a long story to a teaser of a sentence or more; this probe
cuts each story to a fraction of its characters (``--fractions``; in Latin script at a word's
end), so that a cut shorter than the story's twelve-word opening anchor is measured too. It
takes the development set's originals of 150 characters and more, as ``bench/wrappers.py``
does, scans each fraction's cuts alone with the stories, and prints recall by language and how
many events were called a copy of another story. A development probe, not a held-out set.

    python -m bench.teasers
    python -m bench.teasers --per-language 80 --fractions 0.05,0.1
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from bench.wrappers import Event, scan_scored, stories, table_header, table_row

FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)


def cut(text: str, fraction: float, latin: bool) -> str:
    """The first ``fraction`` of ``text``'s characters; in Latin script up to the last whole word."""
    kept = text[: max(1, int(len(text) * fraction))]
    if latin and " " in kept and not text[len(kept) : len(kept) + 1].isspace():
        kept = kept.rsplit(" ", 1)[0]
    return kept.rstrip()


def build(fraction: float, texts: dict[str, list[str]]) -> list[Event]:
    """The stories, then each one's cut to ``fraction`` (none where nothing is left)."""
    originals = [Event(f"{lang}{i}", text, lang) for lang, pool in texts.items() for i, text in enumerate(pool)]
    copies = []
    for story in originals:
        teaser = cut(story.text, fraction, latin=story.lang == "en")
        if teaser and teaser != story.text:
            copies.append(Event(f"cut{fraction}:{story.id}", teaser, story.lang, story.id))
    return originals + copies


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--per-language", type=int, default=80, help="stories a language")
    parser.add_argument("--fractions", default=",".join(map(str, FRACTIONS)), help="comma-separated, each in (0, 1)")
    args = parser.parse_args(argv)
    try:
        fractions = [float(f) for f in args.fractions.split(",") if f]
    except ValueError:
        parser.error(f"--fractions takes numbers, not {args.fractions!r}")
    if not fractions or not all(0 < f < 1 for f in fractions):
        parser.error(f"--fractions takes numbers between 0 and 1, not {args.fractions!r}")
    texts = stories(args.per_language)
    print(f"{len(texts['en'])} English and {len(texts['zh'])} Chinese stories of 150 characters and more")
    print(table_header("cut to", 10, "story"))
    for fraction in fractions:
        print(table_row(f"{fraction:.0%}", 10, scan_scored(build(fraction, texts))))


if __name__ == "__main__":
    main()
