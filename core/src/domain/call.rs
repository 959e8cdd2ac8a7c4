//! Parsing plan_write arguments into a [`WriteCall`], with the strict input checks.
//!
//! harness9 accepts empty ids, empty content, any status and duplicate ids; we reject each
//! with a [`Rejection`] that names the step (REFERENCE-BEHAVIOUR.md § plan_write, rule 5).

use std::collections::HashMap;

use serde_json::Value;

use super::ids::ItemId;
use super::limits::{
    MAX_CONTENT_LEN, MAX_DESCRIPTION_LEN, MAX_METADATA_BYTES, MAX_OWNER_LEN, MAX_PLAN_ITEMS,
};
use super::plan::{PlanItem, PlanStatus};
use super::rejection::{Rejection, json_type};

/// A parsed plan_write call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteCall {
    /// `steps` missing, `null` or `[]`: return the plan, change nothing.
    Read,
    /// A non-empty list of well-formed steps, in submission order, ids unique.
    Write(Vec<PlanItem>),
}

impl WriteCall {
    /// Parses already-decoded arguments.
    ///
    /// # Errors
    /// A [`Rejection`] when the value fails the input checks.
    pub fn from_value(value: &Value) -> Result<Self, Rejection> {
        let obj = match value {
            Value::Object(o) => o,
            // `null` arguments mean "no arguments": a read, as when `steps` is missing.
            Value::Null => return Ok(WriteCall::Read),
            other => return Err(Rejection::arguments_not_object(json_type(other))),
        };
        if let Some(key) = obj.keys().find(|k| k.as_str() != "steps") {
            return Err(Rejection::unknown_argument(key));
        }
        let steps = match obj.get("steps") {
            None | Some(Value::Null) => return Ok(WriteCall::Read),
            Some(Value::Array(a)) if a.is_empty() => return Ok(WriteCall::Read),
            Some(Value::Array(a)) => a,
            Some(other) => return Err(Rejection::steps_not_array(json_type(other))),
        };
        if steps.len() > MAX_PLAN_ITEMS {
            return Err(Rejection::too_many_steps(steps.len()));
        }
        let mut items = Vec::with_capacity(steps.len());
        let mut seen: HashMap<ItemId, usize> = HashMap::with_capacity(steps.len());
        for (i, step) in steps.iter().enumerate() {
            let index = i + 1;
            let item = parse_step(index, step)?;
            if let Some(first) = seen.get(&item.id) {
                return Err(Rejection::duplicate_id(index, item.id.as_str(), *first));
            }
            seen.insert(item.id.clone(), index);
            items.push(item);
        }
        Ok(WriteCall::Write(items))
    }
}

/// The fields every item must have.
const REQUIRED: [&str; 3] = ["id", "content", "status"];
/// The optional fields (event format 2).
const OPTIONAL: [&str; 5] = [
    "description",
    "active_form",
    "owner",
    "blocked_by",
    "metadata",
];

fn parse_step(index: usize, step: &Value) -> Result<PlanItem, Rejection> {
    let obj = match step {
        Value::Object(o) => o,
        other => return Err(Rejection::step_not_object(index, json_type(other))),
    };
    // The raw id, for naming the step in later messages, when it is a usable string.
    let raw_id = obj
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| ItemId::new(*s).is_ok());
    if let Some(key) = obj
        .keys()
        .find(|k| !REQUIRED.contains(&k.as_str()) && !OPTIONAL.contains(&k.as_str()))
    {
        return Err(Rejection::unknown_field(index, raw_id, key));
    }
    let mut text = [""; 3];
    for (slot, field) in text.iter_mut().zip(REQUIRED) {
        *slot = match obj.get(field) {
            None => return Err(Rejection::missing_field(index, raw_id, field)),
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(Rejection::field_not_string(
                    index,
                    raw_id,
                    field,
                    json_type(other),
                ));
            }
        };
    }
    let [id, content, status] = text;
    let id = ItemId::new(id).map_err(|e| Rejection::bad_id(index, &e))?;
    if content.trim().is_empty() {
        return Err(Rejection::empty_content(index, id.as_str()));
    }
    let len = content.chars().count();
    if len > MAX_CONTENT_LEN {
        return Err(Rejection::content_too_long(index, id.as_str(), len));
    }
    let status = PlanStatus::from_wire(status)
        .ok_or_else(|| Rejection::unknown_status(index, id.as_str(), status))?;
    let mut item = PlanItem::new(id, content, status);
    let name = item.id.as_str().to_owned();
    let text_field = |field: &str, max: usize| -> Result<Option<String>, Rejection> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                let len = s.chars().count();
                if len > max {
                    Err(Rejection::field_too_long(index, &name, field, len, max))
                } else {
                    Ok(Some(s.clone()))
                }
            }
            Some(other) => Err(Rejection::field_not_string(
                index,
                Some(&name),
                field,
                json_type(other),
            )),
        }
    };
    // Present-but-empty values stay in the submission: they clear the field in the merge.
    item.description = text_field("description", MAX_DESCRIPTION_LEN)?;
    item.active_form = text_field("active_form", MAX_CONTENT_LEN)?;
    item.owner = text_field("owner", MAX_OWNER_LEN)?;
    item.blocked_by = match obj.get("blocked_by") {
        None | Some(Value::Null) => None,
        Some(Value::Array(list)) => {
            if list.len() > MAX_PLAN_ITEMS {
                return Err(Rejection::field_too_long(
                    index,
                    &name,
                    "blocked_by",
                    list.len(),
                    MAX_PLAN_ITEMS,
                ));
            }
            let mut ids: Vec<ItemId> = Vec::with_capacity(list.len());
            for v in list {
                let id = v
                    .as_str()
                    .and_then(|s| ItemId::new(s).ok())
                    .ok_or_else(|| Rejection::bad_blocker(index, &name))?;
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            Some(ids)
        }
        Some(other) => {
            return Err(Rejection::field_not_list(
                index,
                &name,
                "blocked_by",
                json_type(other),
            ));
        }
    };
    item.metadata = match obj.get("metadata") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => {
            let size = Value::Object(map.clone()).to_string().len();
            if size > MAX_METADATA_BYTES {
                return Err(Rejection::field_too_long(
                    index,
                    &name,
                    "metadata",
                    size,
                    MAX_METADATA_BYTES,
                ));
            }
            Some(map.clone())
        }
        Some(other) => {
            return Err(Rejection::metadata_not_object(
                index,
                &name,
                json_type(other),
            ));
        }
    };
    Ok(item)
}
