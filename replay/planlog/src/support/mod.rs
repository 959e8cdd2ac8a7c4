//! What both surfaces (the CLI and the MCP server) stand on: opening the store, the failure
//! type with its exit codes, writing to stdout, a temporary file for grouping lines, and a
//! hook's quick exit.

pub(crate) mod exit;
pub(crate) mod failure;
pub(crate) mod open;
pub(crate) mod output;
pub(crate) mod progress;
pub(crate) mod spill;
