//! What the import tests share: reading a fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

/// The bytes of `fixtures/imports/<name>`.
pub(crate) fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/imports")
            .join(name),
    )
    .unwrap()
}
