//! Steps 1-3 of `worker.normalize.normalize` for non-ASCII text in one pass: junk characters
//! deleted or blanked, NFKC, typographic quotes and dashes made ASCII.
//!
//! Python computes what each BMP character becomes (or that it must be declined) and hands
//! the table over. A character is accepted only if its NFKC decomposition starts with a
//! starter that never composes with a preceding character; for a text made of such
//! characters NFKC works character by character (nothing reorders or composes across two
//! characters), so the table lookup per character equals NFKC of the whole text.

/// Sentinel for "decline": Python handles the text.
const DECLINE: u32 = u32::MAX;
/// Sentinel for "the character stays as it is".
const SAME: u32 = u32::MAX - 1;

pub struct Cleaner {
    /// Per BMP code point: SAME, DECLINE, or an index into `spans`.
    entry: Vec<u32>,
    spans: Vec<(u32, u32)>,
    pool: String,
}

impl Cleaner {
    /// `replacements[cp]`: `Some(s)` = becomes `s`, `None` = declined; `same[cp]` = unchanged.
    pub fn new(same: &[u8], replacements: Vec<(u32, Option<String>)>) -> Option<Self> {
        if same.len() != 0x10000 {
            return None;
        }
        let mut entry: Vec<u32> = same.iter().map(|&s| if s != 0 { SAME } else { DECLINE }).collect();
        let mut spans = Vec::new();
        let mut pool = String::new();
        for (cp, replacement) in replacements {
            let slot = entry.get_mut(cp as usize)?;
            *slot = match replacement {
                Some(s) => {
                    spans.push((pool.len() as u32, (pool.len() + s.len()) as u32));
                    pool.push_str(&s);
                    (spans.len() - 1) as u32
                }
                None => DECLINE,
            };
        }
        Some(Self { entry, spans, pool })
    }

    /// The cleaned text, or `None` if some character is not in the table.
    pub fn clean(&self, text: &str) -> Option<String> {
        let mut out = String::with_capacity(text.len());
        let mut copied = 0; // bytes of `text` before this index are already in `out`
        for (i, c) in text.char_indices() {
            let code = *self.entry.get(c as usize)?;
            if code == SAME {
                continue;
            }
            if code == DECLINE {
                return None;
            }
            out.push_str(&text[copied..i]);
            let (lo, hi) = self.spans[code as usize];
            out.push_str(&self.pool[lo as usize..hi as usize]);
            copied = i + c.len_utf8();
        }
        out.push_str(&text[copied..]);
        Some(out)
    }
}
