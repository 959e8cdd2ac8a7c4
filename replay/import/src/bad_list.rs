//! [`BadList`]: why a plan tool's input holds no list planlog can read (every agent's list
//! tool: TodoWrite, update_plan, todowrite, write_todos).

/// Why a plan tool's input holds no list planlog can read. Its text is what a bad line's
/// message says after the tool's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadList {
    /// The arguments (a JSON text) are not JSON.
    #[error("arguments are not JSON ({detail})")]
    NotJson {
        /// The parser's words.
        detail: String,
    },
    /// The call has no arguments at all.
    #[error("no arguments")]
    NoArguments,
    /// No array where the tool keeps its list.
    #[error("no {key:?} array{where_}")]
    NoList {
        /// The key the list is under (`todos`, `plan`).
        key: &'static str,
        /// Where it was looked for, as a phrase starting with a space (` in its input`), or
        /// empty.
        where_: &'static str,
    },
    /// An entry without its text.
    #[error("{entry} {n} has no {key:?} string")]
    NoText {
        /// What the tool calls an entry (`todo`, `step`).
        entry: &'static str,
        /// Its position, from 1.
        n: usize,
        /// The key its text is under.
        key: &'static str,
    },
}

impl BadList {
    /// The array under `key` in `input`, or why there is none (`where_` as in
    /// [`BadList::NoList`]).
    pub(crate) fn list<'a>(
        input: &'a serde_json::Value,
        key: &'static str,
        where_: &'static str,
    ) -> Result<&'a [serde_json::Value], BadList> {
        input
            .get(key)
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .ok_or(BadList::NoList { key, where_ })
    }

    /// The string under `key` in the `n`th (from 1) `entry` of a list, or why there is none.
    pub(crate) fn text<'a>(
        item: &'a serde_json::Value,
        entry: &'static str,
        n: usize,
        key: &'static str,
    ) -> Result<&'a str, BadList> {
        item.get(key)
            .and_then(serde_json::Value::as_str)
            .ok_or(BadList::NoText { entry, n, key })
    }
}
