//! planlog-replay: what people use to audit plan history, replay sessions to debug them, and
//! fork a session at a step; and the `planlog` binary.
//!
//! # Module map
//!
//! | module | what |
//! |---|---|
//! | `cli` | argument parsing and one function per command; exit codes |
//! | `audit` | history lines (item transitions), item lives, diffs |
//! | `verify` | hash chain, seqs, re-run rules, fork lineage, derived tables |
//! | `import` | Claude Code and Codex transcripts, planlog jsonl; item id derivation |
//! | `export` | json, jsonl, markdown |
//! | `demo` | the scripted demo |
//! | `mcp` | `planlog mcp`: the stdio MCP server (rmcp) |
//! | `output` | colour on terminals only, quiet end on a closed pipe |

pub mod audit;
pub mod cli;
pub mod demo;
pub mod export;
pub mod import;
pub mod mcp;
pub mod output;
pub mod verify;
