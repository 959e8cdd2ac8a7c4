//! What both surfaces (the CLI and the MCP server) stand on: opening the store, the failure
//! type with its exit codes, and writing to stdout.

pub(crate) mod failure;
pub(crate) mod open;
pub(crate) mod output;
