"""A feed whose texts quote each other: three sentences of the shipped sample each, drawn anew.

Most events are new texts, but every sentence of the ~830 returns again and again, and a
text's anchors and word bands are keys of its sentences: a probe reads and verifies dozens of
candidates that share a sentence or two with it (up to the index's cap a key,
``worker.state.layout.MAX_KEY_RECORDS``), where the development set, most stories told once,
has it verify a candidate in every few events. That is a stream of stories quoting one
another's paragraphs. About ``variant_share`` of the events are copies of an earlier text
with one word added.

The stream tests' feed (``tests.stream_helpers.real_feed``) and ``bench/stages.py --feed
quotes``; docs/benchmarks.md has what a probe reads on it.
"""

from __future__ import annotations

import json
import random
import re
from functools import cache
from pathlib import Path


@cache
def pieces() -> tuple[str, ...]:
    """Sentence-sized pieces of the sample texts (English and Chinese): the feed's raw material."""
    from worker.cli.inputs import default_sample
    from worker.engine.normalize import normalize
    from worker.engine.segment import tokenize

    found: dict[str, None] = {}
    for line in Path(default_sample()).read_bytes().splitlines():
        if not line.strip():
            continue
        text = json.loads(line)["text"]
        for part in re.split(r"(?<=[.!?。！？\n])\s*", text):
            piece = part.strip()[:160]  # no piece long enough to dominate a text
            kept = len(tokenize(normalize(piece)))
            # Boilerplate (a site footer) is stripped by normalisation, with all that follows it.
            if kept >= 6 and kept >= 0.9 * len(tokenize(piece.casefold())):
                found[piece] = None
    return tuple(found)


def feed(count: int, tag: str, seed: int = 7, variant_share: float = 0.1) -> list[bytes]:
    """``count`` events as JSON lines under the ids ``{tag}-<n>``, the same for the same seed."""
    rng = random.Random(seed)
    drawn = list(pieces())
    texts: list[str] = []
    lines: list[bytes] = []
    for n in range(count):
        if texts and rng.random() < variant_share:
            text = rng.choice(texts) + rng.choice([" indeed", " 的", " (updated)", " again"])
        else:
            text = " ".join(rng.sample(drawn, 3))
            texts.append(text)
        lines.append(json.dumps({"id": f"{tag}-{n:06d}", "text": text}, ensure_ascii=False).encode())
    return lines
