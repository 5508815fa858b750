"""Fingerprint throughput of this tree against an earlier revision, interleaved in one run.

Issue 28 asks that a change to what a fingerprint holds keep the throughput within 10 % of
the tree before. Two ``bench/engine.py --only fingerprint`` runs a minute apart on this box
differ by more than that, so this bench keeps two processes alive, one per tree (the earlier
one from a ``git worktree`` with its own native extension: ``bench/baseline.py``), hands
both the same documents, and has them fingerprint all of them in turn, alternating which
goes first, round by round. Each round gives one ratio of two runs seconds apart; the medians
of the rounds' docs/s and of their ratios are reported, with the ratios' range. Each process
runs alone while it is timed (one core).

    python bench/fingerprint_ab.py --baseline HEAD~1
    python bench/fingerprint_ab.py --baseline <rev> --langs zh --doc-bytes 1024,120 --rounds 15
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.baseline import ROOT, worktree
from bench.engine import FP_DOC_BYTES, fingerprint_documents

# Run in each tree (its own ``worker`` first on the path): fingerprints the documents of the
# file named by argv[1] argv[2] times over per line read, and answers with the seconds it took.
_WORKER = """
import json, sys, time
from worker.engine.fingerprint import fingerprint, warm_up
from worker.settings import Settings
settings = Settings()
warm_up(settings)
docs = json.loads(open(sys.argv[1], encoding="utf-8").read())
for doc in docs:
    fingerprint(doc, settings)
print("ready", flush=True)
for _ in sys.stdin:
    began = time.perf_counter()
    for _ in range(int(sys.argv[2])):
        for doc in docs:
            fingerprint(doc, settings)
    print(time.perf_counter() - began, flush=True)
"""


class Tree:
    """One tree's fingerprinting process."""

    def __init__(self, tree: Path, docs: Path, passes: int) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(docs), str(passes)],
            cwd=tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if self._answer() != "ready":
            raise RuntimeError(f"the fingerprinting process of {tree} did not start")

    def _answer(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def run(self) -> float:
        """Seconds to fingerprint every document its passes over."""
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        return float(self._answer())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


class Timed(Protocol):
    def run(self) -> float: ...


def compare(this: Timed, before: Timed, fingerprints: int, rounds: int) -> tuple[float, float, list[float]]:
    """Median docs/s of this tree and the one before, and each round's ratio (this / before)."""
    mine, theirs, ratios = [], [], []
    for round_ in range(rounds):
        order = (this, before) if round_ % 2 == 0 else (before, this)
        seconds = {id(tree): tree.run() for tree in order}
        mine.append(fingerprints / seconds[id(this)])
        theirs.append(fingerprints / seconds[id(before)])
        ratios.append(mine[-1] / theirs[-1])
    return statistics.median(mine), statistics.median(theirs), ratios


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--baseline", required=True, help="git revision of the tree before")
    parser.add_argument("--langs", default="zh,en", help="comma-separated: zh, en")
    parser.add_argument("--doc-bytes", default=f"{FP_DOC_BYTES},120", help="comma-separated document sizes")
    parser.add_argument("--docs", type=int, default=150, help="documents a language and size")
    parser.add_argument("--passes", type=int, default=10, help="times a turn fingerprints the documents")
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args(argv)
    before_tree = worktree(args.baseline)
    print(f"this tree against {args.baseline}: {args.rounds} rounds, each tree's turn first in alternate rounds")
    print(f"{'lang':<6}{'bytes':>6}{'docs':>6}{'docs/s':>10}{'before':>10}{'ratio':>8}   ratio range")
    with tempfile.TemporaryDirectory(prefix="neardup-fingerprint-ab-") as tmp:
        for lang in args.langs.split(","):
            for size in map(int, args.doc_bytes.split(",")):
                docs = fingerprint_documents(lang, args.docs, size)
                path = Path(tmp, f"{lang}-{size}.json")
                path.write_text(json.dumps(docs, ensure_ascii=False), encoding="utf-8")
                this, before = Tree(ROOT, path, args.passes), Tree(before_tree, path, args.passes)
                try:
                    ours, theirs, ratios = compare(this, before, len(docs) * args.passes, args.rounds)
                finally:
                    this.close()
                    before.close()
                spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
                median = statistics.median(ratios)
                print(f"{lang:<6}{size:>6}{len(docs):>6}{ours:>10,.0f}{theirs:>10,.0f}{median:>8.2f}   {spread}")


if __name__ == "__main__":
    main()
