"""Precision, recall and F1 of ``neardup scan`` and two textbook baselines, measured in one run.

Why: a threshold or feature change is only an improvement if it beats the obvious alternatives on
the same realistic stream, and only real if it holds on text it was not tuned on. Each set — the
development set (``bench/devset.py``, tuned on) and the held-out set (``bench/heldout.py``, never
tuned on) — is fed to every system in arrival order, asking per event "is this a copy of
something earlier, and of what?":

* ``neardup``: the ``neardup scan`` CLI next to ``sys.executable``, run as a subprocess;
* ``simhash``: jieba words (``jieba.lcut``, HMM on) with TF weights, PyPI ``simhash`` Simhash and
  SimhashIndex(k=3); duplicate of the earliest indexed near match;
* ``minhash``: datasketch MinHash (128 permutations) of word 3-shingles (jieba words for Chinese,
  regex words for English) in a MinHashLSH(threshold=0.5); duplicate of the earliest candidate;
* ``minhash_verified``: the same, keeping only candidates whose exact shingle Jaccard is >= 0.5.

Streaming scoring: an event is a true duplicate if an earlier event of its cluster exists. A
"duplicate" verdict is a true positive iff ``duplicate_of`` is in the event's cluster.
Precision = TP / duplicate verdicts, recall = TP / true duplicates. Per class: recall of the
copies made by each transformation (a copy with two counts in both), recall by language and text
length, and for each hard-negative kind its precision, 1 - (duplicate verdicts on it) / (its
events): a hard negative is never a true duplicate, so every duplicate verdict on one is false.

Run from the repository root: ``python -m bench.quality [--sets dev,heldout] [--size N --seed N
--heldout-seed N | --devset F --truth F] [--systems neardup,simhash,...] [--json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import devcuts, devfeed, devledes, devlines, devset, devslips, devstraddle, devswaps, devtiny, heldout

SYSTEMS = ("neardup", "simhash", "minhash", "minhash_verified")
ORIGINAL_AFTER_COPY = "(original after its copy)"
SETS = ("dev", "heldout")
LENGTH_BANDS = ((30, "<30"), (100, "30-99"), (300, "100-299"), (None, ">=300"))  # characters of the duplicate


@dataclass(frozen=True)
class Verdict:
    """One system's decision on one event; ``duplicate_of`` is None for "unique"."""

    id: str
    duplicate_of: str | None


@dataclass
class Score:
    """Figures of one system; per-key dicts hold [hits, total]."""

    system: str
    tp: int = 0
    fp: int = 0
    duplicate_verdicts: int = 0
    true_duplicates: int = 0
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    seconds: float = 0.0
    docs_per_s: float = 0.0
    recall_by_transform: dict[str, list[int]] = field(default_factory=dict)
    recall_by_lang: dict[str, list[int]] = field(default_factory=dict)
    recall_by_length: dict[str, list[int]] = field(default_factory=dict)
    hard_negative_fp: dict[str, list[int]] = field(default_factory=dict)
    fp_by_role: dict[str, int] = field(default_factory=dict)
    error: str | None = None


def _band(lang: str, chars: int) -> str:
    return next(f"{lang} {name}" for limit, name in LENGTH_BANDS if limit is None or chars < limit)


def score(
    system: str,
    verdicts: Sequence[Verdict],
    truth: Sequence[dict[str, Any]],
    lengths: dict[str, int] | None = None,
) -> Score:
    """Streaming-dedup precision/recall/F1 of ``verdicts`` against truth rows in arrival order;
    ``lengths`` (characters by event id) adds recall by language and length band."""
    cluster = {row["id"]: row["cluster"] for row in truth}
    by_id = {v.id: v for v in verdicts}
    out = Score(system)
    seen: set[str] = set()
    for row in truth:
        is_dup = row["cluster"] in seen
        seen.add(row["cluster"])
        verdict = by_id.get(row["id"])
        said_dup = verdict is not None and verdict.duplicate_of is not None
        hit = said_dup and cluster.get(verdict.duplicate_of) == row["cluster"]  # type: ignore[union-attr]
        if said_dup:
            out.duplicate_verdicts += 1
            out.tp += hit
            if not hit:
                out.fp += 1
                out.fp_by_role[row["role"]] = out.fp_by_role.get(row["role"], 0) + 1
        if is_dup:
            out.true_duplicates += 1
            keys = row["transforms"] if row["role"] == "copy" else [ORIGINAL_AFTER_COPY]
            for key in keys:
                out.recall_by_transform.setdefault(key, [0, 0])
                out.recall_by_transform[key][0] += hit
                out.recall_by_transform[key][1] += 1
            out.recall_by_lang.setdefault(row["lang"], [0, 0])
            out.recall_by_lang[row["lang"]][0] += hit
            out.recall_by_lang[row["lang"]][1] += 1
            if lengths is not None:
                band = out.recall_by_length.setdefault(_band(row["lang"], lengths[row["id"]]), [0, 0])
                band[0] += hit
                band[1] += 1
        if row["hard_negative"]:
            counts = out.hard_negative_fp.setdefault(row["hard_negative"], [0, 0])
            counts[0] += said_dup and not hit
            counts[1] += 1
    out.precision = out.tp / out.duplicate_verdicts if out.duplicate_verdicts else 0.0
    out.recall = out.tp / out.true_duplicates if out.true_duplicates else 0.0
    pr = out.precision + out.recall
    out.f1 = 2 * out.precision * out.recall / pr if pr else 0.0
    return out


# ----------------------------------------------------------------------------------------------
# Systems
# ----------------------------------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u9fff]")
_EN_WORD = re.compile(r"\w+")


def is_chinese(text: str) -> bool:
    """Chinese if a fifth of the non-space characters are Han (headlines mix in Latin and digits)."""
    chars = len(text) - text.count(" ")
    return bool(chars) and len(_CJK.findall(text)) >= 0.2 * chars


def _jieba_words(text: str) -> list[str]:
    import jieba

    return [w.lower() for w in jieba.lcut(text) if _EN_WORD.search(w)]


def run_simhash(events: Sequence[dict[str, Any]]) -> list[Verdict]:
    """Textbook SimHash: TF-weighted jieba words, 64 bits, SimhashIndex k=3."""
    from simhash import Simhash, SimhashIndex

    logging.getLogger("simhash").setLevel(logging.ERROR)
    index = SimhashIndex([], k=3)
    position: dict[str, int] = {}
    out: list[Verdict] = []
    for i, ev in enumerate(events):
        fp = Simhash(list(Counter(_jieba_words(ev["text"])).items()))
        near = [n for n in index.get_near_dups(fp) if n in position]
        out.append(Verdict(ev["id"], min(near, key=position.__getitem__) if near else None))
        position[ev["id"]] = i
        index.add(ev["id"], fp)
    return out


def shingles(text: str, w: int = 3) -> list[str]:
    """Word w-shingles (jieba words for Chinese, regex words otherwise); unigrams for tiny texts."""
    words = _jieba_words(text) if is_chinese(text) else [t.lower() for t in _EN_WORD.findall(text)]
    if len(words) < w:
        return list(dict.fromkeys(words))
    return list(dict.fromkeys(" ".join(words[i : i + w]) for i in range(len(words) - w + 1)))


def run_minhash(events: Sequence[dict[str, Any]], verify: bool, threshold: float = 0.5) -> list[Verdict]:
    """datasketch MinHash LSH in arrival order; ``verify`` keeps candidates with exact Jaccard >= threshold."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    position: dict[str, int] = {}
    sets: dict[str, set[str]] = {}
    out: list[Verdict] = []
    for i, ev in enumerate(events):
        grams = shingles(ev["text"])
        if not grams:
            out.append(Verdict(ev["id"], None))
            continue
        mh = MinHash(num_perm=128)
        mh.update_batch([g.encode("utf-8") for g in grams])
        found = lsh.query(mh)
        if verify:
            mine = set(grams)
            found = [c for c in found if len(mine & sets[c]) >= threshold * len(mine | sets[c])]
            sets[ev["id"]] = mine
        out.append(Verdict(ev["id"], min(found, key=position.__getitem__) if found else None))
        position[ev["id"]] = i
        lsh.insert(ev["id"], mh)
    return out


def neardup_executable() -> Path:
    """The ``neardup`` console script of the running interpreter's environment."""
    return Path(sys.executable).parent / "neardup"


def run_neardup(events_path: Path, executable: Path | None = None) -> list[Verdict]:
    """``neardup scan IN -o OUT --state DIR``; one verdict line per input line."""
    exe = executable or neardup_executable()
    if not exe.exists():
        raise FileNotFoundError(f"{exe} not found (is the project installed?)")
    with tempfile.TemporaryDirectory(prefix="neardup-quality-") as tmp:
        out_path = Path(tmp) / "verdicts.jsonl"
        proc = subprocess.run(
            [str(exe), "scan", str(events_path), "-o", str(out_path), "--state", str(Path(tmp) / "state")],
            capture_output=True,
            text=True,
        )
        if proc.returncode not in (0, 2) or not out_path.exists():
            raise RuntimeError(f"neardup scan exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
        rows = devset.read_jsonl(out_path)
    return [Verdict(r["id"], r["duplicate_of"] if r.get("verdict") == "duplicate" else None) for r in rows]


def measure(
    systems: Sequence[str],
    events: Sequence[dict[str, Any]],
    truth: Sequence[dict[str, Any]],
    events_path: Path,
    neardup: Path | None = None,
) -> list[Score]:
    """Run each system on the same events and score it; a failing system reports its error."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()  # dictionary load is start-up cost, not per-document throughput
    runners: dict[str, Callable[[], list[Verdict]]] = {
        "neardup": lambda: run_neardup(events_path, neardup),
        "simhash": lambda: run_simhash(events),
        "minhash": lambda: run_minhash(events, verify=False),
        "minhash_verified": lambda: run_minhash(events, verify=True),
    }
    lengths = {ev["id"]: len(ev["text"]) for ev in events}
    scores: list[Score] = []
    for name in systems:
        start = time.perf_counter()
        try:
            verdicts = runners[name]()
        except (OSError, RuntimeError, KeyError, ValueError) as exc:
            scores.append(Score(name, error=f"{type(exc).__name__}: {exc}"))
            continue
        elapsed = time.perf_counter() - start
        s = score(name, verdicts, truth, lengths)
        s.seconds = elapsed
        s.docs_per_s = len(events) / elapsed if elapsed else 0.0
        scores.append(s)
    return scores


# ----------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------


def _pct(pair: list[int] | None) -> str:
    if not pair or not pair[1]:
        return "-"
    return f"{pair[0] / pair[1]:.2f}"


def _hard_precision(counts: list[int] | None) -> str:
    """A hard-negative kind's precision, 1 - FP/n, and its false positives."""
    if not counts or not counts[1]:
        return "-"
    return f"{1 - counts[0] / counts[1]:.2f} ({counts[0]})"


def digest(events: Sequence[dict[str, Any]]) -> str:
    """The first 16 hex digits of a SHA-256 of a set's events (ids, texts, times, in order).

    A set is built from text the machine's packages ship, and an upgrade can change it (the
    held-out set reads the installed zh_CN message catalogs): two runs measured one set only
    when their digests agree."""
    return hashlib.sha256(json.dumps(list(events), ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def render(scores: Sequence[Score], summary: dict[str, Any], name: str = "dev") -> str:
    """Plain-text tables: headline figures, recall per transformation/language/length, and the
    precision of each hard-negative kind."""
    ok = [s for s in scores if s.error is None]
    lines = [
        f"{name} set: {summary['events']} events, {summary['true_duplicates']} true duplicates, "
        f"languages {summary['lang']}, hard negatives {summary['hard_negative']}"
        + (f", digest {summary['digest']}" if "digest" in summary else ""),
        "",
        f"{'system':<18}{'P':>7}{'R':>7}{'F1':>7}{'TP':>7}{'FP':>6}{'dups':>7}{'docs/s':>9}",
    ]
    for s in scores:
        if s.error:
            lines.append(f"{s.system:<18}  unavailable: {s.error}")
        else:
            lines.append(
                f"{s.system:<18}{s.precision:>7.3f}{s.recall:>7.3f}{s.f1:>7.3f}{s.tp:>7}{s.fp:>6}"
                f"{s.duplicate_verdicts:>7}{s.docs_per_s:>9.0f}"
            )
    if not ok:
        return "\n".join(lines)
    names = "".join(f"{s.system[:16]:>18}" for s in ok)
    keys = sorted({k for s in ok for k in s.recall_by_transform})
    lines += ["", f"{'recall by transform (n)':<32}{names}"]
    for key in keys:
        n = ok[0].recall_by_transform.get(key, [0, 0])[1]
        lines.append(f"{f'{key} ({n})':<32}" + "".join(f"{_pct(s.recall_by_transform.get(key)):>18}" for s in ok))
    for lang in sorted(ok[0].recall_by_lang):
        n = ok[0].recall_by_lang[lang][1]
        lines.append(f"{f'lang={lang} ({n})':<32}" + "".join(f"{_pct(s.recall_by_lang.get(lang)):>18}" for s in ok))
    bands = [f"{lang} {band}" for lang in sorted(ok[0].recall_by_lang) for _limit, band in LENGTH_BANDS]
    for band in (b for b in bands if b in ok[0].recall_by_length):
        n = ok[0].recall_by_length[band][1]
        lines.append(f"{f'{band} chars ({n})':<32}" + "".join(f"{_pct(s.recall_by_length.get(band)):>18}" for s in ok))
    kinds = [
        k
        for k in (
            *devset.HARD_NEGATIVE_KINDS,
            *devfeed.HARD_NEGATIVE_KINDS,
            *devswaps.HARD_NEGATIVE_KINDS,
            *devledes.HARD_NEGATIVE_KINDS,
            *heldout.HARD_NEGATIVE_KINDS,
        )
        if k in summary["hard_negative"]
    ]
    lines += ["", f"{'hard negatives: P (FPs)':<32}{names}"]
    for kind in kinds:
        n = ok[0].hard_negative_fp.get(kind, [0, 0])[1]
        lines.append(
            f"{f'{kind} ({n})':<32}" + "".join(f"{_hard_precision(s.hard_negative_fp.get(kind)):>18}" for s in ok)
        )
    for role in ("original", "copy", "hard_negative"):
        lines.append(f"{f'FP on role={role}':<32}" + "".join(f"{s.fp_by_role.get(role, 0):>18}" for s in ok))
    return "\n".join(lines)


def build_set(name: str, size: int, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Events and truth of the named set: ``dev`` (tuned on) or ``heldout`` (never tuned on)."""
    if name == "dev":
        dev = devtiny.extend(*devslips.extend(*devfeed.extend(*devset.build(size, seed), seed), seed), seed)
        dev = devledes.extend(*devlines.extend(*devswaps.extend(*dev, seed), seed), seed)
        return devstraddle.extend(*devcuts.extend(*dev, seed), seed)
    return heldout.build(size, seed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated subset of {','.join(SETS)}")
    parser.add_argument("--devset", type=Path, help="dev events file to read instead of building one")
    parser.add_argument("--truth", type=Path, help="truth file matching --devset")
    parser.add_argument("--size", type=int, default=devset.DEFAULT_SIZE, help="events per set")
    parser.add_argument("--seed", type=int, default=devset.DEFAULT_SEED, help="dev set seed")
    parser.add_argument("--heldout-seed", type=int, default=heldout.DEFAULT_SEED)
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated subset of {','.join(SYSTEMS)}")
    parser.add_argument("--neardup", type=Path, help="neardup executable (default: next to sys.executable)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON instead of tables")
    args = parser.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown:
        parser.error(f"unknown systems {unknown}; choose from {SYSTEMS}")
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    if not sets or [s for s in sets if s not in SETS]:
        parser.error(f"--sets takes a comma-separated subset of {SETS}")
    if (args.devset is None) != (args.truth is None):
        parser.error("--devset and --truth go together")
    results = []
    for name in sets:
        with tempfile.TemporaryDirectory(prefix=f"neardup-{name}-") as tmp:
            if name == "dev" and args.devset:
                events_path = args.devset
                events, truth = devset.read_jsonl(args.devset), devset.read_jsonl(args.truth)
            else:
                events, truth = build_set(name, args.size, args.seed if name == "dev" else args.heldout_seed)
                events_path = Path(tmp) / f"{name}.jsonl"
                devset.write_jsonl(events_path, events)
            if [e["id"] for e in events] != [t["id"] for t in truth]:
                parser.error(f"{name}: events and truth do not list the same ids in the same order")
            scores = measure(systems, events, truth, events_path, args.neardup)
        results.append((name, devset.summary(truth) | {"digest": digest(events)}, scores))
        if not args.json:
            print(render(scores, results[-1][1], name) + "\n", flush=True)
    if args.json:
        out = [
            {"set": name, "summary": summary, "systems": [asdict(s) for s in scores]}
            for name, summary, scores in results
        ]
        print(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
