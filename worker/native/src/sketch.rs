//! One-permutation b-bit MinHash sketch with densification (`worker.sketch.sketch`).

pub const PERMUTATIONS: usize = 128;
pub const SKETCH_BYTES: usize = 2 + PERMUTATIONS;
const BIN_SHIFT: u32 = 57;

/// `donors[i]`: the other bins in the order an empty bin `i` borrows from (from Python).
pub fn sketch(hashes: &[u64], donors: &[Vec<u8>]) -> [u8; SKETCH_BYTES] {
    let mut out = [0u8; SKETCH_BYTES];
    if hashes.is_empty() {
        return out;
    }
    let mut minimum = [u64::MAX; PERMUTATIONS];
    let mut filled = [false; PERMUTATIONS];
    for &h in hashes {
        let bin = (h >> BIN_SHIFT) as usize;
        filled[bin] = true;
        if h < minimum[bin] {
            minimum[bin] = h;
        }
    }
    let mut sorted = hashes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let size = sorted.len().min(0xFFFF) as u16;
    out[..2].copy_from_slice(&size.to_be_bytes());
    for bin in 0..PERMUTATIONS {
        let source =
            if filled[bin] { bin } else { donors[bin].iter().map(|&j| j as usize).find(|&j| filled[j]).unwrap_or(bin) };
        out[2 + bin] = (minimum[source] >> 8) as u8;
    }
    out
}
