//! The character part of a short text (`worker.engine.shorttext.short_part`), bit for bit:
//! character 3-gram hashes, their sketch, their 16-bit tags when few, band and edge keys, and
//! the inner edges it looks up.
//! The numbers mask stays in Python (a regular expression).

use crate::chars::Classes;
use crate::murmur;
use crate::sketch;

const CHAR_SEED: u64 = 0xC4A2_5EED_0000_0003;
const SHINGLE_SEED: u64 = 0x9E37_79B9_7F4A_7C15;
const ROTATE: u32 = 23;
const CHAR_GRAM: usize = 3;
const BAND_ROWS: usize = 3;
const BAND_SEED: u32 = 0xBA4D;
const LEAD_SEED: u32 = 0x1EAD5;
const TAIL_SEED: u32 = 0x7A115;
const MAX_LISTED_GRAMS: usize = 128;

pub struct Short {
    pub sketch: [u8; sketch::SKETCH_BYTES],
    pub tags: Option<Vec<u8>>,
    pub keys: Vec<u64>,
    pub lookups: Vec<u64>,
}

/// Hashes of the character 3-grams of `basis` (the whole of a shorter one).
fn gram_hashes(basis: &[char]) -> Vec<u64> {
    let chars: Vec<u64> = basis.iter().map(|&c| murmur::fmix64(c as u64 ^ CHAR_SEED)).collect();
    let n = CHAR_GRAM.min(chars.len());
    (0..chars.len() - n + 1)
        .map(|i| {
            let mut acc = chars[i];
            for k in 1..n {
                acc = acc.rotate_left(ROTATE) ^ chars[i + k];
            }
            murmur::fmix64(acc ^ SHINGLE_SEED)
        })
        .collect()
}

fn edge(chars: &[char], seed: u32) -> u64 {
    murmur::hash64(chars.iter().collect::<String>().as_bytes(), seed)
}

/// Keys of the first `bands` bands of `BAND_ROWS` minima of a sketch
/// (`worker.engine.shorttext.band_keys`).
pub fn band_keys(sketch: &[u8], bands: usize, seed: u32) -> Vec<u64> {
    let minima = &sketch[2..2 + (bands * BAND_ROWS).min(sketch::PERMUTATIONS)];
    minima
        .chunks_exact(BAND_ROWS)
        .enumerate()
        .map(|(b, rows)| {
            let mut key = [b as u8, 0, 0, 0];
            key[1..].copy_from_slice(rows);
            murmur::hash64(&key, seed)
        })
        .collect()
}

/// How wide the edge keys are: `chars`, and for a dense text (at least half Han characters;
/// its sketch's size field is then flagged) of at most `dense_max` characters, `dense_chars`.
/// `dense_chars` 0: no text is dense. `inner`: how many clause starts and ends become inner
/// edges (`worker.engine.shorttext.inner_edge_keys`), `dense_chars` and `chars` wide in a dense text.
/// `short_lead`: a Latin text of at most `dense_max` also stores a lead key this wide (0: none).
pub struct Edges {
    pub chars: usize,
    pub dense_chars: usize,
    pub dense_max: usize,
    pub inner: usize,
    pub short_lead: usize,
}

/// Where each clause after the first starts, in `basis` positions: a run of characters that
/// are not letters or digits ends a clause, but a space only in dense text.
fn clause_starts(text: &str, classes: &Classes, dense: bool, len: usize) -> Vec<usize> {
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    for c in text.chars() {
        if classes.alnum(c) {
            at += 1;
        } else if (dense || c != ' ') && at > 0 && at < len && starts.last() != Some(&at) {
            starts.push(at);
        }
    }
    starts
}

/// Lead keys at the first `count` clause starts, tail keys at the last `count`, each as wide as
/// each of `widths`, none of `own`.
fn inner_keys(basis: &[char], starts: &[usize], widths: &[usize], count: usize, own: &[u64]) -> Vec<u64> {
    let first = &starts[..count.min(starts.len())];
    let last = &starts[starts.len().saturating_sub(count)..];
    let leads = widths.iter().flat_map(|&w| {
        first.iter().filter(move |&&s| s + w <= basis.len()).map(move |&s| edge(&basis[s..s + w], LEAD_SEED))
    });
    let tails = widths
        .iter()
        .flat_map(|&w| last.iter().filter(move |&&e| e >= w).map(move |&e| edge(&basis[e - w..e], TAIL_SEED)));
    let mut out: Vec<u64> = Vec::new();
    for key in leads.chain(tails) {
        if !own.contains(&key) && !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

const DENSE_FLAG: u8 = 0x80;

fn is_han(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}')
}

/// The character part of normalised `text`, or `None` when it has no letter or digit.
pub fn short(text: &str, classes: &Classes, donors: &[Vec<u8>], bands: usize, edges: &Edges) -> Option<Short> {
    let basis: Vec<char> = text.chars().filter(|&c| classes.alnum(c)).collect();
    if basis.is_empty() {
        return None;
    }
    let grams = gram_hashes(&basis);
    let mut sketch = sketch::sketch(&grams, donors);
    let mut tags: Vec<u16> = grams.iter().map(|&g| (g >> 48) as u16).collect();
    tags.sort_unstable();
    tags.dedup();
    let tags = (tags.len() <= MAX_LISTED_GRAMS).then(|| tags.iter().flat_map(|t| t.to_be_bytes()).collect());
    let mut keys = band_keys(&sketch, bands, BAND_SEED);
    let dense = edges.dense_chars > 0 && 2 * basis.iter().filter(|&&c| is_han(c)).count() >= basis.len();
    let width = if dense && basis.len() <= edges.dense_max { edges.dense_chars } else { edges.chars };
    keys.push(edge(&basis[..width.min(basis.len())], LEAD_SEED));
    keys.push(edge(&basis[basis.len().saturating_sub(width)..], TAIL_SEED));
    if !dense && edges.short_lead > 0 && edges.short_lead < basis.len() && basis.len() <= edges.dense_max {
        keys.push(edge(&basis[..edges.short_lead], LEAD_SEED));
    }
    let lookups = if edges.inner > 0 {
        // A stored dense post's edges are narrow up to `dense_max` characters and wide beyond.
        let widths: &[usize] = if dense { &[edges.dense_chars, edges.chars] } else { &[edges.chars] };
        inner_keys(&basis, &clause_starts(text, classes, dense, basis.len()), widths, edges.inner, &keys)
    } else {
        Vec::new()
    };
    if dense {
        sketch[0] |= DENSE_FLAG;
    }
    Some(Short { sketch, tags, keys, lookups })
}
