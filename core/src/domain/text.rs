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

/// An id as history lines, item lives, diffs and audit notes show it: as it is when it is
/// made of letters, digits, `_`, `-` and `.` only; otherwise quoted and escaped, so that an id
/// like `tests: in_progress -> completed, docs` can never pass for the punctuation around it.
pub fn shown_id(id: &str) -> Cow<'_, str> {
    let plain = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if plain {
        Cow::Borrowed(id)
    } else {
        Cow::Owned(format!("{id:?}"))
    }
}

#[cfg(test)]
mod shown_id_tests {
    use super::*;

    #[test]
    fn plain_ids_show_as_they_are_others_quoted() {
        assert_eq!(shown_id("write-parser_2.b"), "write-parser_2.b");
        assert_eq!(shown_id("t1"), "t1");
        assert_eq!(
            shown_id("tests: in_progress -> completed, docs"),
            "\"tests: in_progress -> completed, docs\""
        );
        assert_eq!(shown_id(" 1"), "\" 1\"");
        assert_eq!(shown_id("a\"b"), "\"a\\\"b\"");
    }
}
