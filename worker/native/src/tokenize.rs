//! `worker.segment.tokenize` in Rust: the same stretches, the same jieba words (HMM off), the
//! same `_WORD` matches, so the token lists are equal.

use jieba_rs::Jieba;

use crate::chars::Classes;

/// jieba's own range of Chinese characters (`segment._HAN`).
#[inline(always)]
fn han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fd5}').contains(&c)
}

/// Words of normalised `text` in order, appended to `out` as slices of `text`.
pub fn tokenize<'a>(text: &'a str, classes: &Classes, jieba: &Jieba, out: &mut Vec<&'a str>) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    let byte_at = |i: usize| if i < n { chars[i].0 } else { text.len() };
    let mut i = 0;
    while i < n {
        // Non-Chinese part: up to the next Chinese character.
        let start = i;
        while i < n && !han(chars[i].1) {
            i += 1;
        }
        if i > start {
            words(&chars[start..i], text, classes, out);
        }
        if i == n {
            break;
        }
        // Chinese stretch: a Chinese character, then Chinese characters and non-word characters.
        let stretch = i;
        i += 1;
        while i < n && (han(chars[i].1) || !classes.word(chars[i].1)) {
            i += 1;
        }
        let piece = &text[byte_at(stretch)..byte_at(i)];
        for token in jieba.cut(piece, false) {
            let w = token.word;
            if !w.is_empty() && w.chars().all(|c| classes.alnum(c)) {
                out.push(w);
            }
        }
    }
}

/// `segment._WORD.findall` over one non-Chinese part (lookarounds end at the part's edges,
/// as they do when Python matches the part on its own).
fn words<'a>(part: &[(usize, char)], text: &'a str, classes: &Classes, out: &mut Vec<&'a str>) {
    let n = part.len();
    let end_byte = |i: usize| {
        if i < n {
            part[i].0
        } else {
            part[n - 1].0 + part[n - 1].1.len_utf8()
        }
    };
    let c = |i: usize| part[i].1;
    let mut p = 0;
    while p < n {
        if !classes.alnum(c(p)) {
            p += 1;
            continue;
        }
        let end = initialism(part, p, classes).unwrap_or_else(|| word(part, p, classes));
        out.push(&text[part[p].0..end_byte(end)]);
        p = end;
    }
}

/// `[^\W\d_](?:\.[^\W\d_]){1,9}+(?![^\W_])` at `p`: the end index, if it matches.
fn initialism(part: &[(usize, char)], p: usize, classes: &Classes) -> Option<usize> {
    let n = part.len();
    if !classes.letter(part[p].1) {
        return None;
    }
    let mut q = p + 1;
    let mut reps = 0;
    while reps < 9 && q + 1 < n && part[q].1 == '.' && classes.letter(part[q + 1].1) {
        q += 2;
        reps += 1;
    }
    if reps == 0 || (q < n && classes.alnum(part[q].1)) {
        return None;
    }
    Some(q)
}

/// `[^\W_]++(?:(?:['\-]|(?<=\d)[.,:/](?=\d))[^\W_]++)*+` at `p` (an alnum character).
fn word(part: &[(usize, char)], p: usize, classes: &Classes) -> usize {
    let n = part.len();
    let run = |mut q: usize| {
        while q < n && classes.alnum(part[q].1) {
            q += 1;
        }
        q
    };
    let mut q = run(p);
    while q + 1 < n {
        let sep = part[q].1;
        let next = part[q + 1].1;
        let joins = match sep {
            '\'' | '-' => classes.alnum(next),
            '.' | ',' | ':' | '/' => classes.digit(part[q - 1].1) && classes.digit(next),
            _ => false,
        };
        if !joins {
            break;
        }
        q = run(q + 1);
    }
    q
}
