"""Text -> everything the index needs to know about it: SimHash, sketch, exact hash.

This is the whole pure pipeline in one place, in the order it runs:
normalise -> segment -> weighted features -> 64-bit SimHash and MinHash sketch.

Very short texts (fewer than ``Settings.min_features`` distinct words) carry too few
features for SimHash distances to mean anything — two unrelated three-word posts can land
within k bits. Such a text matches only another text whose normalised words are exactly
the same: it gets an ``exact`` hash and is looked up in the exact keyspace instead of the
block tables. Normalisation still applies, so width, case, script, links and hashtags do not
make short reposts unique.

Longer texts also get two *anchors*: exact hashes of their first and last
``Settings.anchor_words`` words. SimHash of the whole text cannot find a teaser (the first
quarter of a story is ~20 bits away) nor, reliably, a story with a sentence dropped or
added (~5-10 bits); an unchanged opening or ending can. Anchors only nominate candidates —
every candidate is still verified on its MinHash sketch, which rejects "same opening,
different rest".

Everything after normalisation also exists in Rust (``worker/native``, built into
``worker._native`` when cargo is available): the same tokens, weights, SimHash, sketch and
hashes, bit for bit, about ten times faster. :func:`fingerprint` uses it whenever it is
installed; it hands back any text it cannot fingerprint with certainty (a character outside
the BMP, no words at all), and such texts, like every text on a machine without the module,
take the Python pipeline, :func:`fingerprint_reference`, which the tests hold it to.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple, Protocol

import mmh3

from worker.engine.features import LexiconTable, hashed_features
from worker.engine.leads import long_leads, opening_key
from worker.engine.lexicon_cache import cached_lexicon_table
from worker.engine.normalize import normalize, normalize_reference
from worker.engine.numbers import number_tags
from worker.engine.segment import kept_char_classes, tokenize
from worker.engine.shorttext import band_keys, header_leads, short_part
from worker.engine.simhash import simhash_from_hashes
from worker.engine.sketch import donor_order, sketch

_EXACT_SEED = 0xE8AC7
_LEAD_SEED = 0x1EAD
_TAIL_SEED = 0x7A11
_WORD_BAND_SEED = 0xB0BA4D


class Settings(Protocol):
    """The settings fingerprinting reads (``worker.settings.Settings`` has them); the engine
    names what it needs rather than importing the worker's configuration."""

    @property
    def strip_links(self) -> bool: ...

    @property
    def strip_tags(self) -> bool: ...

    @property
    def shingle_n(self) -> int: ...

    @property
    def fold_words(self) -> bool: ...

    @property
    def min_features(self) -> int: ...

    @property
    def anchor_words(self) -> int: ...

    @property
    def short_chars(self) -> int: ...

    @property
    def short_bands(self) -> int: ...

    @property
    def word_bands(self) -> int: ...


class Fingerprint(NamedTuple):
    """The fingerprint of one text; ``exact`` is set only when the text is too short for SimHash,
    ``bands`` (and a character part of ``sketch``) only for a short text (``worker.engine.shorttext``),
    ``word_bands`` for a text in the tables and a short one of half ``short_chars`` and more. A
    named tuple: the helper processes send each batch's fingerprints back pickled, and one loads
    (and is made) in a third of a frozen dataclass's instructions."""

    simhash: int
    sketch: bytes
    exact: int | None
    words: int
    anchors: tuple[int, ...] = ()
    bands: tuple[int, ...] = ()
    word_bands: tuple[int, ...] = ()
    lookups: tuple[int, ...] = ()
    marks: tuple[int, ...] = ()
    heads: tuple[int, ...] = ()  # a longer text's header leads (:func:`worker.engine.shorttext.header_leads`)

    @property
    def in_tables(self) -> bool:
        """Whether the text is stored in, and probes, the block tables. Not a very short text
        (its exact hash finds its copies) nor a short one: its character part's band and edge
        keys find the copies the tables would, for fewer rows and probes."""
        return self.exact is None and not self.bands

    @property
    def exact_keys(self) -> tuple[int, ...]:
        """Keys of the exact keyspace: the exact hash of a very short text, else the anchors;
        then a short text's band keys, the word band keys, and a longer text's header leads."""
        return ((self.exact,) if self.exact is not None else self.anchors) + self.bands + self.word_bands + self.heads

    @property
    def probe_keys(self) -> tuple[int, ...]:
        """The exact keys this text looks up: its own, then those a short text looks up without
        being stored under them (inner edges, halves, reach keys: :mod:`worker.engine.shorttext`)."""
        return self.exact_keys + self.lookups

    @property
    def stored_keys(self) -> tuple[int, ...]:
        """The exact keys this text is stored under: its own, then a short text's marks
        (:func:`worker.engine.shorttext.reach_keys`), which only shorter texts look up."""
        return self.exact_keys + self.marks


def fingerprint(text: str, settings: Settings) -> Fingerprint:
    """Fingerprint one raw text under the given settings (natively when possible)."""
    normalised = normalize(text, strip_links=settings.strip_links, strip_tags=settings.strip_tags)
    engine = native_engine()
    if engine is not None:
        parts = engine.fingerprint(
            normalised,
            settings.shingle_n,
            settings.min_features,
            settings.anchor_words,
            max(0, settings.word_bands),
            settings.fold_words,
        )
        if parts is not None:
            simhash, sketched, exact, words, anchors, word_bands = parts
            fp = Fingerprint(simhash, sketched, exact, words, anchors, (), word_bands)
            return _with_bands(fp, normalised, settings, engine)
    return _from_normalised(text, normalised, settings)


def fingerprint_each(texts: Sequence[str], settings: Settings) -> list[Fingerprint | str]:
    """Each text's fingerprint, or why it has none (the exception's type and message): one
    text's failure stays its own, also in a helper process, where an exception object (a
    Rust panic's, say) may not survive the way back."""
    out: list[Fingerprint | str] = []
    for text in texts:
        try:
            out.append(fingerprint(text, settings))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # also a panic in the native code: pyo3 raises it as a BaseException
            out.append(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    return out


def fingerprint_reference(text: str, settings: Settings) -> Fingerprint:
    """Fingerprint one raw text with the Python pipeline only: the definition the native path
    must match."""
    normalised = normalize_reference(text, strip_links=settings.strip_links, strip_tags=settings.strip_tags)
    return _from_normalised(text, normalised, settings)


def warm_up(settings: Settings) -> None:
    """Load every dictionary and table fingerprinting may need, both pipelines': the native
    one's, and the Python one's, which texts the native one declines (a bare link, mojibake)
    fall back to. Loaded at their first such text instead, they stalled a stream, or a scan's
    helper, mid-run."""
    fingerprint("warm-up 预热", settings)
    fingerprint_reference("warm-up 预热", settings)


@cache
def _lexicon_table() -> LexiconTable:
    """The IDF lookup table both pipelines weigh words with, read once per process."""
    return cached_lexicon_table()


@cache
def native_engine() -> Any | None:
    """The native pipeline loaded with this process's tables, or None without ``worker._native``."""
    try:
        from worker import _native
    except ImportError:
        return None
    table = _lexicon_table()
    return _native.Engine(
        kept_char_classes(), table.rows, table.shift, table.width, table.zh_default, table.en_default, donor_order()
    )


def _from_normalised(text: str, normalised: str, settings: Settings) -> Fingerprint:
    tokens = tokenize(normalised)
    weighted = hashed_features(tokens, settings.shingle_n, _lexicon_table(), settings.fold_words)
    words = weighted.words
    exact: int | None = None
    if words < settings.min_features:
        # Texts with no words at all (emoji only, symbols) still dedup on their visible form.
        basis = " ".join(tokens) if tokens else unicodedata.normalize("NFKC", text).casefold().strip()
        exact = _hash(basis, _EXACT_SEED)
    value = simhash_from_hashes(weighted.hashes, weighted.weights) if weighted.hashes.size else (exact or 0)
    anchors: tuple[int, ...] = ()
    span = settings.anchor_words
    if exact is None and span > 0:
        anchors = (_hash(" ".join(tokens[:span]), _LEAD_SEED), _hash(" ".join(tokens[-span:]), _TAIL_SEED))
    fp = Fingerprint(simhash=value, sketch=sketch(weighted.hashes), exact=exact, words=words, anchors=anchors)
    return _with_bands(fp, normalised, settings)


def _with_bands(fp: Fingerprint, normalised: str, settings: Settings, engine: Any | None = None) -> Fingerprint:
    """``fp`` with a short text's character part and keys, else with a longer text's number
    tags; with word bands when it has words (the native pipeline has computed them already),
    but for a short text under half of ``short_chars`` (:func:`_keeps_word_bands`)."""
    part = short_part(normalised, settings.short_chars, settings.short_bands, engine)
    if part is not None:
        bands = _word_bands(fp, settings) if fp.exact is None and _keeps_word_bands(normalised, settings) else ()
        sketched = fp.sketch + part.sketch
        return Fingerprint(
            fp.simhash, sketched, fp.exact, fp.words, fp.anchors, part.keys, bands, part.lookups, part.marks
        )
    if fp.exact is not None:
        return fp
    sketched = fp.sketch + long_leads(normalised, engine) + number_tags(normalised, engine)
    opening = opening_key(normalised)  # stored for its teasers to look up
    marks = () if opening is None else (opening,)
    # A post of at most short_chars under a header, and sentences after it: a longer text of up
    # to twice that, stored and looked up (beyond, three more keys for every story, for copies
    # seldom a post's).
    heads = header_leads(normalised) if len(normalised) <= 2 * settings.short_chars else ()
    bands = _word_bands(fp, settings)
    return Fingerprint(fp.simhash, sketched, fp.exact, fp.words, fp.anchors, (), bands, (), marks, heads)


def _word_bands(fp: Fingerprint, settings: Settings) -> tuple[int, ...]:
    """A worded text's word band keys: the native pipeline's, or computed here."""
    if fp.word_bands or settings.word_bands <= 0:
        return fp.word_bands
    return band_keys(fp.sketch, settings.word_bands, _WORD_BAND_SEED)


def _keeps_word_bands(normalised: str, settings: Settings) -> bool:
    """Whether a short text also stores and looks up its word bands: from half of
    ``short_chars`` on, a copy across that line (a header and a sentence added, or a header and
    its end cut) is found by no character key or table, only by the words both share, and word
    bands meet where half of them and more agree (docs/quality.md, "A post and its copy on
    either side of the short length"). A shorter post's copy past the line shares too few."""
    return len(normalised) * 2 >= settings.short_chars


def _hash(text: str, seed: int) -> int:
    return mmh3.hash64(text, seed, signed=False)[0]
