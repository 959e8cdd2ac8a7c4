//! The golden scenario suite: every `fixtures/scenarios/*.json` run through the reference
//! agent loop, its transcript compared with a reviewed snapshot.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

#[test]
fn golden_scenarios() {
    insta::glob!("../../fixtures/scenarios", "*.json", |path| {
        let dir = tempfile::tempdir().unwrap();
        let transcript = planlog_tests::scenario::run_scenario(path, dir.path());
        insta::assert_snapshot!(transcript);
    });
}

#[test]
fn there_are_at_least_24_scenarios() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/scenarios");
    let n = std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    assert!(n >= 24, "only {n} scenarios");
}
