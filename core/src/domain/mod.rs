//! The domain: what a plan is, what a plan_write call may do to it, and how that is recorded.
//! Everything here is pure; nothing here knows about agents, terminals or storage engines.
//!
//! Layering (each module uses only modules above it in this list):
//!
//! | module | what |
//! |---|---|
//! | `limits` | every limit, in one place |
//! | `text` | making model text safe to show on one line; how ids are shown |
//! | `ids` | validated ids: session, item, seq, call |
//! | `time` | [`Timestamp`](crate::Timestamp) |
//! | `canonical` | canonical JSON (RFC 8785) and the SHA-256 [`Hash`](crate::Hash) |
//! | `jcs_writer` | RFC 8785 written straight from a value's `Serialize` (no `serde_json::Value`) |
//! | `plan` | items, statuses, the plan |
//! | `rejection` | why a call was refused, in words the model can act on |
//! | `call` | parsing plan_write arguments strictly |
//! | `decide` | anti-cheat and the merge |
//! | `event` | the event envelope and kinds, encode/decode |
//! | `sealed` | an event sealed here with its canonical bytes, for a store to take as they are |
//! | `event_decode` | stored bytes into an event without serde's buffering (`Event::decode`'s fast path) |
//! | `write` | one plan_write call worked out: the result and the event |
//! | `task` | task calls in planlog's terms: the call, its rules, its decision (the JSON is `agent::task_tool`'s) |
//! | `state` | the fold |
//! | `error` | errors split by who must act |
//! | `env` | the host's clock and id source |
//! | `scan` | [`Chunks`](crate::Chunks): a session read a chunk at a time |
//! | `log` | the `EventLog` port, `check_append` |
//! | `memory_log` | the in-memory log |

pub(crate) mod call;
pub(crate) mod canonical;
pub(crate) mod decide;
pub(crate) mod env;
pub(crate) mod error;
pub(crate) mod event;
pub(crate) mod event_decode;
pub(crate) mod ids;
pub(crate) mod jcs_writer;
pub(crate) mod limits;
pub(crate) mod log;
pub(crate) mod memory_log;
pub(crate) mod plan;
pub(crate) mod rejection;
pub(crate) mod scan;
pub(crate) mod sealed;
pub(crate) mod state;
pub(crate) mod task;
pub(crate) mod text;
pub(crate) mod time;
pub(crate) mod write;
