"""The textbook SimHash near-duplicate filter: the baseline ``neardup scan`` is timed against.

What a newcomer writes from the papers: jieba words (HMM on), term frequencies, 64-bit
MurmurHash3 (mmh3) per word, SimHash by weighted bit counts, and Manku et al.'s four 16-bit
tables in memory (k = 3 by the pigeonhole principle). An event is a duplicate of the earliest
stored event within 3 bits and within the retention window, else unique; every event is
stored. One JSON line in, one JSON line out.

    python bench/textbook.py feed.jsonl verdicts.jsonl [--retention-days 7]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict

import jieba
import mmh3

_WORD = re.compile(r"\w")
_MASK = (1 << 64) - 1


def simhash(text: str) -> int:
    counts = Counter(w.lower() for w in jieba.lcut(text) if _WORD.search(w))
    weights = [0] * 64
    for word, count in counts.items():
        h = mmh3.hash64(word, signed=False)[0]
        for bit in range(64):
            weights[bit] += count if h >> bit & 1 else -count
    return sum(1 << bit for bit in range(64) if weights[bit] > 0) & _MASK


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source")
    parser.add_argument("output")
    parser.add_argument("--retention-days", type=float, default=7.0)
    args = parser.parse_args()
    retention_ms = int(args.retention_days * 86_400_000)
    jieba.setLogLevel(60)
    # table -> 16-bit block -> (fingerprint, arrival order, id, ts) of every stored event
    tables: list[defaultdict[int, list[tuple[int, int, str, int]]]] = [defaultdict(list) for _ in range(4)]
    with open(args.source, encoding="utf-8") as source, open(args.output, "w", encoding="utf-8") as out:
        for order, line in enumerate(source):
            event = json.loads(line)
            fp, ts = simhash(event["text"]), int(event["ts"])
            blocks = [(fp >> (16 * t)) & 0xFFFF for t in range(4)]
            near = [
                row
                for t, block in enumerate(blocks)
                for row in tables[t][block]
                if (row[0] ^ fp).bit_count() <= 3 and ts - row[3] <= retention_ms
            ]
            original = min(near, key=lambda row: row[1]) if near else None
            for t, block in enumerate(blocks):
                tables[t][block].append((fp, order, event["id"], ts))
            verdict = {
                "id": event["id"],
                "verdict": "unique" if original is None else "duplicate",
                "duplicate_of": None if original is None else original[2],
            }
            out.write(json.dumps(verdict, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
