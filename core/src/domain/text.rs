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
    // Printable ASCII (most text) holds no unsafe character: one pass over the bytes, which
    // the compiler vectorizes, instead of decoding characters.
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) || !text.chars().any(is_unsafe_char) {
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
        assert!(matches!(one_line("plain ASCII ~ !"), Cow::Borrowed(_)));
        // The edges of the printable ASCII range: DEL and US are controls.
        assert_eq!(one_line("a\u{7f}b\u{1f}c"), "a\u{FFFD}b\u{FFFD}c");
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

/// How many characters of an item's text [`named_item`] shows.
pub const NAMED_ITEM_CHARS: usize = 40;

/// `text` as one safe line ([`one_line`]) of at most `max` characters: a longer one is cut at
/// a character boundary and ends with `…`.
pub fn shortened(text: &str, max: usize) -> Cow<'_, str> {
    let line = one_line(text);
    match line.char_indices().nth(max) {
        None => line,
        Some(_) => {
            let cut: String = line.chars().take(max.saturating_sub(1)).collect();
            Cow::Owned(format!("{}…", cut.trim_end()))
        }
    }
}

/// An item as audit lines name it: its id ([`shown_id`]) and its text, quoted and shortened
/// to [`NAMED_ITEM_CHARS`] characters, e.g. `t3 "Add tests and docs"`.
pub fn named_item(id: &str, content: &str) -> String {
    format!(
        "{} {:?}",
        shown_id(id),
        shortened(content, NAMED_ITEM_CHARS).as_ref()
    )
}

#[cfg(test)]
mod shown_id_tests {
    use super::*;

    #[test]
    fn plain_ids_show_as_they_are_others_quoted() {
        assert_eq!(shown_id("write-parser_2.b"), "write-parser_2.b");
        assert_eq!(shown_id("t1"), "t1");
    }

    #[test]
    fn items_are_named_by_id_and_shortened_text() {
        assert_eq!(
            named_item("t3", "Add tests and docs"),
            "t3 \"Add tests and docs\""
        );
        let long = "Write the parser for the configuration files and test it";
        let named = named_item("2", long);
        assert_eq!(named, "2 \"Write the parser for the configuration…\"");
        assert_eq!(shortened("中文中文中文", 4), "中文中…");
        assert_eq!(shortened("a\nb", 10), "a b");
        assert_eq!(
            shown_id("tests: in_progress -> completed, docs"),
            "\"tests: in_progress -> completed, docs\""
        );
        assert_eq!(shown_id(" 1"), "\" 1\"");
        assert_eq!(shown_id("a\"b"), "\"a\\\"b\"");
    }
}
