"""How often the words check (``worker/engine/words.py``) refuses a plain cut of a short post.

A cut is never another message, so every refusal here is a copy the check would lose. The
posts are the dev corpora's very short ones (``bench/devtiny.py:load_posts``), each cut after
every character from the third on, with and without an ellipsis, and compared as
:func:`worker.engine.match.accepts` compares them (normalised, folded by shape and sound)::

    python bench/wordcuts.py --posts 3000
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import devset, devtiny
from worker.engine import words
from worker.engine.normalize import normalize
from worker.engine.shapes import fold_shapes_and_sounds


def _said(text: str) -> str:
    return words.canonical(fold_shapes_and_sounds(normalize(text)))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--posts", type=int, default=3000, help="posts to cut")
    parser.add_argument("--show", type=int, default=5, help="refused cuts to print")
    args = parser.parse_args(argv)
    posts = devtiny.load_posts(devset.build(devset.DEFAULT_SIZE, devset.DEFAULT_SEED)[0])
    random.Random(1).shuffle(posts)
    cuts, refused, shown = Counter[str](), Counter[str](), 0
    for post in posts[: args.posts]:
        whole = _said(post.text)
        for end in range(3, len(post.text)):
            for more in ("", "…"):
                cuts[post.lang] += 1
                if words.differ(whole, _said(post.text[:end] + more)):
                    refused[post.lang] += 1
                    if shown < args.show:
                        shown += 1
                        print(f"refused: {post.text!r} cut to {post.text[:end] + more!r}")
    for lang in sorted(cuts):
        print(f"{lang}: {cuts[lang]:,} cuts, {refused[lang]:,} refused")


if __name__ == "__main__":
    main()
