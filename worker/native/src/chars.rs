//! Character classes exactly as Python sees them, for the Basic Multilingual Plane.
//!
//! The table is computed by Python (`str.isalnum`, `str.isdecimal`, which are what `re`'s
//! `\w` and `\d` test) and handed over once, so Rust never relies on its own Unicode tables.
//! Text with a character outside the BMP is declined by the caller.

pub const ALNUM: u8 = 1;
pub const DIGIT: u8 = 2;

pub struct Classes {
    flags: Vec<u8>,
}

impl Classes {
    pub fn new(flags: Vec<u8>) -> Option<Self> {
        (flags.len() == 0x10000).then_some(Self { flags })
    }

    #[inline(always)]
    fn get(&self, c: char) -> u8 {
        self.flags.get(c as usize).copied().unwrap_or(0)
    }

    /// `[^\W_]`: a word character other than the underscore (Python `str.isalnum`).
    #[inline(always)]
    pub fn alnum(&self, c: char) -> bool {
        self.get(c) & ALNUM != 0
    }

    /// `\d`: a decimal digit (Python `str.isdecimal`).
    #[inline(always)]
    pub fn digit(&self, c: char) -> bool {
        self.get(c) & DIGIT != 0
    }

    /// `\w`.
    #[inline(always)]
    pub fn word(&self, c: char) -> bool {
        c == '_' || self.alnum(c)
    }

    /// `[^\W\d_]`: a letter-like word character.
    #[inline(always)]
    pub fn letter(&self, c: char) -> bool {
        self.get(c) & (ALNUM | DIGIT) == ALNUM
    }
}
