"""Which of neardup's quality choices pay: each variant of ``neardup scan`` on the same dev set.

Every row is one full ``neardup scan`` run with one setting changed through its ``NEARDUP_*``
variable, scored like ``bench/quality.py`` on two development sets (two seeds, all three parts)
built in the same run; the first row is the shipped default.

    python bench/ablation.py [--size 3000] [--seeds 20240101,7]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import devset, quality  # noqa: E402

VARIANTS: list[tuple[str, dict[str, str]]] = [
    ("default", {}),
    ("SimHash k=3 only: no anchors, no loose distance", {"NEARDUP_ANCHOR_WORDS": "0", "NEARDUP_MAX_DISTANCE": "3"}),
    ("no anchors (tables up to 12 bits)", {"NEARDUP_ANCHOR_WORDS": "0"}),
    ("anchors of 24 words", {"NEARDUP_ANCHOR_WORDS": "24"}),
    ("anchors of 8 words", {"NEARDUP_ANCHOR_WORDS": "8"}),
    ("unigrams only (no shingles)", {"NEARDUP_SHINGLE_N": "1"}),
    ("no containment check", {"NEARDUP_MIN_CONTAINMENT": "1.01"}),
    ("looser resemblance 0.4", {"NEARDUP_MIN_RESEMBLANCE": "0.4"}),
    ("no word bands", {"NEARDUP_WORD_BANDS": "0"}),
    ("long texts held to resemblance 0.6", {"NEARDUP_MIN_LONG_RESEMBLANCE": "0.6"}),
    ("links and tags kept", {"NEARDUP_STRIP_LINKS": "false", "NEARDUP_STRIP_TAGS": "false"}),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=3000)
    parser.add_argument("--seeds", default=f"{devset.DEFAULT_SEED},7")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory(prefix="neardup-ablation-") as tmp:
        sets = []
        for seed in seeds:
            events, truth = quality.build_set("dev", args.size, seed)
            path = Path(tmp) / f"dev-{seed}.jsonl"
            devset.write_jsonl(path, events)
            sets.append((path, truth))
        header = "".join(f" | seed {seed}: P / R / F1" for seed in seeds)
        print(f"| variant{header} |")
        print("| --- |" + " --- |" * len(seeds))
        for name, env in VARIANTS:
            saved = {key: os.environ.get(key) for key in env}
            os.environ.update(env)
            try:
                cells = []
                for path, truth in sets:
                    s = quality.score("neardup", quality.run_neardup(path), truth)
                    cells.append(f"{s.precision:.3f} / {s.recall:.3f} / {s.f1:.3f}")
            finally:
                for key, value in saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value
            print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
