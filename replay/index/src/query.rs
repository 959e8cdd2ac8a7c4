//! What the index answers: a session's marks, its minimap buckets, the next or previous mark
//! of some kinds, and search over item texts and marks.

use planlog_core::SessionId;
use redb::{ReadableDatabase, ReadableTable};

use crate::tables::{MARKS, TEXTS};
use crate::{Index, IndexError};

/// What a mark says happened at its seq.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkKind {
    /// A plan call was refused (`write_rejected`).
    Refusal,
    /// A write was accepted but breaks one of the rules (a bulk completion, say).
    Flag,
    /// The agent's context was compacted.
    Compaction,
    /// The plan was put back into the agent's context.
    Restore,
}

impl MarkKind {
    /// Every kind.
    pub const ALL: [MarkKind; 4] = [Self::Refusal, Self::Flag, Self::Compaction, Self::Restore];

    /// The kind's word in the API (`refusal`, `flag`, `compaction`, `restore`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Refusal => "refusal",
            Self::Flag => "flag",
            Self::Compaction => "compaction",
            Self::Restore => "restore",
        }
    }

    /// The kind a word names.
    pub fn from_word(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == word)
    }

    pub(crate) fn byte(self) -> u8 {
        match self {
            Self::Refusal => 1,
            Self::Flag => 2,
            Self::Compaction => 3,
            Self::Restore => 4,
        }
    }

    fn from_byte(b: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.byte() == b)
    }
}

/// One mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The event's seq.
    pub seq: u64,
    /// What happened.
    pub kind: MarkKind,
    /// In words (a refusal's code and message, a flag's description).
    pub text: String,
}

/// A stretch of a session's seqs on the minimap, with its marks counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bucket {
    /// First seq.
    pub from: u64,
    /// Last seq.
    pub to: u64,
    /// Marks of each kind, in [`MarkKind::ALL`]'s order.
    pub counts: [u64; 4],
}

/// A content an item had, and the seqs it had it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemText {
    /// The item's text.
    pub content: String,
    /// The first seq with it.
    pub first: u64,
    /// The last seq with it (indexed so far).
    pub last: u64,
}

/// A search hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hit {
    /// An item whose text matched, with each matching text it had.
    Item {
        /// The session.
        session: String,
        /// The item's id.
        item: String,
        /// Its matching texts.
        texts: Vec<ItemText>,
    },
    /// A refusal or flag whose words matched.
    Mark {
        /// The session.
        session: String,
        /// The mark.
        mark: Mark,
    },
}

/// One row of the marks table as a range gives it.
type MarkRow<'a> = Result<
    (
        redb::AccessGuard<'a, (&'static str, u64)>,
        redb::AccessGuard<'a, (u8, &'static str)>,
    ),
    redb::StorageError,
>;

/// Case-insensitive `contains` for a needle already in lower case (no allocation for ASCII).
fn contains(hay: &str, needle: &str) -> bool {
    if hay.is_ascii() && needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
    } else {
        hay.to_lowercase().contains(needle)
    }
}

impl Index {
    /// The marks of `session` in `from..=to`, at most `limit`.
    pub fn marks(
        &self,
        session: &SessionId,
        from: u64,
        to: u64,
        limit: usize,
    ) -> Result<Vec<Mark>, IndexError> {
        let id = session.as_str();
        let read = self.db.begin_read().map_err(|e| self.file_err(e))?;
        let t = read.open_table(MARKS).map_err(|e| self.file_err(e))?;
        let mut out = Vec::new();
        for row in t
            .range((id, from)..=(id, to))
            .map_err(|e| self.file_err(e))?
        {
            if out.len() >= limit {
                break;
            }
            let (k, v) = row.map_err(|e| self.file_err(e))?;
            if let Some(kind) = MarkKind::from_byte(v.value().0) {
                out.push(Mark {
                    seq: k.value().1,
                    kind,
                    text: v.value().1.to_owned(),
                });
            }
        }
        Ok(out)
    }

    /// `session`'s seqs `1..=last` in at most `count` equal buckets, with their marks counted.
    pub fn buckets(
        &self,
        session: &SessionId,
        last: u64,
        count: u64,
    ) -> Result<Vec<Bucket>, IndexError> {
        if last == 0 || count == 0 {
            return Ok(Vec::new());
        }
        let size = last.div_ceil(count);
        let mut out: Vec<Bucket> = (0..last.div_ceil(size))
            .map(|b| Bucket {
                from: b * size + 1,
                to: ((b + 1) * size).min(last),
                counts: [0; 4],
            })
            .collect();
        let id = session.as_str();
        let read = self.db.begin_read().map_err(|e| self.file_err(e))?;
        let t = read.open_table(MARKS).map_err(|e| self.file_err(e))?;
        for row in t
            .range((id, 1)..=(id, last))
            .map_err(|e| self.file_err(e))?
        {
            let (k, v) = row.map_err(|e| self.file_err(e))?;
            let b = usize::try_from((k.value().1 - 1) / size).unwrap_or(usize::MAX);
            if let (Some(bucket), Some(kind)) = (out.get_mut(b), MarkKind::from_byte(v.value().0)) {
                let i = MarkKind::ALL.iter().position(|k| *k == kind).unwrap_or(0);
                bucket.counts[i] += 1;
            }
        }
        Ok(out)
    }

    /// The first mark of one of `kinds` after `seq` (`forward`) or the last before it.
    pub fn next_mark(
        &self,
        session: &SessionId,
        seq: u64,
        forward: bool,
        kinds: &[MarkKind],
    ) -> Result<Option<Mark>, IndexError> {
        let id = session.as_str();
        let read = self.db.begin_read().map_err(|e| self.file_err(e))?;
        let t = read.open_table(MARKS).map_err(|e| self.file_err(e))?;
        let range = if forward {
            t.range((id, seq.saturating_add(1))..=(id, u64::MAX))
        } else {
            t.range((id, 0)..(id, seq))
        }
        .map_err(|e| self.file_err(e))?;
        let wanted = |row: &MarkRow<'_>| {
            row.as_ref()
                .map(|(_, v)| MarkKind::from_byte(v.value().0).is_some_and(|k| kinds.contains(&k)))
                .unwrap_or(true)
        };
        let found = if forward {
            range.into_iter().find(wanted)
        } else {
            range.into_iter().rev().find(wanted)
        };
        match found {
            None => Ok(None),
            Some(row) => {
                let (k, v) = row.map_err(|e| self.file_err(e))?;
                Ok(MarkKind::from_byte(v.value().0).map(|kind| Mark {
                    seq: k.value().1,
                    kind,
                    text: v.value().1.to_owned(),
                }))
            }
        }
    }

    /// Items whose text holds `needle` (case-insensitive), grouped per item and session,
    /// then refusals and flags whose words hold it; at most `limit` hits.
    pub fn search(&self, needle: &str, limit: usize) -> Result<Vec<Hit>, IndexError> {
        let needle = needle.to_lowercase();
        let read = self.db.begin_read().map_err(|e| self.file_err(e))?;
        let texts = read.open_table(TEXTS).map_err(|e| self.file_err(e))?;
        let mut hits: Vec<Hit> = Vec::new();
        for row in texts.iter().map_err(|e| self.file_err(e))? {
            let (k, v) = row.map_err(|e| self.file_err(e))?;
            let (session, item, content) = k.value();
            if !contains(content, &needle) && !contains(item, &needle) {
                continue;
            }
            let text = ItemText {
                content: content.to_owned(),
                first: v.value().0,
                last: v.value().1,
            };
            let full = hits.len() >= limit;
            match hits.last_mut() {
                Some(Hit::Item {
                    session: s,
                    item: i,
                    texts,
                }) if s == session && i == item => {
                    texts.push(text);
                }
                _ if full => break,
                _ => hits.push(Hit::Item {
                    session: session.to_owned(),
                    item: item.to_owned(),
                    texts: vec![text],
                }),
            }
        }
        let marks = read.open_table(MARKS).map_err(|e| self.file_err(e))?;
        for row in marks.iter().map_err(|e| self.file_err(e))? {
            if hits.len() >= limit {
                break;
            }
            let (k, v) = row.map_err(|e| self.file_err(e))?;
            let (kind, text) = v.value();
            let Some(kind) = MarkKind::from_byte(kind) else {
                continue;
            };
            if matches!(kind, MarkKind::Refusal | MarkKind::Flag)
                && (contains(text, &needle) || contains(kind.as_str(), &needle))
            {
                hits.push(Hit::Mark {
                    session: k.value().0.to_owned(),
                    mark: Mark {
                        seq: k.value().1,
                        kind,
                        text: text.to_owned(),
                    },
                });
            }
        }
        Ok(hits)
    }
}
