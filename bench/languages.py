"""Languages neither quality set holds: Japanese and Korean messages, and copies with a feed's edits.

Chinese and English are first-class; a real feed also carries other languages, and a filter
must neither miss their copies nor join their different posts wholesale. The text is the
translated messages of the installed Debian packages (``/usr/share/locale/<lang>``, the
catalogs the held-out set reads for Chinese), one sentence or two each. Every second message
gets a copy with one edit, in turn:

* ``typo``: one character replaced by a character drawn from another message of the language
  (a space among them about as often as the text has spaces: a keyboard's or OCR's slip that
  splits a word or runs two together);
* ``cut``: 70-95 % of the message kept;
* ``source``: an attribution appended (" (共同通信)", " — 연합뉴스", " via @news");
* ``header``: a tag put in front ("【速報】", "[속보] ").

The bench prints, per language, the recall of the copies by edit, and how many originals and
copies were called copies of *another* message. Catalogs hold near-identical messages of
their own (a layout's name with qwerty for qwertz, "--cflags" beside "--ldflags"), so those
are counted and shown (``--show``), not scored. This is where two rules of
``worker/engine/words.py`` were found (hiragana read as syllables; a slip that splits a word):
a development probe, not a held-out set.

    python -m bench.languages
    python -m bench.languages --languages ja,ko,ru --per-language 1500 --show 10
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.heldout import LABEL_CATALOGS, MARKUP, read_mo
from bench.quality import run_neardup

EDITS = ("typo", "cut", "source", "header")
SOURCES = (" (共同通信)", " — 연합뉴스", " via @news")
HEADERS = ("【速報】", "[속보] ", "お知らせ: ", "공지: ")
_WHITESPACE = re.compile(r"\s*\n\s*")


@dataclass(frozen=True)
class Event:
    id: str
    text: str
    original: str | None = None  # a copy's original message id
    edit: str | None = None


def messages(language: str, limit: int, seed: int = 7) -> list[str]:
    """Up to ``limit`` distinct messages of 25-300 characters, without markup or placeholders."""
    found: set[str] = set()
    for path in sorted(Path(f"/usr/share/locale/{language}/LC_MESSAGES").glob("*.mo")):
        if path.name.startswith(LABEL_CATALOGS):
            continue
        for msgid, msgstr in read_mo(path):
            text = _WHITESPACE.sub(" ", msgstr.strip())
            if msgid and "\x00" not in msgstr and not MARKUP.search(text) and 25 <= len(text) <= 300:
                found.add(text)
    chosen = sorted(found)
    random.Random(seed).shuffle(chosen)
    return chosen[:limit]


def build(texts: Sequence[str], seed: int = 7) -> list[Event]:
    """Each message, and after every second one its copy with the next edit in turn."""
    rng = random.Random(seed)
    events: list[Event] = []
    for i, text in enumerate(texts):
        events.append(Event(f"o{i}", text))
        if i % 2 == 0:
            edit = EDITS[(i // 2) % len(EDITS)]
            events.append(Event(f"c{i}", edited(text, edit, texts, rng), f"o{i}", edit))
    return events


def edited(text: str, edit: str, texts: Sequence[str], rng: random.Random) -> str:
    if edit == "typo":
        at = rng.randrange(len(text))
        return text[:at] + rng.choice(rng.choice(texts)) + text[at + 1 :]
    if edit == "cut":
        return text[: max(8, int(len(text) * rng.uniform(0.7, 0.95)))]
    if edit == "source":
        return text + rng.choice(SOURCES)
    return rng.choice(HEADERS) + text


def score(events: Sequence[Event], duplicate_of: dict[str, str | None]) -> tuple[dict[str, float], list[Event]]:
    """Recall of the copies by edit, and the events called copies of another message."""
    found, total = Counter[str](), Counter[str]()
    joined: list[Event] = []
    for event in events:
        said = duplicate_of.get(event.id)
        if event.edit is not None:
            total[event.edit] += 1
            found[event.edit] += said == event.original
        if said is not None and said != event.original:
            joined.append(event)
    return {edit: found[edit] / total[edit] for edit in EDITS if total[edit]}, joined


def measure(language: str, per_language: int) -> tuple[int, dict[str, float], list[tuple[str, str]]]:
    """Messages read, recall by edit, and (event, the message it was called a copy of) pairs."""
    events = build(messages(language, per_language))
    with tempfile.TemporaryDirectory(prefix="neardup-languages-") as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_text("".join(json.dumps({"id": e.id, "text": e.text}, ensure_ascii=False) + "\n" for e in events))
        verdicts = {v.id: v.duplicate_of for v in run_neardup(path)}
    recall, joined = score(events, verdicts)
    text = {e.id: e.text for e in events}
    return sum(e.edit is None for e in events), recall, [(e.text, text[str(verdicts[e.id])]) for e in joined]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--languages", default="ja,ko", help="comma-separated locale names")
    parser.add_argument("--per-language", type=int, default=1500, help="messages a language")
    parser.add_argument("--show", type=int, default=0, help="pairs called copies of another message to print")
    args = parser.parse_args(argv)
    print(f"{'language':<10}{'messages':>9}" + "".join(f"{edit:>8}" for edit in EDITS) + "   called a copy of another")
    shown: list[tuple[str, str]] = []
    for language in args.languages.split(","):
        read, recall, joined = measure(language, args.per_language)
        if not read:
            print(f"{language:<10}{0:>9}   no catalogs in /usr/share/locale/{language}")
            continue
        cells = "".join(f"{recall[edit]:>8.2f}" if edit in recall else f"{'-':>8}" for edit in EDITS)
        print(f"{language:<10}{read:>9}{cells}   {len(joined)}")
        shown += joined[: args.show]
    for event_text, other in shown:
        print(f"  {event_text[:70]}  <-  {other[:70]}")


if __name__ == "__main__":
    main()
