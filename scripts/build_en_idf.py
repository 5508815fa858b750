"""Build ``worker/data/idf_en.txt.gz``, the English document-frequency table behind ``worker.engine.idf``.

Source: the shortened English Wikipedia dump that gensim ships for its own tests,
``gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2``
(Wikipedia text, CC BY-SA). It is found through ``importlib.util.find_spec('gensim')``
without importing gensim. It was chosen because it is real encyclopedic English that is
already installed with a dev dependency, and because it is not part of our evaluation data
(the Lee corpus and newsgroups are, so they must not shape the weights).

Method: every article in the main namespace that is not a redirect is one document. Its
wiki markup is stripped roughly (comments, references, templates, tables, file/category
links, external-link URLs, HTML tags, bold/italic quotes, heading signs), then the text goes
through the same ``worker.engine.normalize.normalize`` and ``worker.engine.segment.tokenize`` as live
events, so table keys have exactly the shape of runtime tokens. Document frequency ``df``
counts the documents a token occurs in; tokens with ``df >= 2`` are kept (a word seen once
says more about the sample than about English).

Output: gzip'd UTF-8 text; ``#`` comment lines (source, document count ``N``), then one
``token<TAB>df`` line per token, sorted, with a fixed gzip timestamp so rebuilding gives the
same bytes. ``worker.engine.idf`` turns counts into weights with
``idf = ln((N + 1) / (df + 1)) + 1`` (smoothed, so even a word in every document weighs > 0).

Run: ``python scripts/build_en_idf.py [output]``.
"""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from html import unescape
from pathlib import Path

from worker.engine.normalize import normalize
from worker.engine.segment import tokenize

DUMP = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "worker" / "data" / "idf_en.txt.gz"
MIN_DF = 2

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_REF = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?</ref>", re.S | re.I)
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_TABLE = re.compile(r"\{\|[^{}]*?\|\}", re.S)
_PLAIN_LINK = re.compile(r"\[\[(?:[^\[\]|:]*\|)?([^\[\]:]*)\]\]")
_NAMESPACED_LINK = re.compile(r"\[\[[^\[\]]*:[^\[\]]*\]\]")
_EXTERNAL_LINK = re.compile(r"\[(?:https?:)?//\S+\s*([^\]]*)\]")
_TAG = re.compile(r"<[^>]+>")
_QUOTES = re.compile(r"'{2,}")
_HEADING = re.compile(r"^=+\s*|\s*=+$", re.M)


def dump_path() -> Path:
    """Where the installed gensim keeps the test dump (gensim itself is not imported)."""
    spec = importlib.util.find_spec("gensim")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("gensim is not installed: pip install 'neardup[bench]'")
    return Path(spec.submodule_search_locations[0]) / "test" / "test_data" / DUMP


def articles(path: Path) -> Iterator[str]:
    """Wikitext of main-namespace, non-redirect pages, in dump order."""
    with bz2.open(path) as stream:
        for _, elem in ET.iterparse(stream):
            if elem.tag.rsplit("}", 1)[-1] != "page":
                continue
            fields = {child.tag.rsplit("}", 1)[-1]: child for child in elem}
            text = elem.find("./{*}revision/{*}text")
            if (
                fields.get("ns") is not None
                and fields["ns"].text == "0"
                and "redirect" not in fields
                and text is not None
                and text.text
            ):
                yield text.text
            elem.clear()


def _until_stable(pattern: re.Pattern[str], repl: str, text: str) -> str:
    """Apply ``pattern`` until nothing matches: nested constructs go innermost first."""
    while True:
        text, n = pattern.subn(repl, text)
        if n == 0:
            return text


def strip_markup(wikitext: str) -> str:
    """Rough plain text of a wiki article; good enough to count which words occur."""
    text = _COMMENT.sub(" ", wikitext)
    text = _REF.sub(" ", text)
    text = _until_stable(_TEMPLATE, " ", text)
    text = _until_stable(_TABLE, " ", text)
    text = _until_stable(_PLAIN_LINK, r"\1", text)
    text = _until_stable(_NAMESPACED_LINK, " ", text)
    text = _EXTERNAL_LINK.sub(r"\1", text)
    text = _TAG.sub(" ", unescape(text))
    text = _QUOTES.sub("", text)
    return _HEADING.sub(" ", text)


def document_frequencies(path: Path) -> tuple[int, Counter[str]]:
    """(number of documents, df per token)."""
    df: Counter[str] = Counter()
    n = 0
    for wikitext in articles(path):
        n += 1
        df.update(set(tokenize(normalize(strip_markup(wikitext)))))
    return n, df


def write_table(output: Path, n_docs: int, df: Counter[str]) -> int:
    """Write tokens with df >= MIN_DF; return how many were written."""
    kept = sorted((tok, count) for tok, count in df.items() if count >= MIN_DF)
    lines = [
        f"# source: gensim test data {DUMP} (English Wikipedia, CC BY-SA)",
        "# built by scripts/build_en_idf.py; document frequency of normalised tokens",
        f"# documents: {n_docs}",
        f"# min_df: {MIN_DF}",
    ]
    lines += [f"{tok}\t{count}" for tok, count in kept]
    payload = ("\n".join(lines) + "\n").encode("utf-8")
    with open(output, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(payload)
    return len(kept)


def main(argv: list[str]) -> None:
    output = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUTPUT
    n_docs, df = document_frequencies(dump_path())
    kept = write_table(output, n_docs, df)
    print(f"{output}: {n_docs} documents, {len(df)} distinct tokens, {kept} with df >= {MIN_DF}")


if __name__ == "__main__":
    main(sys.argv)
