//! Charikar SimHash over (hash, weight) rows, bit j set when the weights of rows with bit j
//! set outweigh half the total (`worker.simhash.simhash_from_hashes`).
//!
//! Every weight is a float32 IDF (>= 0.5) or the mean of two, i.e. a multiple of 2**-25, so
//! sums below 2**28 are exact in f64 whatever the order: numpy's BLAS and this loop agree.

/// Largest total weight for which the sums are exact.
pub const EXACT_LIMIT: f64 = (1u64 << 27) as f64;

pub fn simhash(hashes: &[u64], weights: &[f64]) -> u64 {
    let mut ones = [0.0f64; 64];
    let mut total = 0.0f64;
    for (&h, &w) in hashes.iter().zip(weights) {
        total += w;
        for (j, acc) in ones.iter_mut().enumerate() {
            // branch-free: the bit as 0.0 / 1.0
            *acc += w * ((h >> j) & 1) as f64;
        }
    }
    let half = total / 2.0;
    ones.iter().enumerate().fold(0u64, |v, (j, &s)| if s > half { v | (1u64 << j) } else { v })
}

pub fn total(weights: &[f64]) -> f64 {
    weights.iter().sum()
}
