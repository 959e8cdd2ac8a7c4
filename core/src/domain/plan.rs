//! The plan model: items, their four statuses, and the ordered plan.
//!
//! The serde forms are the wire format of the tool: an item is `{"id","content","status"}`
//! and a plan is a JSON array of items.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::ids::ItemId;

/// Where an item stands (a new item is pending).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    #[default]
    Pending,
    /// Being worked on now.
    InProgress,
    /// Done.
    Completed,
    /// Abandoned on purpose.
    Cancelled,
}

impl PlanStatus {
    /// Every status, in wire order.
    pub const ALL: [PlanStatus; 4] = [
        PlanStatus::Pending,
        PlanStatus::InProgress,
        PlanStatus::Completed,
        PlanStatus::Cancelled,
    ];

    /// The wire name (`pending`, `in_progress`, `completed`, `cancelled`).
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Pending => "pending",
            PlanStatus::InProgress => "in_progress",
            PlanStatus::Completed => "completed",
            PlanStatus::Cancelled => "cancelled",
        }
    }

    /// Parses a wire name.
    pub fn from_wire(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Pending or in progress: still to be done, so injected into the model's view.
    pub fn is_active(self) -> bool {
        matches!(self, PlanStatus::Pending | PlanStatus::InProgress)
    }

    /// In progress or completed: work has begun, so the merge never drops it silently.
    pub fn is_started(self) -> bool {
        matches!(self, PlanStatus::InProgress | PlanStatus::Completed)
    }
}

impl fmt::Display for PlanStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One concrete action in the plan.
///
/// `id`, `content` and `status` are always there; the other fields (event format 2) are
/// optional and absent from the JSON when unset. In a plan they are normalised: never an
/// empty string, list or object. In a plan_write submission a present-but-empty field clears
/// the item's value, and an absent one keeps it (see [`crate::rules::merge`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PlanItem {
    /// Chosen by the model; the key of the merge and of anti-cheat.
    pub id: ItemId,
    /// What to do, in the model's words (Claude Code's `subject`).
    pub content: String,
    /// Where it stands.
    pub status: PlanStatus,
    /// A longer description of the work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The present-continuous form shown while it is in progress ("Running the tests").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// Who works on it (an agent of a team).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Items that must finish before this one (what an item blocks is derived, never stored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<Vec<ItemId>>,
    /// A small JSON object kept verbatim (e.g. an imported priority).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

impl PlanItem {
    /// A new item with no optional fields.
    pub fn new(id: ItemId, content: impl Into<String>, status: PlanStatus) -> Self {
        Self {
            id,
            content: content.into(),
            status,
            description: None,
            active_form: None,
            owner: None,
            blocked_by: None,
            metadata: None,
        }
    }

    /// The same item with these blockers (none when empty).
    pub fn with_blocked_by(mut self, blockers: Vec<ItemId>) -> Self {
        self.blocked_by = (!blockers.is_empty()).then_some(blockers);
        self
    }

    /// The same item with this owner (none when empty).
    pub fn with_owner(mut self, owner: impl Into<String>) -> Self {
        let owner = owner.into();
        self.owner = (!owner.is_empty()).then_some(owner);
        self
    }

    /// The same item with this description (none when empty).
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        let d = description.into();
        self.description = (!d.is_empty()).then_some(d);
        self
    }

    /// The same item with this active form (none when empty).
    pub fn with_active_form(mut self, active_form: impl Into<String>) -> Self {
        let a = active_form.into();
        self.active_form = (!a.is_empty()).then_some(a);
        self
    }

    /// The same item with this metadata (none when empty).
    pub fn with_metadata(mut self, metadata: serde_json::Map<String, serde_json::Value>) -> Self {
        self.metadata = (!metadata.is_empty()).then_some(metadata);
        self
    }

    /// The items this one waits for (empty when none).
    pub fn blockers(&self) -> &[ItemId] {
        self.blocked_by.as_deref().unwrap_or(&[])
    }

    /// True when any optional field (format 2) is set.
    pub fn has_extras(&self) -> bool {
        self.description.is_some()
            || self.active_form.is_some()
            || self.owner.is_some()
            || self.blocked_by.is_some()
            || self.metadata.is_some()
    }
}

/// The ordered items of a session's plan. Ids are unique (the rules guarantee it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Plan {
    #[serde(deserialize_with = "read_items")]
    items: Vec<PlanItem>,
}

/// Reads a list of items into a vector that starts with room for [`FIRST_ROOM`] of them
/// (serde's own starts empty and regrows, copying items, twice before a typical plan is
/// read: a measurable part of reading a long session).
pub(crate) fn read_items<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<PlanItem>, D::Error> {
    struct Items;
    impl<'de> serde::de::Visitor<'de> for Items {
        type Value = Vec<PlanItem>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of plan items")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<PlanItem>, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                if items.capacity() == 0 {
                    items.reserve(seq.size_hint().unwrap_or(0).clamp(FIRST_ROOM, 1024));
                }
                items.push(item);
            }
            Ok(items)
        }
    }
    d.deserialize_seq(Items)
}

/// Items a list read from JSON has room for once its first item is read.
const FIRST_ROOM: usize = 8;

/// A plan's items looked up by id ([`Plan::finder`]).
#[derive(Debug)]
pub enum ItemFinder<'a> {
    /// A short plan, scanned.
    Scan(&'a Plan),
    /// A long plan's items by id.
    Map(HashMap<&'a ItemId, &'a PlanItem>),
}

impl<'a> ItemFinder<'a> {
    /// The longest plan scanned rather than hashed.
    const SCAN_UP_TO: usize = 16;

    /// The item with this id.
    pub fn get(&self, id: &ItemId) -> Option<&'a PlanItem> {
        match self {
            ItemFinder::Scan(plan) => plan.items.iter().find(|it| &it.id == id),
            ItemFinder::Map(map) => map.get(id).copied(),
        }
    }
}

/// Counts of a plan's items by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Pending items.
    pub pending: usize,
    /// In-progress items.
    pub in_progress: usize,
    /// Completed items.
    pub completed: usize,
    /// Cancelled items.
    pub cancelled: usize,
}

impl Progress {
    /// All items.
    pub fn total(&self) -> usize {
        self.pending + self.in_progress + self.completed + self.cancelled
    }

    /// Pending plus in progress.
    pub fn active(&self) -> usize {
        self.pending + self.in_progress
    }
}

impl Plan {
    /// An empty plan.
    pub fn new() -> Self {
        Self::default()
    }

    /// A plan of these items, in this order. The caller guarantees ids are unique
    /// (every constructor in the rules does).
    pub fn from_items(items: Vec<PlanItem>) -> Self {
        Self { items }
    }

    /// The items in plan order.
    pub fn items(&self) -> &[PlanItem] {
        &self.items
    }

    /// Consumes the plan into its items.
    pub fn into_items(self) -> Vec<PlanItem> {
        self.items
    }

    /// The item with this id, if any.
    pub fn get(&self, id: &ItemId) -> Option<&PlanItem> {
        self.items.iter().find(|it| &it.id == id)
    }

    /// A way to look up many of this plan's items by id: a scan for a short plan (cheaper
    /// than hashing), a hash map for a long one.
    pub fn finder(&self) -> ItemFinder<'_> {
        if self.items.len() <= ItemFinder::SCAN_UP_TO {
            ItemFinder::Scan(self)
        } else {
            ItemFinder::Map(self.items.iter().map(|it| (&it.id, it)).collect())
        }
    }

    /// The ids of the items `id` blocks (derived from every item's `blocked_by`).
    pub fn blocks(&self, id: &ItemId) -> Vec<&ItemId> {
        self.items
            .iter()
            .filter(|it| it.blockers().contains(id))
            .map(|it| &it.id)
            .collect()
    }

    /// The blockers of `item` that are not completed yet.
    pub fn open_blockers<'a>(&'a self, item: &'a PlanItem) -> Vec<&'a ItemId> {
        item.blockers()
            .iter()
            .filter(|b| {
                self.get(b)
                    .is_none_or(|it| it.status != PlanStatus::Completed)
            })
            .collect()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when the plan has no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Counts by status.
    pub fn progress(&self) -> Progress {
        let mut p = Progress::default();
        for it in &self.items {
            match it.status {
                PlanStatus::Pending => p.pending += 1,
                PlanStatus::InProgress => p.in_progress += 1,
                PlanStatus::Completed => p.completed += 1,
                PlanStatus::Cancelled => p.cancelled += 1,
            }
        }
        p
    }

    /// (pending + in_progress, total): harness9's `ActiveCount`.
    pub fn active_count(&self) -> (usize, usize) {
        let p = self.progress();
        (p.active(), p.total())
    }

    /// The plan as the JSON array plan_write returns (`[]` when empty, never `null`).
    pub fn to_json(&self) -> String {
        super::canonical::plain_json(&self.items, "a plan")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_serialize_in_snake_case() {
        let json = serde_json::to_string(&PlanStatus::ALL).unwrap();
        assert_eq!(json, r#"["pending","in_progress","completed","cancelled"]"#);
    }

    #[test]
    fn empty_plan_is_an_empty_array() {
        assert_eq!(Plan::new().to_json(), "[]");
    }

    #[test]
    fn item_wire_form_is_id_content_status() {
        let it = PlanItem::new(
            ItemId::new("1").unwrap(),
            "Write it",
            PlanStatus::InProgress,
        );
        assert_eq!(
            serde_json::to_string(&it).unwrap(),
            r#"{"id":"1","content":"Write it","status":"in_progress"}"#
        );
    }
}
