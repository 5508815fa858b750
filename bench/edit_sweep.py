"""The dev feed's edits over short English lines that neither quality set holds.

The quality sets score what their generators make of their own text. This sweep applies the
dev feed's edits (``bench/feededits.py``) to other real lines: the short descriptions of the
installed Debian packages and the English messages (msgids) of the installed message
catalogs, UI strings and errors as terse as a feed's shortest posts. Each line arrives once,
then one copy per edit, and ``neardup scan`` decides them all; a copy is found when it is
called a duplicate of its line or of another copy of it. Half the lines are kept apart as
the donors of appended sentences, so no donor is also a line of the sweep.

Two figures: recall per edit and length band (of the line), and how many lines were called
copies of another line. The second is not all false: catalogs hold near-twins ("Use
control-C to quit." and "… control-D …"), and a line that opens like an earlier cut of
another line is called its copy, as the design means it to be. Read it against another tree
on the same lines, not as a precision. The lines are the installed packages': an upgrade
changes them, so compare runs of one day's machine.

    .venv/bin/python -m bench.edit_sweep [--lines 1500] [--seed 11] [--show EDIT]

It runs the project's installed ``neardup scan``, which reads this checkout's code: to compare
with another tree, put its files in place (or run the sweep from that tree's own checkout).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from bench import devset, feededits, heldout, quality

STATUS = Path("/var/lib/dpkg/status")
CATALOGS = Path("/usr/share/locale/zh_CN/LC_MESSAGES")
EDITS = feededits.CLASSES


def _descriptions() -> Iterator[str]:
    if STATUS.is_file():
        for line in STATUS.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("Description: "):
                yield line[len("Description: ") :].strip()


def _messages() -> Iterator[str]:
    """The English source strings of the catalogs (not the held-out set's Chinese ones)."""
    for path in sorted(CATALOGS.glob("*.mo")) if CATALOGS.is_dir() else []:
        if path.name.startswith(heldout.LABEL_CATALOGS):
            continue
        for msgid, _ in heldout.read_mo(path):
            text = re.sub(r"\s*\n\s*", " ", msgid.strip())
            if text and "\x00" not in text and not heldout.MARKUP.search(text) and len(text.split()) >= 2:
                yield text


def lines(seed: int) -> tuple[list[str], list[str]]:
    """The lines of the sweep and the donors' lines: distinct, with three letters in a row."""
    seen: set[str] = set()
    out: list[str] = []
    for text in (*_descriptions(), *_messages()):
        if text not in seen and re.search(r"[A-Za-z]{3}", text):
            seen.add(text)
            out.append(text)
    random.Random(seed).shuffle(out)
    return out[: len(out) // 2], out[len(out) // 2 :]


def _band(chars: int) -> str:
    return "<30" if chars < 30 else "30-99" if chars < 100 else ">=100"


class Missed(NamedTuple):
    """A copy the sweep made and neardup did not call a copy of its line."""

    edit: str
    line: str
    copy: str
    called_of: str | None  # the event it was called a copy of, if any


class _Copy(NamedTuple):
    edit: str
    band: str
    line: int
    text: str
    family: frozenset[str]  # the line's id and its copies' ids


def sweep(
    n_lines: int, seed: int, missed: list[Missed] | None = None
) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]], int, int]:
    """Copies per (edit, band), those found, lines, and lines called copies of another; the
    copies not found are appended to ``missed`` when given."""
    originals, donor_lines = lines(seed)
    originals = originals[:n_lines]
    donors = [p.strip() for t in donor_lines for p in devset.split_sentences(t, "en") if len(p.strip()) >= 6]
    rng = random.Random(seed)
    events: list[dict[str, object]] = []
    copies: dict[str, _Copy] = {}
    for k, line in enumerate(originals):
        events.append({"id": f"o{k}", "text": line, "ts": 1_700_000_000_000 + 1000 * k})
        made = {f"c{k}.{j}": (edit, feededits.apply(edit, line, "en", rng, donors)) for j, edit in enumerate(EDITS)}
        family = frozenset({f"o{k}"} | {cid for cid, (_, text) in made.items() if text is not None})
        for j, (cid, (edit, text)) in enumerate(made.items()):
            if text is not None:
                events.append({"id": cid, "text": text, "ts": 1_700_000_000_000 + 1000 * k + 1 + j})
                copies[cid] = _Copy(edit, _band(len(line)), k, text, family)
    with tempfile.TemporaryDirectory(prefix="neardup-sweep-") as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
        verdicts = {v.id: v.duplicate_of for v in quality.run_neardup(path)}
    total: Counter[tuple[str, str]] = Counter()
    found: Counter[tuple[str, str]] = Counter()
    for cid, copy in copies.items():
        total[copy.edit, copy.band] += 1
        found[copy.edit, copy.band] += verdicts.get(cid) in copy.family
        if missed is not None and verdicts.get(cid) not in copy.family:
            missed.append(Missed(copy.edit, originals[copy.line], copy.text, verdicts.get(cid)))
    called = sum(verdicts.get(f"o{k}") is not None for k in range(len(originals)))
    return total, found, len(originals), called


def render(total: Counter[tuple[str, str]], found: Counter[tuple[str, str]], n_lines: int, called: int) -> str:
    bands = ("<30", "30-99", ">=100")
    rows = [f"{'edit (copies found / made)':<28}" + "".join(f"{b:>18}" for b in bands)]
    for edit in EDITS:
        cells = [
            f"{found[edit, b] / total[edit, b]:.3f} ({found[edit, b]}/{total[edit, b]})" if total[edit, b] else "-"
            for b in bands
        ]
        rows.append(f"{edit:<28}" + "".join(f"{c:>18}" for c in cells))
    all_found, all_total = sum(found.values()), sum(total.values())
    rows.append(f"all copies: {all_found / all_total:.3f} ({all_found}/{all_total})")
    rows.append(f"lines called copies of another line: {called} of {n_lines}")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1500, help="lines edited (at most half of those found)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--show", choices=EDITS, help="also print the copies of this edit that were not found")
    args = parser.parse_args(argv)
    missed: list[Missed] = []
    total, found, n_lines, called = sweep(args.lines, args.seed, missed)
    if not total:
        print("no lines found: needs /var/lib/dpkg/status or the zh_CN message catalogs")
        return 1
    print(render(total, found, n_lines, called))
    for edit, line, copy, called_of in missed:
        if edit == args.show:
            print(f"\n{line!r}\n  {copy!r}" + (f" (called a copy of {called_of})" if called_of else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
