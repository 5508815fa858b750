//! A text's lead windows, as `worker.engine.leads._lead_windows_reference` defines them.

use crate::chars::Classes;
use crate::murmur::hash64;

/// How a text is cut into windows (`worker.engine.leads`' constants, handed over by Python).
pub struct Spec {
    pub width: usize,
    pub max: usize,
    pub slack: usize,
    pub min: usize,
    pub seed: u32,
}

/// The windows' bytes of normalised `text`: a short text's that end `slack` characters before
/// its end (none when fewer than `min` or more than `max`, or when a digit follows the last),
/// a long one's first `max`; `None` when a character outside the BMP comes before they are
/// all read.
pub fn lead_windows(text: &str, classes: &Classes, short: bool, spec: &Spec) -> Option<Vec<u8>> {
    let Spec { width, max, slack, min, seed } = *spec;
    let mut basis: Vec<char> = Vec::new();
    for c in text.chars() {
        if c as u32 > 0xFFFF {
            return None;
        }
        if classes.alnum(c) {
            basis.push(c);
            if !short && basis.len() == width * max {
                break;
            }
        }
    }
    let letters = if short { basis.len().saturating_sub(slack) } else { basis.len() };
    let count = letters / width.max(1);
    if short && (count < min || count > max || basis[count * width..].iter().any(|&c| classes.digit(c))) {
        return Some(Vec::new());
    }
    let count = count.min(max);
    let window = |i: usize| basis[i * width..(i + 1) * width].iter().collect::<String>();
    Some((0..count).map(|i| (hash64(window(i).as_bytes(), seed) & 0xFF) as u8).collect())
}
