//! A character-for-character fold, as Python's `str.translate` with a table of code points
//! applies it (`worker.engine.sounds.fold_sounds`, `worker.engine.shapes.fold_shapes_and_sounds`):
//! there each character costs a dictionary lookup, and a short text is folded twice.

use std::collections::HashMap;

pub struct Fold {
    /// What each BMP code point becomes (itself where the table leaves it).
    bmp: Vec<char>,
    astral: HashMap<char, char>,
}

impl Fold {
    /// `None` when a pair names no character (a surrogate, or past U+10FFFF).
    pub fn new(pairs: &[(u32, u32)]) -> Option<Self> {
        let mut bmp: Vec<char> = (0..0x10000u32).map(|cp| char::from_u32(cp).unwrap_or('\u{FFFD}')).collect();
        let mut astral = HashMap::new();
        for &(from, to) in pairs {
            let (from, to) = (char::from_u32(from)?, char::from_u32(to)?);
            match bmp.get_mut(from as usize) {
                Some(slot) => *slot = to,
                None => {
                    astral.insert(from, to);
                }
            }
        }
        Some(Self { bmp, astral })
    }

    pub fn fold(&self, text: &str) -> String {
        text.chars()
            .map(|c| match self.bmp.get(c as usize) {
                Some(&to) => to,
                None => self.astral.get(&c).copied().unwrap_or(c),
            })
            .collect()
    }
}
