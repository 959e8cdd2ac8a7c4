//! The item matching of whole lists against its cases (`fixtures/matching/cases.json`): lists
//! taken from the public transcripts, and the cases issue 22 reported (a new item taken for a
//! finished one, a new plan taken for the old one, an edit in text without spaces).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use planlog_core::PlanStatus;
use planlog_import::{ItemIds, Sent};
use serde_json::Value;

#[test]
fn every_matching_case_gets_the_ids_it_expects() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/matching/cases.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 9);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let mut ids = ItemIds::new();
        let lists = case["lists"].as_array().unwrap();
        let expect = case["expect"].as_array().unwrap();
        assert_eq!(lists.len(), expect.len(), "{name}");
        for (n, (list, want)) in lists.iter().zip(expect).enumerate() {
            let sent: Vec<Sent> = list
                .as_array()
                .unwrap()
                .iter()
                .map(|t| Sent {
                    source: t["id"].as_str().map(str::to_owned),
                    content: t["content"].as_str().unwrap().to_owned(),
                    status: PlanStatus::from_wire(t["status"].as_str().unwrap()).unwrap(),
                })
                .collect();
            let got: Vec<String> = ids
                .assign(&sent)
                .into_iter()
                .map(|i| i.to_string())
                .collect();
            let want: Vec<&str> = want
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap())
                .collect();
            assert_eq!(got, want, "{name}: list {}", n + 1);
        }
    }
}
