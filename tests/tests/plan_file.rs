//! The markdown plan file sink: written with private modes, atomically, in a folder of the
//! store's own; never over (or instead of) a file planlog did not write; failures only log.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use planlog_core::testkit::{item, sid};
use planlog_core::{Plan, PlanStatus, Timestamp};
use planlog_store::host::{PlanFileError, PlanFiles};

fn plan() -> Plan {
    Plan::from_items(vec![
        item("1", "Write the parser", PlanStatus::Completed),
        item("2", "Test it\n## forged header", PlanStatus::InProgress),
    ])
}

#[test]
fn writes_the_markdown_file_in_the_stores_own_folder_with_private_modes() {
    let dir = tempfile::tempdir().unwrap();
    let files = PlanFiles::beside(&dir.path().join("planlog.redb"));
    let s = sid("01JDXSESSION");
    let path = files.write(&s, &plan(), Timestamp::from_millis(0)).unwrap();
    assert_eq!(
        path,
        dir.path().join("planlog.plans").join("01JDXSESSION.md")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("<!-- planlog plan file of session 01JDXSESSION:"),
        "{text}"
    );
    assert!(
        text.contains("- [x] Write the parser\n- [>] Test it ## forged header\n"),
        "{text}"
    );
    assert_eq!(text.lines().filter(|l| l.starts_with("## ")).count(), 0);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(files.dir()), 0o700);
        assert_eq!(mode(&path), 0o600);
    }
    // Overwritten, not appended, and no temporary file left behind.
    files
        .write(&s, &Plan::new(), Timestamp::from_millis(0))
        .unwrap();
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("_No items._")
    );
    assert_eq!(std::fs::read_dir(files.dir()).unwrap().count(), 1);
}

#[test]
fn every_session_id_maps_to_a_file_directly_inside_the_folder() {
    let files = PlanFiles::new("/store/plans");
    for id in ["a", "01JDX", "x-y_z", &"9".repeat(64)] {
        let p = files.path_for(&sid(id));
        assert_eq!(p.parent(), Some(std::path::Path::new("/store/plans")));
    }
}

#[test]
fn two_stores_in_one_folder_keep_their_plan_files_apart() {
    let dir = tempfile::tempdir().unwrap();
    let a = PlanFiles::beside(&dir.path().join("a.redb"));
    let b = PlanFiles::beside(&dir.path().join("b.redb"));
    assert_ne!(a.dir(), b.dir());
    let s = sid("proj");
    a.write(&s, &plan(), Timestamp::from_millis(0)).unwrap();
    b.write(&s, &Plan::new(), Timestamp::from_millis(0))
        .unwrap();
    b.remove(&s).unwrap();
    assert!(a.path_for(&s).exists(), "b's delete left a's file alone");
}

#[test]
fn a_users_own_file_is_never_overwritten_or_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let files = PlanFiles::beside(&dir.path().join("planlog.redb"));
    std::fs::create_dir_all(files.dir()).unwrap();
    let mine = files.path_for(&sid("roadmap"));
    std::fs::write(&mine, "# My roadmap\n").unwrap();
    let written = files.write(&sid("roadmap"), &plan(), Timestamp::from_millis(0));
    assert!(
        matches!(written, Err(PlanFileError::NotOurs(_))),
        "{written:?}"
    );
    assert!(matches!(
        files.remove(&sid("roadmap")),
        Err(PlanFileError::NotOurs(_))
    ));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "# My roadmap\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&mine).unwrap().permissions().mode() & 0o777;
        assert_ne!(mode, 0o600, "its mode was not changed either");
    }
}

#[test]
fn an_empty_file_where_the_plan_file_goes_is_replaced() {
    // A plan file is written without a sync, so a power loss just after can leave it empty;
    // an empty file holds nothing to lose, and the view must not stay stale for good.
    let dir = tempfile::tempdir().unwrap();
    let files = PlanFiles::beside(&dir.path().join("planlog.redb"));
    std::fs::create_dir_all(files.dir()).unwrap();
    let path = files.path_for(&sid("s"));
    std::fs::write(&path, "").unwrap();
    files
        .write(&sid("s"), &plan(), Timestamp::from_millis(0))
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("<!-- planlog plan file of session s:"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(files.dir()).unwrap().count(), 1);
    // Removed with its session too.
    std::fs::write(&path, "").unwrap();
    files.remove(&sid("s")).unwrap();
    assert!(!path.exists());
    // A file with anything in it is still left alone, however short.
    std::fs::write(&path, "x").unwrap();
    let written = files.write(&sid("s"), &plan(), Timestamp::from_millis(0));
    assert!(
        matches!(written, Err(PlanFileError::NotOurs(_))),
        "{written:?}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x");
}

#[cfg(unix)]
#[test]
fn a_planted_symlink_is_neither_followed_nor_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let files = PlanFiles::new(dir.path().join("plans"));
    std::fs::create_dir(files.dir()).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, files.path_for(&sid("s"))).unwrap();
    let written = files.write(&sid("s"), &plan(), Timestamp::from_millis(0));
    assert!(matches!(written, Err(PlanFileError::NotOurs(_))));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        std::fs::symlink_metadata(files.path_for(&sid("s")))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_failing_write_only_warns() {
    let dir = tempfile::tempdir().unwrap();
    // The folder's name is taken by a file, so the folder cannot be created.
    std::fs::write(dir.path().join("planlog.plans"), "in the way").unwrap();
    let files = PlanFiles::beside(&dir.path().join("planlog.redb"));
    assert!(
        files
            .write(&sid("s"), &plan(), Timestamp::from_millis(0))
            .is_err()
    );
    files.write_or_warn(&sid("s"), &plan(), Timestamp::from_millis(0));
}

#[test]
fn two_writers_of_one_session_never_publish_a_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = std::sync::Arc::new(PlanFiles::beside(&dir.path().join("planlog.redb")));
    let s = sid("01JDXRACE");
    // Two plans of very different sizes: a partial file is one that ends before its last line.
    let small = Plan::from_items(vec![item("1", "Small", PlanStatus::Pending)]);
    let large = Plan::from_items(
        (0..150)
            .map(|i| item(&i.to_string(), &"large ".repeat(60), PlanStatus::Pending))
            .collect(),
    );
    let path = files.write(&s, &small, Timestamp::from_millis(0)).unwrap();
    let whole = |text: &str| {
        text.starts_with("<!-- planlog plan file of session 01JDXRACE:")
            && (text.ends_with("- [ ] Small\n") || text.trim_end().ends_with("large"))
    };
    std::thread::scope(|scope| {
        let writers: Vec<_> = [small, large]
            .into_iter()
            .map(|plan| {
                let files = std::sync::Arc::clone(&files);
                let s = s.clone();
                scope.spawn(move || {
                    for _ in 0..300 {
                        files
                            .write(&s, &plan, Timestamp::from_millis(0))
                            .expect("a writer racing another writes its whole file");
                    }
                })
            })
            .collect();
        let reader = scope.spawn(|| {
            let mut reads = 0;
            while reads < 2000 {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    whole(&text),
                    "a partial plan file was published: {:?}",
                    &text[text.len().saturating_sub(80)..]
                );
                reads += 1;
            }
        });
        for w in writers {
            w.join().unwrap();
        }
        reader.join().unwrap();
    });
    let left: Vec<_> = std::fs::read_dir(files.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
}
