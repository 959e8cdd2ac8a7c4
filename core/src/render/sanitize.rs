//! Making model-supplied text safe to show on one line.
//!
//! Item content is the model's free text. Shown to a terminal, a model or a markdown
//! viewer, it must not be able to start a new line (and so forge a plan row or a header),
//! move the cursor, change colours, or reorder text with bidi controls.

use std::borrow::Cow;

/// True for characters that must never reach output as themselves: C0/C1 controls
/// (newline, ESC, NUL, DEL, …), Unicode line and paragraph separators, and bidi controls.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' // line / paragraph separator
            | '\u{061C}' | '\u{200E}' | '\u{200F}' // arabic letter mark, LRM, RLM
            | '\u{202A}'..='\u{202E}' // LRE, RLE, PDF, LRO, RLO
            | '\u{2066}'..='\u{2069}' // LRI, RLI, FSI, PDI
        )
}

/// `text` as one safe line: whitespace-like controls (tab, newlines, separators) become a
/// space, every other unsafe character becomes U+FFFD. Borrowed when nothing changes.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                '\t' | '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}' => {
                    ' '
                }
                c if is_unsafe_char(c) => '\u{FFFD}',
                c => c,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_text_is_borrowed() {
        assert!(matches!(one_line("plain text ✔ 中文"), Cow::Borrowed(_)));
    }

    #[test]
    fn controls_cannot_break_lines_or_escape() {
        let out = one_line("a\nb\r\nc\u{1b}[31m\u{0}d\u{202e}e\u{2028}f");
        assert_eq!(out, "a b  c\u{FFFD}[31m\u{FFFD}d\u{FFFD}e f");
        assert!(!out.chars().any(is_unsafe_char));
    }
}
