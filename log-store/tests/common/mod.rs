//! Helpers shared by the journaled store's tests.
#![allow(clippy::unwrap_used, dead_code)] // test code; each test file uses part of it

use planlog_core::{EventLog, Seq};

/// Everything a reader can ask of `log`, for comparing two stores.
pub(crate) fn everything(log: &dyn EventLog) -> Vec<String> {
    let mut out = Vec::new();
    for info in log.sessions().unwrap() {
        let events = log.read(&info.id, Seq::FIRST, None).unwrap();
        out.push(format!("{info:?}"));
        out.push(format!("{:?}", log.head(&info.id).unwrap()));
        for e in &events {
            out.push(String::from_utf8(e.encode()).unwrap());
            out.push(format!("{:?}", log.state_at(&info.id, e.seq).unwrap()));
            if let Some(call) = &e.call_id {
                assert_eq!(log.find_call(&info.id, call).unwrap(), Some(e.seq));
            }
        }
        out.push(format!(
            "{:?}",
            log.state_index(&info.id, Seq::FIRST, Seq::new(events.len() as u64).unwrap())
                .unwrap()
        ));
    }
    out
}

/// `a` and `b` the same, or a panic naming the first line where they differ (not both
/// whole: a long session's lines are many).
pub(crate) fn same(a: &[String], b: &[String]) {
    if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
        let cut = |s: &str| s.chars().take(300).collect::<String>();
        panic!("line {i} differs:\n{}\n{}", cut(&a[i]), cut(&b[i]));
    }
    assert_eq!(a.len(), b.len(), "one has lines the other lacks");
}
