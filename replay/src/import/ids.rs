//! Deriving stable item ids for sources that have none (Claude Code's current TodoWrite,
//! Codex's update_plan): each call replaces the whole list, so every item of a call is matched
//! to an item of the previous call.
//!
//! In order: (1) an id the source gives (old Claude Code todos have one) is kept; (2) an item
//! whose text equals a previous item's keeps that id; (2b) an item whose text equals an item
//! dropped earlier in the session gets that item's id back (a list restored after a rewind,
//! an item re-added); (3) an item whose text was edited keeps
//! the id of the previous item it most resembles, when it is clearly the same item: word
//! overlap (Jaccard over lower-cased words) of at least one half, ties going to the closer
//! position; (4) anything else is new and gets the next `t<N>` of the session.

use std::collections::{HashMap, HashSet};

use planlog_core::ItemId;

/// Word overlap at or above which an edited item is the same item.
pub const SAME_ITEM_SIMILARITY: f64 = 0.5;

/// The id assigner of one session.
#[derive(Debug, Default)]
pub struct ItemIds {
    prev: Vec<(ItemId, String)>,
    /// Text -> id of items dropped earlier.
    dropped: HashMap<String, ItemId>,
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
        let counter = plan
            .items()
            .iter()
            .filter_map(|i| i.id.as_str().strip_prefix('t')?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        Self {
            prev: plan
                .items()
                .iter()
                .map(|i| (i.id.clone(), i.content.clone()))
                .collect(),
            dropped: HashMap::new(),
            counter,
        }
    }

    /// Ids for one call's list: `(source id, content)` per item, in order.
    pub fn assign(&mut self, items: &[(Option<String>, String)]) -> Vec<ItemId> {
        let Matched {
            mut out,
            mut taken,
            mut used,
        } = match_previous(&self.prev, items);
        // (2b) equal text of an item dropped earlier.
        for (i, (_, content)) in items.iter().enumerate() {
            if out[i].is_some() {
                continue;
            }
            if let Some(id) = self.dropped.get(content)
                && !taken.contains(id)
                && !self.prev.iter().any(|(p, _)| p == id)
            {
                taken.insert(id.clone());
                out[i] = Some(id.clone());
            }
        }
        // (3) edited text: the most similar unused previous item, if clearly the same.
        for (i, (_, content)) in items.iter().enumerate() {
            if out[i].is_some() {
                continue;
            }
            let best = (0..self.prev.len())
                .filter(|&j| !used[j] && !taken.contains(&self.prev[j].0))
                .map(|j| (j, similarity(content, &self.prev[j].1)))
                .filter(|(_, s)| *s >= SAME_ITEM_SIMILARITY)
                .max_by(|(ja, sa), (jb, sb)| {
                    sa.total_cmp(sb)
                        .then_with(|| i.abs_diff(*jb).cmp(&i.abs_diff(*ja)))
                });
            if let Some((j, _)) = best {
                used[j] = true;
                taken.insert(self.prev[j].0.clone());
                out[i] = Some(self.prev[j].0.clone());
            }
        }
        // (4) new ids.
        let ids: Vec<ItemId> = out
            .into_iter()
            .map(|id| {
                id.unwrap_or_else(|| {
                    loop {
                        self.counter += 1;
                        // Invariant: "t" followed by digits is a valid item id.
                        if let Ok(id) = ItemId::new(format!("t{}", self.counter))
                            && taken.insert(id.clone())
                            && !self.prev.iter().any(|(p, _)| *p == id)
                        {
                            break id;
                        }
                    }
                })
            })
            .collect();
        let assigned: Vec<(ItemId, String)> = ids
            .iter()
            .cloned()
            .zip(items.iter().map(|(_, c)| c.clone()))
            .collect();
        self.observe(&assigned);
        ids
    }

    /// Takes in one list as it was recorded (its items' ids and texts), as if [`assign`]
    /// had given those ids: the next list is matched against it, items it dropped are
    /// remembered, and new ids continue after the highest `t<N>` seen. Replaying a session's
    /// recorded lists through this gives the state an import of the whole source had at that
    /// point, so a re-import of a source that grew (or a hook) goes on exactly as one import
    /// of the finished source would.
    ///
    /// [`assign`]: ItemIds::assign
    pub fn observe(&mut self, items: &[(ItemId, String)]) {
        for (id, content) in &self.prev {
            if !items.iter().any(|(i, _)| i == id) {
                self.dropped.insert(content.clone(), id.clone());
            }
        }
        for (id, _) in items {
            self.dropped.retain(|_, d| d != id);
            if let Some(n) = id
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

/// What rules (1) and (2) give, which depend on the previous list alone.
struct Matched {
    out: Vec<Option<ItemId>>,
    taken: HashSet<ItemId>,
    used: Vec<bool>,
}

/// Rules (1) and (2): source ids, and items whose text equals a previous item's.
fn match_previous(prev: &[(ItemId, String)], items: &[(Option<String>, String)]) -> Matched {
    let mut out: Vec<Option<ItemId>> = vec![None; items.len()];
    let mut taken: HashSet<ItemId> = HashSet::new();
    let mut used = vec![false; prev.len()];
    // (1) source ids.
    for (i, (source, _)) in items.iter().enumerate() {
        if let Some(id) = source.as_ref().and_then(|s| ItemId::new(s.clone()).ok())
            && taken.insert(id.clone())
        {
            if let Some(j) = prev.iter().position(|(p, _)| *p == id) {
                used[j] = true;
            }
            out[i] = Some(id);
        }
    }
    // (2) equal text.
    for (i, (_, content)) in items.iter().enumerate() {
        if out[i].is_some() {
            continue;
        }
        if let Some(j) = (0..prev.len())
            .find(|&j| !used[j] && prev[j].1 == *content && !taken.contains(&prev[j].0))
        {
            used[j] = true;
            taken.insert(prev[j].0.clone());
            out[i] = Some(prev[j].0.clone());
        }
    }
    Matched { out, taken, used }
}

/// The ids of a list every item of which keeps an id from `prev` (the previous list) by its
/// source id or its unchanged text: what [`ItemIds::assign`] gives after that list, whatever
/// came before it (the later rules, which need the session's history, are not reached).
/// `None` when some item is new or edited: then the whole history is needed.
pub fn keep_all(
    prev: &[(ItemId, String)],
    items: &[(Option<String>, String)],
) -> Option<Vec<ItemId>> {
    match_previous(prev, items).out.into_iter().collect()
}

/// Jaccard similarity of the lower-cased alphanumeric words of `a` and `b`.
pub fn similarity(a: &str, b: &str) -> f64 {
    let words = |s: &str| -> HashSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (wa, wb) = (words(a), words(b));
    if wa.is_empty() && wb.is_empty() {
        return 1.0;
    }
    let inter = wa.intersection(&wb).count() as f64;
    let union = wa.union(&wb).count() as f64;
    inter / union
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(ids: &mut ItemIds, contents: &[&str]) -> Vec<String> {
        let items: Vec<(Option<String>, String)> =
            contents.iter().map(|c| (None, (*c).to_owned())).collect();
        ids.assign(&items)
            .into_iter()
            .map(|i| i.to_string())
            .collect()
    }

    #[test]
    fn same_text_keeps_its_id_wherever_it_moves() {
        let mut ids = ItemIds::new();
        assert_eq!(
            call(&mut ids, &["Write the parser", "Test the parser"]),
            ["t1", "t2"]
        );
        assert_eq!(
            call(
                &mut ids,
                &["Test the parser", "Write the parser", "Ship it"]
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
                "Create Next.js project with create-next-app",
                "Set up Tailwind CSS",
            ],
        );
        assert_eq!(
            call(
                &mut ids,
                &[
                    "Create the Next.js project with create-next-app and TypeScript",
                    "Set up Tailwind CSS"
                ]
            ),
            ["t1", "t2"]
        );
        // A different task in the same slot is a new item.
        assert_eq!(
            call(&mut ids, &["Deploy to Vercel", "Set up Tailwind CSS"]),
            ["t3", "t2"]
        );
    }

    #[test]
    fn source_ids_are_kept_and_duplicates_made_unique() {
        let mut ids = ItemIds::new();
        let items = vec![
            (Some("1".to_owned()), "a".to_owned()),
            (Some("1".to_owned()), "b".to_owned()),
            (Some(" ".to_owned()), "c".to_owned()),
        ];
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
        assert_eq!(
            call(&mut ids, &["Parse", "Test", "Review"]),
            ["t1", "t2", "t3"]
        );
        assert_eq!(call(&mut ids, &["Parse", "Test"]), ["t1", "t2"]);
        assert_eq!(
            call(&mut ids, &["Parse", "Test", "Review"]),
            ["t1", "t2", "t3"]
        );
        assert_eq!(call(&mut ids, &["Ship"]), ["t4"]);
    }

    #[test]
    fn identical_texts_in_one_list_get_distinct_ids() {
        let mut ids = ItemIds::new();
        assert_eq!(call(&mut ids, &["Run tests", "Run tests"]), ["t1", "t2"]);
        assert_eq!(call(&mut ids, &["Run tests", "Run tests"]), ["t1", "t2"]);
    }
}
