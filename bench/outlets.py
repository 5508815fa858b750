"""One headline from two outlets: each text ends with the name of the site that carried it.

An aggregator's feed (Google News's among them) ends every title with its outlet: "Fed holds
rates steady - Reuters", then "Fed holds rates steady - Yahoo Finance"; Chinese portals write
"标题_新浪新闻" or "标题|澎湃新闻". This probe takes development-set texts (posts of 10-99
characters, or with ``--stories`` stories of 150 and more, as ``bench/wrappers.py`` takes
them), gives each one outlet's name and its copy another's, scans them, and prints recall by
language and how many events were called a copy of another text. A development probe, not a
held-out set.

    python -m bench.outlets
    python -m bench.outlets --stories --per-language 60
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from bench.wrappers import Event, scan_scored, stories

OUTLETS = {
    "en": ("Reuters", "Yahoo News", "The New York Times", "BBC News", "CNN", "Bloomberg", "The Guardian", "NPR",
           "Times of India", "Investing.com"),
    "zh": ("新浪新闻", "新华网", "澎湃新闻", "人民网", "腾讯新闻", "网易新闻", "央视网", "环球网", "界面新闻"),
}  # fmt: skip
SEPARATORS = {"en": (" - ", " | "), "zh": ("_", "|", " - ")}


def build(texts: dict[str, list[str]], seed: int = 3) -> list[Event]:
    """Each text under one outlet's name, then its copy under another's."""
    rng = random.Random(seed)
    originals, copies = [], []
    for lang, pool in texts.items():
        for i, text in enumerate(pool):
            first, second = rng.sample(OUTLETS[lang], 2)
            originals.append(Event(f"{lang}{i}", text + rng.choice(SEPARATORS[lang]) + first, lang))
            copies.append(Event(f"outlet:{lang}{i}", text + rng.choice(SEPARATORS[lang]) + second, lang, f"{lang}{i}"))
    return originals + copies


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--per-language", type=int, default=120, help="texts a language")
    parser.add_argument("--stories", action="store_true", help="stories of 150 characters and more, not posts")
    args = parser.parse_args(argv)
    texts = stories(args.per_language, short=not args.stories)
    kind = "stories of 150 characters and more" if args.stories else "posts of 10-99 characters"
    recall, joined, copies = scan_scored(build(texts))
    print(f"{len(texts['en'])} English and {len(texts['zh'])} Chinese {kind} of the development set")
    print(f"{'copies':>7}{'en':>7}{'zh':>7}   called a copy of another text")
    print(f"{copies:>7}{recall.get('en', 0.0):>7.2f}{recall.get('zh', 0.0):>7.2f}   {joined}")


if __name__ == "__main__":
    main()
