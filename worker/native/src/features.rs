//! `worker.features.hashed_features` in Rust: per-token MurmurHash3, the same IDF table
//! lookup (the numpy open-addressing table itself, handed over by Python), the same shingles.

use crate::murmur::{fmix64, hash64, hash64_short};

const FEATURE_SEED: u32 = 0x5EED;
const SHINGLE_SEED: u64 = 0x9E37_79B9_7F4A_7C15;
const ROTATE: u32 = 23;

/// `features._Lexicon`: rows of (low 32 bits of a word's hash, IDF as f32 bits, negated for a
/// stopword); a word sits within `width` rows after row `hash >> shift`.
pub struct Lexicon {
    pub table: Vec<[u32; 2]>,
    pub shift: u32,
    pub width: usize,
    /// IDF of an unknown token with a CJK character (`[\u3400-\u9fff]`), and of any other.
    pub zh_default: f64,
    pub en_default: f64,
}

impl Lexicon {
    /// (IDF, is-a-unigram-feature) of a token, as `features._weigh` computes it.
    fn weigh(&self, hash: u64, token: &str) -> (f64, bool) {
        let home = (hash >> self.shift) as usize;
        let tag = hash as u32;
        let mut signed = 0.0f64;
        for row in &self.table[home..home + self.width] {
            if row[0] == tag {
                signed += f32::from_bits(row[1]) as f64;
            }
        }
        if signed == 0.0 {
            let chinese = token.chars().any(|c| ('\u{3400}'..='\u{9fff}').contains(&c));
            signed = if chinese { self.zh_default } else { self.en_default };
        }
        (signed.abs(), signed > 0.0)
    }
}

/// Feature rows: unigrams (stopwords dropped) in token order, then shingles.
pub struct Features {
    pub hashes: Vec<u64>,
    pub weights: Vec<f64>,
    /// Distinct tokens (by hash).
    pub words: usize,
}

/// Bit `c - b'a'` set for each vowel (y is one here).
const VOWELS: u32 = 1 << 0 | 1 << 4 | 1 << 8 | 1 << 14 | 1 << 20 | 1 << 24;

/// The feature hash of `features.skeleton(token)`: for a word of at least three letters a-z,
/// its first letter and the consonants after it, each run of one letter once; `None` for any
/// other token, which is hashed as it is.
fn skeleton_hash(token: &str) -> Option<u64> {
    let bytes = token.as_bytes();
    if bytes.len() < 3 || !bytes.iter().all(u8::is_ascii_lowercase) {
        return None;
    }
    if bytes.len() >= 16 {
        let mut out = Vec::with_capacity(bytes.len());
        for &b in bytes {
            if (out.is_empty() || (VOWELS >> (b - b'a')) & 1 == 0) && out.last() != Some(&b) {
                out.push(b);
            }
        }
        return Some(hash64(&out, FEATURE_SEED));
    }
    // Shorter (most words): built in a register, with no buffer to fill and hash after.
    let mut acc = bytes[0] as u128;
    let (mut len, mut last) = (1usize, bytes[0]);
    for &b in &bytes[1..] {
        let keep = ((VOWELS >> (b - b'a')) & 1 == 0) & (b != last);
        acc |= ((b as u128) * keep as u128) << (8 * len);
        len += keep as usize;
        last = if keep { b } else { last };
    }
    Some(hash64_short(acc as u64, (acc >> 64) as u64, len, FEATURE_SEED))
}

pub fn hashed_features(tokens: &[&str], n: usize, lexicon: &Lexicon, fold: bool) -> Features {
    let mut hashes: Vec<u64> = tokens.iter().map(|t| hash64(t.as_bytes(), FEATURE_SEED)).collect();
    let mut sorted = hashes.clone();
    sorted.sort_unstable();
    sorted.dedup();
    let words = sorted.len();
    let mut weights = Vec::with_capacity(tokens.len());
    let mut unigram = Vec::with_capacity(tokens.len());
    for (hash, token) in hashes.iter().zip(tokens) {
        let (w, u) = lexicon.weigh(*hash, token);
        weights.push(w);
        unigram.push(u);
    }
    if fold {
        // Weighed as the words they are, named by their skeletons.
        for (hash, token) in hashes.iter_mut().zip(tokens) {
            if let Some(folded) = skeleton_hash(token) {
                *hash = folded;
            }
        }
    }
    let windows = tokens.len().saturating_sub(n - 1);
    let grams = if n > 1 { windows } else { 0 };
    let mut out_h = Vec::with_capacity(tokens.len() + grams);
    let mut out_w = Vec::with_capacity(tokens.len() + grams);
    for i in 0..tokens.len() {
        if unigram[i] {
            out_h.push(hashes[i]);
            out_w.push(weights[i]);
        }
    }
    for i in 0..grams {
        let mut acc = hashes[i];
        let mut total = weights[i];
        for k in 1..n {
            acc = acc.rotate_left(ROTATE) ^ hashes[i + k];
            total += weights[i + k];
        }
        out_h.push(fmix64(acc ^ SHINGLE_SEED));
        out_w.push(total / n as f64);
    }
    Features { hashes: out_h, weights: out_w, words }
}
