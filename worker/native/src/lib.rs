//! `worker._native`: the fingerprint pipeline after normalisation (tokenize -> hashed features
//! -> SimHash, sketch, exact hash and anchors) in Rust, equal bit for bit to the Python
//! pipeline, which stays the reference and the fallback.
//!
//! All data (character classes, the IDF table, the sketch's donor order) comes from the Python
//! modules that own it, once, when an `Engine` is built. `Engine.fingerprint` returns `None`
//! for a text it cannot fingerprint with certainty (a character outside the BMP, no words at
//! all, an unsupported shingle size), and Python handles that text.

mod chars;
mod clean;
mod features;
mod fold;
mod leads;
mod murmur;
mod numbers;
mod short;
mod simhash;
mod sketch;
mod tokenize;

use std::sync::OnceLock;

use jieba_rs::Jieba;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};

use chars::Classes;
use features::{hashed_features, Lexicon};

const EXACT_SEED: u32 = 0xE8AC7;
const LEAD_SEED: u32 = 0x1EAD;
const TAIL_SEED: u32 = 0x7A11;
const WORD_BAND_SEED: u32 = 0xB0BA4D;

/// jieba's dictionary, loaded once per process (~0.1 s) and shared by every engine.
fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// What a fingerprint is made of, before it becomes Python objects.
struct Parts {
    simhash: u64,
    sketch: [u8; sketch::SKETCH_BYTES],
    exact: Option<u64>,
    words: usize,
    anchors: Option<(u64, u64)>,
    word_bands: Vec<u64>,
}

/// The native pipeline with its tables.
#[pyclass(frozen, module = "worker._native")]
struct Engine {
    classes: Classes,
    lexicon: Lexicon,
    donors: Vec<Vec<u8>>,
}

fn joined_hash(tokens: &[&str], seed: u32) -> u64 {
    murmur::hash64(tokens.join(" ").as_bytes(), seed)
}

impl Engine {
    fn run(&self, text: &str, n: usize, min_features: usize, span: usize, bands: usize, fold: bool) -> Option<Parts> {
        if text.bytes().any(|b| b >= 0xF0) {
            return None; // a character outside the BMP: its classes were not handed over
        }
        let mut tokens = Vec::with_capacity(text.len() / 3 + 1);
        tokenize::tokenize(text, &self.classes, jieba(), &mut tokens);
        let weighted = hashed_features(&tokens, n, &self.lexicon, fold);
        let words = weighted.words;
        let mut exact = None;
        if words < min_features {
            if tokens.is_empty() {
                return None; // the exact basis is then the raw text's visible form
            }
            exact = Some(joined_hash(&tokens, EXACT_SEED));
        }
        let value = if weighted.hashes.is_empty() {
            exact.unwrap_or(0)
        } else {
            if simhash::total(&weighted.weights) >= simhash::EXACT_LIMIT {
                return None;
            }
            simhash::simhash(&weighted.hashes, &weighted.weights)
        };
        let anchors = (exact.is_none() && span > 0).then(|| {
            let lead = &tokens[..span.min(tokens.len())];
            let tail = &tokens[tokens.len().saturating_sub(span)..];
            (joined_hash(lead, LEAD_SEED), joined_hash(tail, TAIL_SEED))
        });
        let sketch = sketch::sketch(&weighted.hashes, &self.donors);
        let word_bands = if exact.is_none() { short::band_keys(&sketch, bands, WORD_BAND_SEED) } else { Vec::new() };
        Some(Parts { simhash: value, sketch, exact, words, anchors, word_bands })
    }
}

#[pymethods]
impl Engine {
    /// Tables from Python: `classes` (65536 bytes, bit 1 = `str.isalnum`, bit 2 =
    /// `str.isdecimal`), the lexicon table as little-endian uint32 pairs with its `shift` and
    /// `width`, the default IDFs, and `donors` (128 rows of 127 bin numbers, one byte each).
    #[new]
    #[pyo3(signature = (classes, table, shift, width, zh_default, en_default, donors))]
    fn new(
        classes: &[u8],
        table: &[u8],
        shift: u32,
        width: usize,
        zh_default: f64,
        en_default: f64,
        donors: &[u8],
    ) -> PyResult<Self> {
        let classes =
            Classes::new(classes.to_vec()).ok_or_else(|| PyValueError::new_err("classes must be 65536 bytes"))?;
        if !table.len().is_multiple_of(8) || shift >= 64 || width == 0 {
            return Err(PyValueError::new_err("malformed lexicon table"));
        }
        let table: Vec<[u32; 2]> = table
            .chunks_exact(8)
            .map(|r| [u32::from_le_bytes(r[..4].try_into().unwrap()), u32::from_le_bytes(r[4..].try_into().unwrap())])
            .collect();
        if ((u64::MAX >> shift) as usize).saturating_add(width) > table.len() {
            return Err(PyValueError::new_err("lexicon table too small for its shift and width"));
        }
        let rows = sketch::PERMUTATIONS - 1;
        if donors.len() != sketch::PERMUTATIONS * rows || donors.iter().any(|&d| d as usize >= sketch::PERMUTATIONS) {
            return Err(PyValueError::new_err("donors must be 128 x 127 bin numbers"));
        }
        let donors = donors.chunks_exact(rows).map(<[u8]>::to_vec).collect();
        jieba();
        Ok(Self { classes, lexicon: Lexicon { table, shift, width, zh_default, en_default }, donors })
    }

    /// `(simhash, sketch, exact, words, anchors, word_bands)` of normalised text, or `None`
    /// when Python must handle it; `word_bands` keys for any text without an exact hash (Python
    /// drops them for a short one under half `short_chars`). Without `word_bands` the call is
    /// the one before word bands existed, whose sixth item is empty, and without `fold_words`
    /// the one before words were folded: the benches run an earlier tree on this module.
    #[pyo3(signature = (text, shingle_n, min_features, anchor_words, word_bands = 0, fold_words = false))]
    fn fingerprint<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        shingle_n: usize,
        min_features: usize,
        anchor_words: usize,
        word_bands: usize,
        fold_words: bool,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        if !(1..=2).contains(&shingle_n) {
            return Ok(None);
        }
        let Ok(text) = text.to_str() else {
            return Ok(None); // lone surrogates: not UTF-8
        };
        let Some(parts) = py.detach(|| self.run(text, shingle_n, min_features, anchor_words, word_bands, fold_words))
        else {
            return Ok(None);
        };
        let anchors = match parts.anchors {
            Some((lead, tail)) => PyTuple::new(py, [lead, tail])?,
            None => PyTuple::empty(py),
        };
        let tuple = PyTuple::new(
            py,
            [
                parts.simhash.into_pyobject(py)?.into_any(),
                PyBytes::new(py, &parts.sketch).into_any(),
                parts.exact.into_pyobject(py)?.into_any(),
                parts.words.into_pyobject(py)?.into_any(),
                anchors.into_any(),
                PyTuple::new(py, parts.word_bands)?.into_any(),
            ],
        )?;
        Ok(Some(tuple))
    }

    /// `(sketch, tags or None, keys, lookups)`: the character part of a short normalised text
    /// (`worker.engine.shorttext._short_reference`: edge keys of `edge_chars` characters, of
    /// `dense_edge_chars` for a dense text of at most `dense_max_chars`; inner edges at
    /// `inner_edges` clauses from each end; a Latin text of at most `dense_max_chars` also a lead
    /// key of `short_lead_chars`), or `None` when Python must compute it (a character
    /// outside the BMP, no letter or digit).
    #[pyo3(signature = (text, bands, edge_chars = 16, dense_edge_chars = 0, dense_max_chars = 0, inner_edges = 0, short_lead_chars = 0))]
    #[allow(clippy::too_many_arguments)]
    fn short<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        bands: usize,
        edge_chars: usize,
        dense_edge_chars: usize,
        dense_max_chars: usize,
        inner_edges: usize,
        short_lead_chars: usize,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Ok(text) = text.to_str() else {
            return Ok(None);
        };
        if text.bytes().any(|b| b >= 0xF0) {
            return Ok(None);
        }
        let edges = short::Edges {
            chars: edge_chars,
            dense_chars: dense_edge_chars,
            dense_max: dense_max_chars,
            inner: inner_edges,
            short_lead: short_lead_chars,
        };
        let Some(part) = short::short(text, &self.classes, &self.donors, bands, &edges) else {
            return Ok(None);
        };
        let tags = match part.tags {
            Some(tags) => PyBytes::new(py, &tags).into_any(),
            None => py.None().into_bound(py),
        };
        let tuple = PyTuple::new(
            py,
            [
                PyBytes::new(py, &part.sketch).into_any(),
                tags,
                PyTuple::new(py, part.keys)?.into_any(),
                PyTuple::new(py, part.lookups)?.into_any(),
            ],
        )?;
        Ok(Some(tuple))
    }

    /// A longer normalised text's number tags (`worker.engine.numbers.number_tags`), or `None`
    /// when Python must compute them (a character outside the BMP).
    fn number_tags<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        seed: u32,
        max: usize,
        min: usize,
    ) -> Option<Bound<'py, PyBytes>> {
        if text.bytes().any(|b| b >= 0xF0) {
            return None;
        }
        Some(PyBytes::new(py, &numbers::number_tags(text, &self.classes, seed, max, min)))
    }

    /// A short normalised text's numbers mask (`worker.engine.numbers.numbers_mask`), or `None`
    /// when Python must compute it (a character outside the BMP, a decimal digit not ASCII).
    fn numbers_mask(&self, text: &str, seed: u32, bits: u32) -> Option<u64> {
        if text.bytes().any(|b| b >= 0xF0) || text.chars().any(|c| !c.is_ascii() && self.classes.digit(c)) {
            return None;
        }
        Some(numbers::numbers_mask(text, &self.classes, seed, bits))
    }

    /// A normalised text's lead windows (`worker.engine.leads.lead_windows`), or `None` when
    /// Python must compute them (a character outside the BMP among those read).
    #[allow(clippy::too_many_arguments)]
    fn lead_windows<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        short: bool,
        width: usize,
        max: usize,
        slack: usize,
        min: usize,
        seed: u32,
    ) -> Option<Bound<'py, PyBytes>> {
        let spec = leads::Spec { width, max, slack, min, seed };
        let windows = leads::lead_windows(text, &self.classes, short, &spec)?;
        Some(PyBytes::new(py, &windows))
    }

    /// Nanoseconds spent in each stage on normalised text: (tokenize, features, simhash,
    /// sketch), for the benchmark's breakdown; `None` where `fingerprint` would decline.
    #[pyo3(signature = (text, shingle_n, fold_words = false))]
    fn stage_nanos(&self, text: &str, shingle_n: usize, fold_words: bool) -> Option<(u128, u128, u128, u128)> {
        if text.bytes().any(|b| b >= 0xF0) || !(1..=2).contains(&shingle_n) {
            return None;
        }
        let t0 = std::time::Instant::now();
        let mut tokens = Vec::with_capacity(text.len() / 3 + 1);
        tokenize::tokenize(text, &self.classes, jieba(), &mut tokens);
        let t1 = std::time::Instant::now();
        let weighted = hashed_features(&tokens, shingle_n, &self.lexicon, fold_words);
        let t2 = std::time::Instant::now();
        let value = simhash::simhash(&weighted.hashes, &weighted.weights);
        let t3 = std::time::Instant::now();
        let sketch = sketch::sketch(&weighted.hashes, &self.donors);
        let t4 = std::time::Instant::now();
        std::hint::black_box((value, sketch));
        Some(((t1 - t0).as_nanos(), (t2 - t1).as_nanos(), (t3 - t2).as_nanos(), (t4 - t3).as_nanos()))
    }

    /// The words of normalised text, as `worker.segment.tokenize` gives them (for tests), or
    /// `None` for text with a character outside the BMP.
    fn tokenize(&self, text: &str) -> Option<Vec<String>> {
        if text.bytes().any(|b| b >= 0xF0) {
            return None;
        }
        let mut tokens = Vec::new();
        tokenize::tokenize(text, &self.classes, jieba(), &mut tokens);
        Some(tokens.into_iter().map(str::to_owned).collect())
    }
}

/// Steps 1-3 of `worker.normalize.normalize` (junk characters, NFKC, typographic marks) for
/// non-ASCII text, from a per-character table computed by Python.
#[pyclass(frozen, module = "worker._native")]
struct Cleaner {
    inner: clean::Cleaner,
}

#[pymethods]
impl Cleaner {
    /// `same`: 65536 bytes, nonzero where a BMP character stays as it is; `replacements`:
    /// (code point, what it becomes, or None to decline texts containing it).
    #[new]
    fn new(same: &[u8], replacements: Vec<(u32, Option<String>)>) -> PyResult<Self> {
        clean::Cleaner::new(same, replacements)
            .map(|inner| Self { inner })
            .ok_or_else(|| PyValueError::new_err("malformed character table"))
    }

    /// The cleaned text, or `None` when Python must clean it (a character the table declines
    /// or one outside the BMP).
    fn clean(&self, py: Python<'_>, text: &Bound<'_, PyString>) -> Option<String> {
        let text = text.to_str().ok()?;
        py.detach(|| self.inner.clean(text))
    }
}

/// A `str.translate` table of code points applied in one pass (`worker.engine.sounds`,
/// `worker.engine.shapes`).
#[pyclass(frozen, module = "worker._native")]
struct Folder {
    inner: fold::Fold,
}

#[pymethods]
impl Folder {
    /// `pairs`: (code point, the one it becomes), for the characters that change.
    #[new]
    fn new(pairs: Vec<(u32, u32)>) -> PyResult<Self> {
        fold::Fold::new(&pairs)
            .map(|inner| Self { inner })
            .ok_or_else(|| PyValueError::new_err("a pair names no character"))
    }

    /// `text` folded, or `None` when Python must fold it (a lone surrogate).
    fn fold(&self, text: &Bound<'_, PyString>) -> Option<String> {
        Some(self.inner.fold(text.to_str().ok()?))
    }
}

/// A set of characters with a fast "does this text contain one of them" (Python's `re` scans a
/// class of thousands of characters slowly).
#[pyclass(frozen, module = "worker._native")]
struct CharSet {
    bmp: Vec<bool>,
    astral: std::collections::HashSet<char>,
}

#[pymethods]
impl CharSet {
    #[new]
    fn new(chars: &str) -> Self {
        let mut bmp = vec![false; 0x10000];
        let mut astral = std::collections::HashSet::new();
        for c in chars.chars() {
            match bmp.get_mut(c as usize) {
                Some(slot) => *slot = true,
                None => {
                    astral.insert(c);
                }
            }
        }
        Self { bmp, astral }
    }

    /// Whether `text` contains a character of the set (lone surrogates count as none).
    fn search(&self, text: &Bound<'_, PyString>) -> bool {
        let text = text.to_string_lossy();
        text.chars().any(|c| match self.bmp.get(c as usize) {
            Some(&hit) => hit,
            None => self.astral.contains(&c),
        })
    }
}

/// jieba words of a Chinese stretch, HMM off, exactly as `jieba.cut(text, HMM=False)`.
#[pyfunction]
fn cut(text: &str) -> Vec<String> {
    jieba().cut(text, false).into_iter().map(|t| t.word.to_owned()).collect()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Engine>()?;
    m.add_class::<Cleaner>()?;
    m.add_class::<CharSet>()?;
    m.add_class::<Folder>()?;
    m.add_function(wrap_pyfunction!(cut, m)?)?;
    Ok(())
}
