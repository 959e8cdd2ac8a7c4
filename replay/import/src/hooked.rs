//! What hooks recorded without the source's own ids, found again when the source is imported:
//! a compaction a Claude Code hook saw before its boundary line was written, and a plan call
//! an agent's hook saw without a call id (Gemini CLI's `AfterTool` carries none). Each is
//! matched once, by time (and a call by its tool and arguments), so a later import adds only
//! what the hooks missed.

use planlog_core::events::EventBody;
use planlog_core::events::ToolCall;
use planlog_core::{EventLog, LogError, Seq, SessionId, Timestamp};
use serde_json::Value;

/// How long before the source's time a hook may have recorded the same thing (clocks of one
/// machine; a boundary stamped as the compaction ends, a call as its record is written).
const BEFORE_MS: i64 = 5_000;

/// How long after it: a hook runs as the agent starts again after compacting, or right after
/// the tool.
const AFTER_MS: i64 = 300_000;

/// A call a hook recorded under an id of its own (`hook:<entry>`).
struct HookCall {
    seq: Seq,
    at: Timestamp,
    tool: String,
    arguments: Value,
    taken: bool,
}

/// What hooks recorded in one stored session without the source's ids, read once (up to
/// `base`, the session's last seq when the import began), then taken one by one.
#[derive(Default)]
pub(crate) struct Hooked {
    compactions: Vec<(Timestamp, bool)>,
    calls: Vec<HookCall>,
}

impl Hooked {
    /// Reads them from `id`'s events up to `base` (none for a new session), a chunk at a time.
    pub(crate) fn read(
        log: &dyn EventLog,
        id: &SessionId,
        base: Option<Seq>,
    ) -> Result<Self, LogError> {
        let mut hooked = Hooked::default();
        let Some(last) = base else {
            return Ok(hooked);
        };
        for e in log.scan(id, Seq::FIRST).events() {
            let e = e?;
            if e.seq > last {
                break;
            }
            let Some(call_id) = e.call_id.as_ref().map(|c| c.as_str()) else {
                continue;
            };
            if matches!(e.body, EventBody::ContextCompacted(_))
                && call_id.starts_with("compact:hook-")
            {
                hooked.compactions.push((e.at, false));
            } else if call_id.starts_with("hook:")
                && let Some(ToolCall {
                    tool, arguments, ..
                }) = e.body.tool_call()
            {
                hooked.calls.push(HookCall {
                    seq: e.seq,
                    at: e.at,
                    tool: tool.clone(),
                    arguments: serde_json::from_str(arguments).unwrap_or(Value::Null),
                    taken: false,
                });
            }
        }
        Ok(hooked)
    }

    /// Whether a compaction a hook recorded, not yet taken, is the one whose boundary line has
    /// time `at`: the earliest recorded from [`BEFORE_MS`] before to [`AFTER_MS`] after it. It
    /// is taken.
    /// With `since` (a compaction the source inferred), the earliest recorded from `since` to
    /// `at` instead.
    pub(crate) fn compaction(&mut self, at: Timestamp, since: Option<Timestamp>) -> bool {
        let within = |when: Timestamp| match since {
            Some(since) => since <= when && when <= at,
            None => near(at, when),
        };
        match self
            .compactions
            .iter_mut()
            .find(|(when, taken)| !*taken && within(*when))
        {
            Some(entry) => {
                entry.1 = true;
                true
            }
            None => false,
        }
    }

    /// The seq of the call a hook recorded that is the source's call `call` made at `at`: the
    /// earliest not yet taken of the same tool with the same arguments (as JSON values),
    /// recorded from [`BEFORE_MS`] before to [`AFTER_MS`] after it. It is taken.
    pub(crate) fn call(&mut self, call: &ToolCall, at: Timestamp) -> Option<Seq> {
        let arguments: Value = serde_json::from_str(&call.arguments).ok()?;
        let hit = self.calls.iter_mut().find(|h| {
            !h.taken && h.tool == call.tool && near(at, h.at) && h.arguments == arguments
        })?;
        hit.taken = true;
        Some(hit.seq)
    }
}

/// Whether a hook's time `hook` is within the window around the source's time `source`.
fn near(source: Timestamp, hook: Timestamp) -> bool {
    let (t, w) = (source.as_millis(), hook.as_millis());
    w >= t - BEFORE_MS && w <= t + AFTER_MS
}
