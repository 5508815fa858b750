//! A longer text's number tags, as `worker.engine.numbers._number_tags_reference` defines them:
//! the numbers written in ASCII digits that stand on their own, the last one left out when
//! nothing but punctuation follows it (a cut may fall inside it), each distinct one's 16-bit
//! tag in order of first appearance, at most `max` of them, none when fewer than `min`.

use crate::chars::Classes;
use crate::murmur::hash64;

/// May not precede a number: it would be a typo inside a word ("he11o") or part of a longer one.
/// Bytes, not characters: every byte these tests look for is ASCII, which no byte of another
/// character's UTF-8 form is.
fn joins(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b',' | b':')
}

/// The end of the number starting at `i` (a digit with no `joins` byte before it), if one
/// does: two digits or more, or one with separated digits after it (3.5, 1,000, 12:30), or a
/// lone 2-9, or a lone 0 or 1 not before a letter ("0f", "1ike" are slips as often).
fn number_end(t: &[u8], i: usize) -> Option<usize> {
    let run = |from: usize| from + t[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let groups = |mut end: usize| {
        while end + 1 < t.len() && matches!(t[end], b'.' | b',' | b':') && t[end + 1].is_ascii_digit() {
            end = run(end + 1);
        }
        end
    };
    let end = run(i);
    if end - i >= 2 {
        return Some(groups(end));
    }
    let grouped = groups(end);
    if grouped > end {
        return Some(grouped);
    }
    (matches!(t[i], b'2'..=b'9') || t.get(end).is_none_or(|next| !next.is_ascii_lowercase())).then_some(end)
}

/// Byte spans of the numbers standing on their own, and whether the last is whole (more
/// than punctuation follows it).
fn spans(text: &str, classes: &Classes) -> (Vec<(usize, usize)>, bool) {
    let t = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i].is_ascii_digit() && (i == 0 || !joins(t[i - 1])) {
            if let Some(end) = number_end(t, i) {
                spans.push((i, end));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    let last_whole = spans.last().is_some_and(|&(_, end)| text[end..].chars().any(|c| classes.alnum(c)));
    (spans, last_whole)
}

pub fn number_tags(text: &str, classes: &Classes, seed: u32, max: usize, min: usize) -> Vec<u8> {
    let t = text.as_bytes();
    let (mut spans, last_whole) = spans(text, classes);
    if !last_whole {
        spans.pop();
    }
    let mut tags: Vec<u16> = Vec::new();
    for (start, end) in spans {
        if tags.len() == max.max(min) {
            break; // enough to decide both the count and the tags kept
        }
        let tag = (hash64(&t[start..end], seed) & 0xFFFF) as u16;
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    if tags.len() < min {
        return Vec::new();
    }
    tags.iter().take(max).flat_map(|tag| tag.to_be_bytes()).collect()
}

/// A short text's numbers mask, as `worker.engine.numbers._numbers_mask_reference` defines it:
/// `bits` bits of each whole number's hash, and one of its first digit's for every number.
/// The caller declines a text with a decimal digit other than ASCII's (Python's `\d` takes them).
pub fn numbers_mask(text: &str, classes: &Classes, seed: u32, bits: u32) -> u64 {
    let t = text.as_bytes();
    let (spans, last_whole) = spans(text, classes);
    let whole = if last_whole { spans.len() } else { spans.len().saturating_sub(1) };
    let mut mask = 0u64;
    for &(start, end) in &spans[..whole] {
        let h = hash64(&t[start..end], seed);
        for i in 0..bits {
            mask |= 1 << ((h >> (6 * i)) & 63);
        }
    }
    for &(start, _) in &spans {
        mask |= 1 << (hash64(&[b'^', t[start]], seed) & 63);
    }
    mask
}
