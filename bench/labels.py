"""One headline under two feeds' labels: an outlet's name, a masthead, a kind, a credit, a medium.

A story reaches a feed under labels of the feed's. An aggregator ends every title with its
outlet ("Fed holds rates steady - Reuters", then "… - Yahoo Finance"; Chinese portals "标题_新浪
新闻", "标题|澎湃新闻"), a Weibo account puts its masthead before it ("【新华社】标题"), a news
account a kind ("BREAKING: …", "JUST IN: …", "【突发】…"), and a site a credit or a medium after
it ("… Source: AP", "…（来源：新华网）", "… (Video)", "… [PHOTOS]", "…（组图）"). This probe takes
development-set texts (posts of 10-99 characters, or with ``--stories`` stories of 150 and more,
as ``bench/wrappers.py`` takes them), gives each one label of a kind and its copy another
label of the same kind, scans each kind's texts alone, and prints recall by language and how
many events were called a copy of another text. A development probe, not a held-out set.

    python -m bench.labels
    python -m bench.labels --stories --per-language 60 --only outlet
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from bench.wrappers import Event, scan_scored, stories, table_header, table_row

# Each kind's labels by language, as (before the text, after it).
LABELS: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    "outlet": {
        "en": tuple(("", sep + name) for sep in (" - ", " | ") for name in (
            "Reuters", "Yahoo News", "The New York Times", "BBC News", "CNN", "Bloomberg", "The Guardian", "NPR",
            "Times of India", "Investing.com")),
        "zh": tuple(("", sep + name) for sep in ("_", "|", " - ") for name in (
            "新浪新闻", "新华网", "澎湃新闻", "人民网", "腾讯新闻", "网易新闻", "央视网", "环球网", "界面新闻")),
    },
    "masthead": {
        "en": (("Reuters: ", ""), ("AP: ", ""), ("BBC News: ", ""), ("CNN: ", ""), ("Bloomberg: ", "")),
        "zh": (("【新华社】", ""), ("【人民日报】", ""), ("【央视新闻】", ""), ("【澎湃新闻】", ""), ("【中国新闻网】", "")),
    },
    "kind": {
        "en": (("BREAKING: ", ""), ("JUST IN: ", ""), ("Breaking News: ", ""), ("UPDATE: ", ""), ("LIVE: ", ""),
               ("Watch: ", ""), ("EXCLUSIVE: ", ""), ("Opinion | ", ""), ("Analysis: ", "")),
        "zh": (("【突发】", ""), ("突发！", ""), ("重磅！", ""), ("【独家】", ""), ("最新：", ""), ("视频｜", "")),
    },
    "credit": {
        "en": tuple(("", " Source: " + name) for name in ("Reuters", "AP", "Bloomberg", "The Guardian", "BBC News")),
        "zh": tuple(("", f"（来源：{name}）") for name in ("新华网", "人民网", "央视新闻", "澎湃新闻", "中国新闻网")),
    },
    "medium": {
        "en": (("", " (Video)"), ("", " [PHOTOS]"), ("", " (updated)"), ("", " [Watch]"), ("", " (Audio)")),
        "zh": (("", "（视频）"), ("", "（组图）"), ("", "【图】"), ("", "（附视频）"), ("", "（直播）")),
    },
    # Labels the normaliser leaves, for what dropping them would cost ("… (Linux)", "… Killed By
    # Police In Chicago", "via Paris"): English only, measured so the gap stays in sight.
    "bracket": {"en": (("", " (Reuters)"), ("", " (AP)"), ("", " (AFP)"), ("", " (Bloomberg)"))},
    "byline": {"en": (("", " By John Smith"), ("", " By Jane Doe"), ("", " By Maria Garcia"))},
    "via": {"en": (("", " via Reuters"), ("", " via Bloomberg"), ("", " via The Guardian"))},
}  # fmt: skip


def build(kind: str, texts: dict[str, list[str]], seed: int = 3) -> list[Event]:
    """Each text under one label of ``kind``, then its copy under another."""
    rng = random.Random(seed)
    originals, copies = [], []
    for lang, pool in texts.items():
        if lang not in LABELS[kind]:
            continue
        for i, text in enumerate(pool):
            (before, after), (before2, after2) = rng.sample(LABELS[kind][lang], 2)
            originals.append(Event(f"{lang}{i}", before + text + after, lang))
            copies.append(Event(f"{kind}:{lang}{i}", before2 + text + after2, lang, f"{lang}{i}"))
    return originals + copies


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--per-language", type=int, default=120, help="texts a language")
    parser.add_argument("--stories", action="store_true", help="stories of 150 characters and more, not posts")
    parser.add_argument("--only", default="", help=f"comma-separated kinds of label (default: {', '.join(LABELS)})")
    args = parser.parse_args(argv)
    chosen = [k for k in args.only.split(",") if k] or list(LABELS)
    unknown = [k for k in chosen if k not in LABELS]
    if unknown:
        parser.error(f"unknown labels {unknown}; choose from {', '.join(LABELS)}")
    texts = stories(args.per_language, short=not args.stories)
    kind = "stories of 150 characters and more" if args.stories else "posts of 10-99 characters"
    print(f"{len(texts['en'])} English and {len(texts['zh'])} Chinese {kind} of the development set")
    print(table_header("label", 10, "text"))
    for label in chosen:
        print(table_row(label, 10, scan_scored(build(label, texts))))


if __name__ == "__main__":
    main()
