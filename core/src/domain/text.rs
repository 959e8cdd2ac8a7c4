//! Making model-supplied text safe to show on one line.
//!
//! Item content is the model's free text. Shown to a terminal, a model or a markdown
//! viewer, it must not be able to start a new line (and so forge a plan row or a header),
//! move the cursor, change colours, or reorder text with bidi controls.

use std::borrow::Cow;
use std::fmt::Write as _;

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
    if is_one_safe_line(text) {
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

/// How many characters `text` has, when that is more than `max`. A text has no more
/// characters than bytes, so one of at most `max` bytes (nearly every one) is not counted.
pub(crate) fn chars_beyond(text: &str, max: usize) -> Option<usize> {
    if text.len() <= max {
        return None;
    }
    Some(text.chars().count()).filter(|&n| n > max)
}

/// True when no character of `text` is unsafe ([`is_unsafe_char`]).
fn is_one_safe_line(text: &str) -> bool {
    first_unsafe_char(text).is_none()
}

/// The first unsafe character of `text` ([`is_unsafe_char`]). Printable ASCII (most text)
/// holds none: it is passed over byte by byte, and only the characters outside it are
/// decoded and checked.
pub(crate) fn first_unsafe_char(text: &str) -> Option<char> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(skip) = bytes[from..].iter().position(|b| !(0x20..0x7f).contains(b)) {
        // Everything before `at` is ASCII, so `at` starts a character.
        let at = from + skip;
        let c = text[at..].chars().next()?;
        if is_unsafe_char(c) {
            return Some(c);
        }
        from = at + c.len_utf8();
    }
    None
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

    /// The byte-wise check finds an unsafe character wherever it stands among ASCII and
    /// other characters, as checking every character does.
    #[test]
    fn the_byte_wise_check_is_the_character_check() {
        let pieces = [
            "a",
            " ",
            "~",
            "é",
            "…",
            "中",
            "✔",
            "\u{7f}",
            "\u{85}",
            "\u{9f}",
            "\u{a0}",
            "\n",
            "\u{2028}",
            "\u{202e}",
            "\u{2069}",
            "\u{61c}",
            "\u{200f}",
            "\u{1F600}",
        ];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let text = format!("{a}x{b}{c}yz");
                    let reference = text.chars().find(|c| is_unsafe_char(*c));
                    assert_eq!(first_unsafe_char(&text), reference, "{text:?}");
                    assert_eq!(is_one_safe_line(&text), reference.is_none(), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn characters_are_counted_only_past_the_limit() {
        assert_eq!(chars_beyond("abcd", 4), None);
        assert_eq!(chars_beyond("abcde", 4), Some(5));
        // Six bytes, three characters: within a limit of four.
        assert_eq!(chars_beyond("中文", 4), None);
        assert_eq!(chars_beyond("中文中文中", 4), Some(5));
    }

    /// Shortening ASCII by its bytes gives what shortening by characters gives.
    #[test]
    fn ascii_is_shortened_as_characters_are() {
        for text in [
            "",
            "abc",
            "abcdefghij",
            "abcdefghijk",
            "abcdefgh  jk",
            "a\tb c d e f g",
        ] {
            for max in [0, 1, 2, 5, 10, 11, 20] {
                let line = one_line(text);
                let by_chars = match line.char_indices().nth(max) {
                    None => line.to_string(),
                    Some(_) => {
                        let cut: String = line.chars().take(max.saturating_sub(1)).collect();
                        format!("{}…", cut.trim_end())
                    }
                };
                assert_eq!(shortened(text, max), by_chars, "{text:?} {max}");
            }
        }
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
    // ASCII (most text): characters are bytes, so counting them is a length.
    if line.is_ascii() {
        return match line.get(..max.saturating_sub(1)) {
            Some(cut) if line.len() > max => Cow::Owned(format!("{}…", cut.trim_end())),
            _ => line,
        };
    }
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
    let mut out = String::new();
    push_named_item(&mut out, id, content);
    out
}

/// [`named_item`], added to `out`.
pub fn push_named_item(out: &mut String, id: &str, content: &str) {
    out.push_str(&shown_id(id));
    out.push(' ');
    push_quoted(out, &shortened(content, NAMED_ITEM_CHARS));
}

/// `text` quoted as `{:?}` quotes it (escapes for quotes, backslashes, controls and
/// characters that do not print), added to `out`. Printable ASCII without a quote or a
/// backslash (most text), ending or not with the `…` of a [`shortened`] text, needs no
/// escape and is copied as it is.
pub fn push_quoted(out: &mut String, text: &str) {
    let plain = text.strip_suffix('…').unwrap_or(text);
    if plain
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.reserve(text.len() + 2);
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        // Writing to a String cannot fail.
        let _ = write!(out, "{text:?}");
    }
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

    /// Quoting copies plain ASCII and escapes everything else exactly as `{:?}` does.
    #[test]
    fn quoting_is_debug_quoting() {
        for text in [
            "",
            "plain ASCII ~ ! 'single'",
            "a\"b",
            "back\\slash",
            "tab\tnew\nline",
            "\u{7f}\u{1f}",
            "中文 ✔",
            "\u{202e}bidi",
            "e\u{301}",
            "\u{ad}soft hyphen",
            "shortened…",
            "…",
            "a\"…",
            "……",
        ] {
            let mut out = String::from(">");
            push_quoted(&mut out, text);
            assert_eq!(out, format!(">{text:?}"), "{text:?}");
        }
        let mut named = String::new();
        push_named_item(&mut named, "a b", "x\"y");
        assert_eq!(named, named_item("a b", "x\"y"));
        assert_eq!(named, "\"a b\" \"x\\\"y\"");
    }
}
