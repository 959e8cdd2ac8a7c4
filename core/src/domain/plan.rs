//! The plan model: items, their four statuses, and the ordered plan.
//!
//! The serde forms are the wire format of the tool: an item is `{"id","content","status"}`
//! and a plan is a JSON array of items.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ids::ItemId;

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PlanItem {
    /// Chosen by the model; the key of the merge and of anti-cheat.
    pub id: ItemId,
    /// What to do, in the model's words.
    pub content: String,
    /// Where it stands.
    pub status: PlanStatus,
}

impl PlanItem {
    /// A new item.
    pub fn new(id: ItemId, content: impl Into<String>, status: PlanStatus) -> Self {
        Self {
            id,
            content: content.into(),
            status,
        }
    }
}

/// The ordered items of a session's plan. Ids are unique (the rules guarantee it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Plan {
    items: Vec<PlanItem>,
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
