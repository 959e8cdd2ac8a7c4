//! Deriving stable item ids for whole lists (Claude Code's TodoWrite, Codex's update_plan,
//! opencode's todowrite, Gemini's write_todos): each call replaces the whole list, so every
//! item of a call is matched to an item of the previous call, or is new.
//!
//! A wrong match invents history: a new task drawn as a finished one reopened, a new plan
//! drawn as the old plan rewritten. So a match needs evidence, and more of it where the match
//! would reopen an item that was done (completed or cancelled before, active now):
//!
//! 1. an id the source gives (old Claude Code and opencode todos have one) that a previous
//!    item has: the same item, unless that would reopen it without the same text or a text
//!    at least [`REOPEN_SIMILARITY`] alike (models number each new plan from "1" again);
//! 2. the same text as a previous item: the same item;
//! 3. the same text as an item dropped earlier in the session: that item, back (a list
//!    restored after a rewind, an item re-added);
//! 4. an edited text: the most alike unused previous item, when at least
//!    [`SAME_ITEM_SIMILARITY`] alike ([`REOPEN_SIMILARITY`] when it would reopen it), ties
//!    going to the closer position;
//! 5. anything else is new: it keeps the source's id when no item of the session ever had
//!    it, else it gets the session's next `t<N>`.
//!
//! Texts are compared as sets of tokens ([`similarity`]): lower-cased words, and for scripts
//! written without spaces (Chinese, Japanese, Thai, …) pairs of adjacent characters, so an
//! edit of a Chinese item is seen as an edit.

use std::collections::{HashMap, HashSet};

use planlog_core::{ItemId, PlanStatus};

/// How alike (Jaccard over [`tokens`]) an edited text must be to its previous text to be the
/// same item.
pub(crate) const SAME_ITEM_SIMILARITY: f64 = 0.5;

/// How alike it must be when taking it for the same item would reopen a finished one.
pub(crate) const REOPEN_SIMILARITY: f64 = 0.8;

/// One item of a list as the source sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The source's own id, when it gives one.
    pub source: Option<String>,
    /// The text.
    pub content: String,
    /// The status.
    pub status: PlanStatus,
}

/// One item of a list as recorded: its id, text and status.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Listed {
    /// Its id.
    pub id: ItemId,
    /// Its text.
    pub content: String,
    /// Its status.
    pub status: PlanStatus,
}

impl From<&planlog_core::PlanItem> for Listed {
    fn from(item: &planlog_core::PlanItem) -> Self {
        Self {
            id: item.id.clone(),
            content: item.content.clone(),
            status: item.status,
        }
    }
}

/// The id assigner of one session.
#[derive(Debug, Default, Clone)]
pub struct ItemIds {
    prev: Vec<Listed>,
    /// Text -> id of items dropped earlier.
    dropped: HashMap<String, ItemId>,
    /// The same, id -> text: each id is in `dropped` at most once (an id is dropped again
    /// only after it came back, which forgets it), so finding and forgetting it by id takes
    /// one lookup, not a walk of every item the session ever dropped.
    dropped_ids: HashMap<ItemId, String>,
    counter: u64,
}

impl ItemIds {
    /// A fresh assigner.
    pub fn new() -> Self {
        Self::default()
    }

    /// An assigner that goes on from a plan imported before (a re-import of a source that
    /// grew): its items are the previous call's, and new ids continue after its highest
    /// `t<N>`.
    pub fn resume(plan: &planlog_core::Plan) -> Self {
        let mut ids = Self::default();
        ids.observe(&plan.items().iter().map(Listed::from).collect::<Vec<_>>());
        ids
    }

    /// Its state, as the history cache keeps it: the last list, the items dropped before it
    /// (text, id) and the highest `t<N>` issued.
    pub(crate) fn parts(&self) -> (&[Listed], Vec<(String, ItemId)>, u64) {
        let mut dropped: Vec<(String, ItemId)> = self
            .dropped
            .iter()
            .map(|(text, id)| (text.clone(), id.clone()))
            .collect();
        dropped.sort();
        (&self.prev, dropped, self.counter)
    }

    /// The assigner whose [`parts`](ItemIds::parts) these are.
    pub(crate) fn from_parts(
        prev: Vec<Listed>,
        dropped: Vec<(String, ItemId)>,
        counter: u64,
    ) -> Self {
        let mut ids = Self {
            prev,
            counter,
            ..Self::default()
        };
        for (text, id) in dropped {
            ids.remember_dropped(text, id);
        }
        ids
    }

    /// Ids for one call's list, in order.
    pub fn assign(&mut self, items: &[Sent]) -> Vec<ItemId> {
        let Matched {
            mut out,
            mut taken,
            mut used,
        } = match_previous(&self.prev, items);
        // (3) equal text of an item dropped earlier.
        for (i, sent) in items.iter().enumerate() {
            if out[i].is_some() {
                continue;
            }
            if let Some(id) = self.dropped.get(&sent.content)
                && !taken.contains(id)
                && !self.prev.iter().any(|p| p.id == *id)
            {
                taken.insert(id.clone());
                out[i] = Some(id.clone());
            }
        }
        // (4) edited text: the most alike unused previous item, if clearly the same (tokens
        // are made only when some item is left to match: most calls change statuses only).
        let mut prev_tokens: Vec<Option<HashSet<String>>> = vec![None; self.prev.len()];
        for (i, sent) in items.iter().enumerate() {
            if out[i].is_some() {
                continue;
            }
            let mine = tokens(&sent.content);
            let best = (0..self.prev.len())
                .filter(|&j| !used[j] && !taken.contains(&self.prev[j].id))
                .map(|j| {
                    let theirs =
                        prev_tokens[j].get_or_insert_with(|| tokens(&self.prev[j].content));
                    (j, jaccard(&mine, theirs))
                })
                .filter(|(j, s)| *s >= needed(&self.prev[*j], sent))
                .max_by(|(ja, sa), (jb, sb)| {
                    sa.total_cmp(sb)
                        .then_with(|| i.abs_diff(*jb).cmp(&i.abs_diff(*ja)))
                });
            if let Some((j, _)) = best {
                used[j] = true;
                taken.insert(self.prev[j].id.clone());
                out[i] = Some(self.prev[j].id.clone());
            }
        }
        // (5) new: the source's id when the session never had it, else the next `t<N>`.
        let ids: Vec<ItemId> = out
            .into_iter()
            .zip(items)
            .map(|(id, sent)| {
                if let Some(id) = id {
                    return id;
                }
                if let Some(own) = sent
                    .source
                    .as_ref()
                    .and_then(|s| ItemId::new(s.clone()).ok())
                    && self.is_free(&own, &taken)
                {
                    taken.insert(own.clone());
                    return own;
                }
                loop {
                    self.counter += 1;
                    // Invariant: "t" followed by digits is a valid item id.
                    if let Ok(id) = ItemId::new(format!("t{}", self.counter))
                        && self.is_free(&id, &taken)
                    {
                        taken.insert(id.clone());
                        break id;
                    }
                }
            })
            .collect();
        let assigned: Vec<Listed> = ids
            .iter()
            .zip(items)
            .map(|(id, sent)| Listed {
                id: id.clone(),
                content: sent.content.clone(),
                status: sent.status,
            })
            .collect();
        self.observe(&assigned);
        ids
    }

    /// Forgets that `id` was dropped (it is back, or dropped again with another text).
    /// Remembers that the item `id` with text `text` was dropped (an item dropped before
    /// with the same text is forgotten: the text now brings back this one).
    fn remember_dropped(&mut self, text: String, id: ItemId) {
        self.forget_dropped(&id);
        if let Some(other) = self.dropped.insert(text.clone(), id.clone()) {
            self.dropped_ids.remove(&other);
        }
        self.dropped_ids.insert(id, text);
    }

    fn forget_dropped(&mut self, id: &ItemId) {
        if let Some(text) = self.dropped_ids.remove(id)
            && self.dropped.get(&text) == Some(id)
        {
            self.dropped.remove(&text);
        }
    }

    /// Whether `id` is one no item of the session had (as far as this assigner knows).
    fn is_free(&self, id: &ItemId, taken: &HashSet<ItemId>) -> bool {
        !taken.contains(id)
            && !self.prev.iter().any(|p| p.id == *id)
            && !self.dropped_ids.contains_key(id)
    }

    /// Takes in one list as it was recorded, as if [`assign`] had given those ids: the next
    /// list is matched against it, items it dropped are remembered, and new ids continue
    /// after the highest `t<N>` seen. Replaying a session's recorded lists through this gives
    /// the state an import of the whole source had at that point, so a re-import of a source
    /// that grew (or a hook) goes on exactly as one import of the finished source would.
    ///
    /// [`assign`]: ItemIds::assign
    pub fn observe(&mut self, items: &[Listed]) {
        let gone: Vec<Listed> = self
            .prev
            .iter()
            .filter(|p| !items.iter().any(|i| i.id == p.id))
            .cloned()
            .collect();
        for p in gone {
            self.remember_dropped(p.content, p.id);
        }
        for item in items {
            self.forget_dropped(&item.id);
            if let Some(n) = item
                .id
                .as_str()
                .strip_prefix('t')
                .and_then(|n| n.parse::<u64>().ok())
            {
                self.counter = self.counter.max(n);
            }
        }
        self.prev = items.to_vec();
    }
}

/// Whether taking `prev` for `sent` would reopen it: done before, active now.
fn reopens(prev: &Listed, sent: &Sent) -> bool {
    !prev.status.is_active() && sent.status.is_active()
}

/// How alike `sent`'s text must be to `prev`'s to be the same item.
fn needed(prev: &Listed, sent: &Sent) -> f64 {
    if reopens(prev, sent) {
        REOPEN_SIMILARITY
    } else {
        SAME_ITEM_SIMILARITY
    }
}

/// What rules (1) and (2) give, which depend on the previous list alone.
struct Matched {
    out: Vec<Option<ItemId>>,
    taken: HashSet<ItemId>,
    used: Vec<bool>,
}

/// Rules (1) and (2): source ids a previous item has (with the evidence a reopening needs),
/// and items whose text equals a previous item's.
fn match_previous(prev: &[Listed], items: &[Sent]) -> Matched {
    let mut out: Vec<Option<ItemId>> = vec![None; items.len()];
    let mut taken: HashSet<ItemId> = HashSet::new();
    let mut used = vec![false; prev.len()];
    // (1) source ids.
    for (i, sent) in items.iter().enumerate() {
        let Some(id) = sent
            .source
            .as_ref()
            .and_then(|s| ItemId::new(s.clone()).ok())
        else {
            continue;
        };
        let Some(j) = prev.iter().position(|p| p.id == id) else {
            continue;
        };
        let same = !reopens(&prev[j], sent)
            || prev[j].content == sent.content
            || similarity(&prev[j].content, &sent.content) >= REOPEN_SIMILARITY;
        if same && !used[j] && taken.insert(id.clone()) {
            used[j] = true;
            out[i] = Some(id);
        }
    }
    // (2) equal text.
    for (i, sent) in items.iter().enumerate() {
        if out[i].is_some() {
            continue;
        }
        if let Some(j) = (0..prev.len())
            .find(|&j| !used[j] && prev[j].content == sent.content && !taken.contains(&prev[j].id))
        {
            used[j] = true;
            taken.insert(prev[j].id.clone());
            out[i] = Some(prev[j].id.clone());
        }
    }
    Matched { out, taken, used }
}

/// The ids of a list every item of which keeps an id from `prev` (the previous list) by its
/// source id or its unchanged text: what [`ItemIds::assign`] gives after that list, whatever
/// came before it (the later rules, which need the session's history, are not reached).
/// `None` when some item is new or edited: then the whole history is needed.
pub(crate) fn keep_all(prev: &[Listed], items: &[Sent]) -> Option<Vec<ItemId>> {
    match_previous(prev, items).out.into_iter().collect()
}

/// Whether `c` belongs to a script written without spaces between words (Han, Hiragana,
/// Katakana, Hangul syllables, Thai, Lao, Khmer, Myanmar, Tibetan).
fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x0F00..=0x0FFF // Tibetan
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x31F0..=0x31FF // Katakana extensions
        | 0x3400..=0x4DBF // Han extension A
        | 0x4E00..=0x9FFF // Han
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xF900..=0xFAFF // Han compatibility
        | 0x20000..=0x2FA1F // Han extensions B and later
    )
}

/// The tokens a text is compared by: its lower-cased words (runs of letters and digits), and
/// for runs of characters of scripts written without spaces, each pair of adjacent
/// characters (a run of one character is itself).
pub(crate) fn tokens(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut word = String::new();
    let mut run: Vec<char> = Vec::new();
    let flush_run = |run: &mut Vec<char>, out: &mut HashSet<String>| {
        match run.len() {
            0 => {}
            1 => {
                out.insert(run[0].to_string());
            }
            _ => {
                for pair in run.windows(2) {
                    out.insert(pair.iter().collect());
                }
            }
        }
        run.clear();
    };
    for c in text.chars() {
        if unspaced(c) {
            if !word.is_empty() {
                out.insert(std::mem::take(&mut word));
            }
            run.push(c);
        } else if c.is_alphanumeric() {
            flush_run(&mut run, &mut out);
            word.extend(c.to_lowercase());
        } else {
            flush_run(&mut run, &mut out);
            if !word.is_empty() {
                out.insert(std::mem::take(&mut word));
            }
        }
    }
    flush_run(&mut run, &mut out);
    if !word.is_empty() {
        out.insert(word);
    }
    out
}

/// Jaccard similarity of two token sets (two empty sets are alike).
fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let inter = a.intersection(b).count() as f64;
    let union = a.union(b).count() as f64;
    inter / union
}

/// How alike two texts are: the Jaccard similarity of their tokens (lower-cased words; for
/// scripts written without spaces, pairs of characters), from 0 (nothing shared) to 1.
pub fn similarity(a: &str, b: &str) -> f64 {
    jaccard(&tokens(a), &tokens(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(ids: &mut ItemIds, items: &[(&str, &str)]) -> Vec<String> {
        let items: Vec<Sent> = items
            .iter()
            .map(|(c, s)| Sent {
                source: None,
                content: (*c).to_owned(),
                status: PlanStatus::from_wire(s).unwrap(),
            })
            .collect();
        ids.assign(&items)
            .into_iter()
            .map(|i| i.to_string())
            .collect()
    }

    #[test]
    fn same_text_keeps_its_id_wherever_it_moves() {
        let mut ids = ItemIds::new();
        assert_eq!(
            call(
                &mut ids,
                &[
                    ("Write the parser", "pending"),
                    ("Test the parser", "pending")
                ]
            ),
            ["t1", "t2"]
        );
        assert_eq!(
            call(
                &mut ids,
                &[
                    ("Test the parser", "pending"),
                    ("Write the parser", "pending"),
                    ("Ship it", "pending")
                ]
            ),
            ["t2", "t1", "t3"]
        );
    }

    #[test]
    fn an_edited_item_keeps_its_id_when_clearly_the_same() {
        let mut ids = ItemIds::new();
        call(
            &mut ids,
            &[
                ("Create Next.js project with create-next-app", "in_progress"),
                ("Set up Tailwind CSS", "pending"),
            ],
        );
        assert_eq!(
            call(
                &mut ids,
                &[
                    (
                        "Create the Next.js project with create-next-app and TypeScript",
                        "in_progress"
                    ),
                    ("Set up Tailwind CSS", "pending")
                ]
            ),
            ["t1", "t2"]
        );
        // A different task in the same slot is a new item.
        assert_eq!(
            call(
                &mut ids,
                &[
                    ("Deploy to Vercel", "pending"),
                    ("Set up Tailwind CSS", "pending")
                ]
            ),
            ["t3", "t2"]
        );
    }

    #[test]
    fn a_finished_item_is_reopened_only_on_strong_evidence() {
        let mut ids = ItemIds::new();
        call(
            &mut ids,
            &[("Add tests and docs", "completed"), ("Ship", "in_progress")],
        );
        // Half alike is not enough to reopen a finished item: it is a new one.
        assert_eq!(
            call(
                &mut ids,
                &[
                    ("Add tests and docs", "completed"),
                    ("Ship", "in_progress"),
                    ("Add tests + docs for filters", "pending")
                ]
            ),
            ["t1", "t2", "t3"]
        );
        // Half alike is enough while it stays done (an edit of a finished item).
        assert_eq!(
            call(
                &mut ids,
                &[
                    ("Add the tests and docs", "completed"),
                    ("Ship", "completed"),
                    ("Add tests + docs for filters", "pending")
                ]
            ),
            ["t1", "t2", "t3"]
        );
        // The same text may reopen it.
        assert_eq!(
            call(
                &mut ids,
                &[
                    ("Add the tests and docs", "in_progress"),
                    ("Ship", "completed"),
                    ("Add tests + docs for filters", "pending")
                ]
            ),
            ["t1", "t2", "t3"]
        );
    }

    #[test]
    fn a_new_plan_numbered_from_one_again_is_a_new_plan() {
        let mut ids = ItemIds::new();
        let sent = |id: &str, c: &str, s: PlanStatus| Sent {
            source: Some(id.to_owned()),
            content: c.to_owned(),
            status: s,
        };
        let first = ids.assign(&[
            sent("1", "Explore codebase structure", PlanStatus::Completed),
            sent("2", "Create CLAUDE.md", PlanStatus::Completed),
        ]);
        assert_eq!(
            first,
            [ItemId::new("1").unwrap(), ItemId::new("2").unwrap()]
        );
        // The model numbers its next plan from "1" again: new items, new ids.
        let next = ids.assign(&[
            sent("1", "Examine example.jsonl", PlanStatus::InProgress),
            sent("2", "Design the parser", PlanStatus::Pending),
        ]);
        assert_eq!(
            next,
            [ItemId::new("t1").unwrap(), ItemId::new("t2").unwrap()]
        );
        // And those keep theirs as they go on (same text, the source's "1" again).
        let then = ids.assign(&[
            sent("1", "Examine example.jsonl", PlanStatus::Completed),
            sent("2", "Design the parser", PlanStatus::InProgress),
        ]);
        assert_eq!(then, next);
        // A source id the previous list has, on an active item, is that item (an edit).
        let edited = ids.assign(&[
            sent("1", "Examine example.jsonl", PlanStatus::Completed),
            sent(
                "t2",
                "Design the JSONL parser and its types",
                PlanStatus::InProgress,
            ),
        ]);
        assert_eq!(edited, next);
    }

    #[test]
    fn text_without_spaces_is_compared_by_character_pairs() {
        assert!(similarity("实现用户登录功能", "实现用户登录和注册功能") >= SAME_ITEM_SIMILARITY);
        assert!(similarity("实现用户登录功能", "编写部署文档") < 0.1);
        assert!(similarity("ユーザー登録を実装する", "ユーザー登録とログインを実装する") >= 0.5);
        let mut ids = ItemIds::new();
        call(
            &mut ids,
            &[("实现用户登录功能", "in_progress"), ("编写测试", "pending")],
        );
        assert_eq!(
            call(
                &mut ids,
                &[
                    ("实现用户登录和注册功能", "completed"),
                    ("编写测试", "in_progress")
                ]
            ),
            ["t1", "t2"]
        );
        // Mixed text: words and pairs together.
        assert_eq!(
            tokens("Fix 登录 bug"),
            ["fix", "登录", "bug"]
                .map(str::to_owned)
                .into_iter()
                .collect()
        );
    }

    #[test]
    fn source_ids_are_kept_and_duplicates_made_unique() {
        let mut ids = ItemIds::new();
        let items: Vec<Sent> = [("1", "a"), ("1", "b"), (" ", "c")]
            .iter()
            .map(|(s, c)| Sent {
                source: Some((*s).to_owned()),
                content: (*c).to_owned(),
                status: PlanStatus::Pending,
            })
            .collect();
        let got: Vec<String> = ids
            .assign(&items)
            .into_iter()
            .map(|i| i.to_string())
            .collect();
        assert_eq!(got, ["1", "t1", "t2"]);
    }

    #[test]
    fn an_item_dropped_and_brought_back_gets_its_id_again() {
        let mut ids = ItemIds::new();
        let p = |c: &'static str| (c, "pending");
        assert_eq!(
            call(&mut ids, &[p("Parse"), p("Test"), p("Review")]),
            ["t1", "t2", "t3"]
        );
        assert_eq!(call(&mut ids, &[p("Parse"), p("Test")]), ["t1", "t2"]);
        assert_eq!(
            call(&mut ids, &[p("Parse"), p("Test"), p("Review")]),
            ["t1", "t2", "t3"]
        );
        assert_eq!(call(&mut ids, &[p("Ship")]), ["t4"]);
    }

    #[test]
    fn identical_texts_in_one_list_get_distinct_ids() {
        let mut ids = ItemIds::new();
        let p = ("Run tests", "pending");
        assert_eq!(call(&mut ids, &[p, p]), ["t1", "t2"]);
        assert_eq!(call(&mut ids, &[p, p]), ["t1", "t2"]);
    }
}
