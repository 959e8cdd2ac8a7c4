//! planlog-replay: reading planlog logs. Audit a session's history, verify a store, import
//! what agents recorded, export a session. A library with no terminal or network
//! dependencies (the `planlog` binary, in `replay/planlog`, builds the surfaces on it).
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | [`audit`] | history lines (items named by id and text, flags, compactions, restores, the call as sent), item lives, diffs |
//! | [`checkpoints`] | a checkpoint compared with the plan it belongs with |
//! | [`verify`] | hash chains, seqs, recorded results re-run, fork lineage, origins, the store's derived tables |
//! | [`import`] | what agents recorded (Claude Code transcripts and task folders, Codex, opencode, Gemini CLI) and planlog's own jsonl, streamed into events; format detection; item id derivation |
//! | [`export`] | json, jsonl, markdown |
//! | [`claude_hooks`] | live capture inside Claude Code: hook inputs, rules before a call, records after, the plan restored, the spool, settings |

pub mod audit;
pub mod checkpoints;
pub mod claude_hooks;
pub mod export;
pub mod import;
pub mod verify;
