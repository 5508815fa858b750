//! MurmurHash3 x64_128 (Austin Appleby's public-domain design), first 64-bit half only:
//! what `mmh3.hash64(s, seed)[0]` and `mmh3.hash_bytes(s, seed)[:8]` return for UTF-8 `s`.

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

#[inline(always)]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

#[inline(always)]
fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

#[inline(always)]
fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

/// Low half (h1) of MurmurHash3_x64_128(data, seed).
pub fn hash64(data: &[u8], seed: u32) -> u64 {
    let len = data.len();
    let mut h1 = seed as u64;
    let mut h2 = seed as u64;
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        let k1 = u64::from_le_bytes(block[0..8].try_into().unwrap());
        let k2 = u64::from_le_bytes(block[8..16].try_into().unwrap());
        h1 ^= mix_k1(k1);
        h1 = h1.rotate_left(27).wrapping_add(h2).wrapping_mul(5).wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(k2);
        h2 = h2.rotate_left(31).wrapping_add(h1).wrapping_mul(5).wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let mut k1: u64 = 0;
    let mut k2: u64 = 0;
    for (i, &b) in tail.iter().enumerate() {
        if i < 8 {
            k1 |= (b as u64) << (8 * i);
        } else {
            k2 |= (b as u64) << (8 * (i - 8));
        }
    }
    finish(h1, h2, k1, k2, tail.len(), len)
}

/// [`hash64`] of fewer than 16 bytes given as two little-endian words, zero past the bytes:
/// a word's skeleton is built in registers, not in a buffer to copy.
pub fn hash64_short(k1: u64, k2: u64, len: usize, seed: u32) -> u64 {
    debug_assert!(len < 16);
    finish(seed as u64, seed as u64, k1, k2, len, len)
}

#[inline(always)]
fn finish(mut h1: u64, mut h2: u64, k1: u64, k2: u64, tail: usize, len: usize) -> u64 {
    if tail > 8 {
        h2 ^= mix_k2(k2);
    }
    if tail > 0 {
        h1 ^= mix_k1(k1);
    }
    h1 ^= len as u64;
    h2 ^= len as u64;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1.wrapping_add(h2)
}
