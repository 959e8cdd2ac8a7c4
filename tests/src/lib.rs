//! Shared helpers of the workspace-level integration tests.
