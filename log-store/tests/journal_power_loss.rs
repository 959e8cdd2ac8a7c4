//! The journal on a disk that loses power (`SimStorage`), deterministic and seeded: at every
//! step of appends and batches (and after a full disk), a crash that keeps any number of the
//! changes not synced and tears the next at any byte. After each crash the journal opens
//! with every acknowledged append, whole appends only (never part of a batch), the torn tail
//! cut; appends go on after it. Damage before the tail is an error naming its byte.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code

use planlog_store::journal::{Fate, Journal, JournalError, SimStorage, Storage};

/// A small deterministic generator (xorshift64*): the same seed, the same run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A record as an event is one: JSON text, so never a zero byte.
fn record(rng: &mut Rng, n: u64) -> Vec<u8> {
    let len = 1 + rng.below(300) as usize;
    let mut text = format!("{{\"n\":{n},\"text\":\"");
    while text.len() < len {
        text.push(char::from(b'a' + (rng.below(26) as u8)));
    }
    text.push_str("\"}");
    text.into_bytes()
}

/// The records of what was opened, as bytes.
fn bytes(opened: &planlog_store::journal::Opened) -> Vec<Vec<u8>> {
    opened.records.iter().map(|r| r.data.clone()).collect()
}

/// Whether `seen` is the records of the first `j` appends of `appends`, for some `j` of at
/// least `acked`.
fn is_whole_prefix(seen: &[Vec<u8>], appends: &[Vec<Vec<u8>>], acked: usize) -> bool {
    let mut flat: Vec<Vec<u8>> = Vec::new();
    for (j, append) in appends.iter().enumerate() {
        if j >= acked && flat == seen {
            return true;
        }
        flat.extend(append.iter().cloned());
    }
    flat == seen
}

#[test]
fn acknowledged_appends_survive_every_crash_and_no_batch_is_half_there() {
    let mut crashes = 0;
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (mut journal, opened) = Journal::open(SimStorage::new()).unwrap();
        assert!(bytes(&opened).is_empty());
        // Every append made, in order (what the journal may show), and how many of them
        // were acknowledged (what it must show).
        let mut appends: Vec<Vec<Vec<u8>>> = Vec::new();
        let mut acked = 0;
        let mut n = 0;
        for _round in 0..4 {
            let steps = 1 + rng.below(12);
            for _ in 0..steps {
                let size = if rng.below(3) == 0 {
                    2 + rng.below(4)
                } else {
                    1
                };
                let records: Vec<Vec<u8>> = (0..size)
                    .map(|_| {
                        n += 1;
                        record(&mut rng, n)
                    })
                    .collect();
                let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
                match rng.below(10) {
                    // A full disk: refused, nothing acknowledged, the next append unharmed.
                    0 => {
                        journal.storage_mut().fail_next_write = true;
                        assert!(matches!(journal.append(&refs), Err(JournalError::Io(_))));
                    }
                    // Written, not synced: not acknowledged.
                    1 | 2 => {
                        journal.write(&refs).unwrap();
                        appends.push(records);
                    }
                    _ => {
                        journal.append(&refs).unwrap();
                        appends.push(records);
                        acked = appends.len();
                    }
                }
            }
            // Power lost: the changes since the last sync kept in order up to one torn at
            // any byte, or each kept, lost or torn on its own (a cache writing back out of
            // order).
            let pending = journal.storage().pending();
            let disk = if rng.below(2) == 0 {
                let kept = rng.below(pending as u64 + 1) as usize;
                let torn = rng.below(400) as usize;
                journal.storage().crash(kept, torn)
            } else {
                journal
                    .storage()
                    .crash_with(&mut |_, size| match rng.below(3) {
                        0 => Fate::Kept,
                        1 => Fate::Lost,
                        _ => Fate::Torn(rng.below(size as u64 + 1) as usize),
                    })
            };
            crashes += 1;
            let (reopened, opened) = Journal::open(disk).unwrap();
            assert!(
                is_whole_prefix(&bytes(&opened), &appends, acked),
                "seed {seed}: {} records seen, {acked} of {} appends acknowledged",
                opened.records.len(),
                appends.len()
            );
            // What is there now is what the next crash must keep: opening synced the cut.
            let shown = opened.records.len();
            let mut count = 0;
            let mut whole = 0;
            for (j, append) in appends.iter().enumerate() {
                if count == shown {
                    whole = j;
                    break;
                }
                count += append.len();
                whole = j + 1;
            }
            appends.truncate(whole);
            acked = whole;
            journal = reopened;
            // Opened twice, the same: the cut was durable.
            let again = journal.storage().crash(0, 0);
            let (_, twice) = Journal::open(again).unwrap();
            assert_eq!(bytes(&twice), bytes(&opened), "seed {seed}");
            assert!(twice.cut.is_none(), "seed {seed}");
        }
    }
    assert_eq!(crashes, 1200);
}

#[test]
fn a_torn_batch_is_not_seen_and_its_parts_do_not_come_back() {
    let (mut journal, _) = Journal::open(SimStorage::new()).unwrap();
    journal.append(&[b"{\"a\":1}"]).unwrap();
    let first = journal.storage().bytes().len();
    journal
        .write(&[b"{\"b\":1}", b"{\"b\":2}", b"{\"b\":3}"])
        .unwrap();
    let batch = journal.storage().bytes().len() - first;
    // Torn anywhere in the batch's write, up to the last byte of its commit frame.
    for torn in 0..batch {
        let (mut j, opened) = Journal::open(journal.storage().crash(0, torn)).unwrap();
        assert_eq!(
            bytes(&opened),
            vec![b"{\"a\":1}".to_vec()],
            "torn at {torn}"
        );
        // A later batch is whole; the torn one's parts stay out.
        j.append(&[b"{\"c\":1}", b"{\"c\":2}"]).unwrap();
        let (_, after) = Journal::open(j.storage().crash(0, 0)).unwrap();
        assert_eq!(
            bytes(&after),
            vec![
                b"{\"a\":1}".to_vec(),
                b"{\"c\":1}".to_vec(),
                b"{\"c\":2}".to_vec()
            ],
            "torn at {torn}"
        );
    }
    // The whole write kept: the batch is there.
    let (_, opened) = Journal::open(journal.storage().crash(1, 0)).unwrap();
    assert_eq!(opened.records.len(), 4);
}

#[test]
fn damage_before_the_tail_names_its_byte_and_cuts_nothing() {
    let (mut journal, _) = Journal::open(SimStorage::new()).unwrap();
    for i in 0..5 {
        journal
            .append(&[format!("{{\"n\":{i}}}").as_bytes()])
            .unwrap();
    }
    let frame = journal.storage().bytes().len() / 5;
    // Any byte of the second frame, its length bytes included (one that runs past the end).
    for offset in frame..2 * frame {
        let mut disk = journal.storage().crash(0, 0);
        disk.damage(offset);
        let before = disk.bytes().to_vec();
        match Journal::open(disk.clone()) {
            Err(JournalError::Damaged { at, why }) => {
                assert_eq!(at, frame as u64, "byte {offset}: {why}");
                let message = JournalError::Damaged { at, why }.to_string();
                assert!(message.contains(&format!("byte {frame}")), "{message}");
            }
            other => panic!("byte {offset}: {other:?}"),
        }
        assert_eq!(disk.bytes(), before.as_slice(), "nothing cut");
    }
    // The same damage in the last frame is a torn tail: cut, the four before it kept.
    let mut disk = journal.storage().crash(0, 0);
    disk.damage(4 * frame + 9);
    let (_, opened) = Journal::open(disk).unwrap();
    assert_eq!(opened.records.len(), 4);
    assert_eq!(opened.cut, Some(((4 * frame) as u64, frame as u64)));
}

#[test]
fn a_file_storage_keeps_what_it_synced() {
    use planlog_store::journal::FileStorage;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal");
    {
        let (mut journal, _) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
        journal.append(&[b"{\"a\":1}"]).unwrap();
        journal.append(&[b"{\"b\":1}", b"{\"b\":2}"]).unwrap();
    }
    // A torn tail on disk: half a frame.
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(&[20, 0, 0, 0, 1, 2]).unwrap();
    }
    let size = std::fs::metadata(&path).unwrap().len();
    let (_, opened) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
    assert_eq!(opened.records.len(), 3);
    assert_eq!(opened.cut, Some((size - 6, 6)));
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size - 6);
    let storage = FileStorage::open(&path).unwrap();
    assert_eq!(storage.size().unwrap(), size - 6);
}

/// A file another program wrote where the journal goes (text, JSON, random bytes) has no
/// whole frame, as planlog's own first write torn short has none: the first is refused and
/// left as it was, read-write or read-only; the second, torn at any byte or lost as zeros (a
/// file system that kept the size, not the data), is cut.
#[test]
fn a_file_planlog_did_not_write_is_refused_and_never_cut() {
    use planlog_store::journal::FileStorage;
    let (mut sim, _) = Journal::open(SimStorage::new()).unwrap();
    sim.write(&[b"{\"a\":1}", b"{\"b\":2}"]).unwrap();
    let size = sim.storage().bytes().len();
    for torn in 1..size {
        let (_, opened) = Journal::open(sim.storage().crash(0, torn))
            .unwrap_or_else(|e| panic!("the first write torn at byte {torn}: {e}"));
        assert!(opened.records.is_empty(), "torn at {torn}");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(7);
    let random: Vec<u8> = (0..5000).map(|_| rng.next() as u8).collect();
    for (what, bytes) in [
        ("text", b"my notes\n".to_vec()),
        ("json", b"{\"sessionId\": \"x\"}\n".to_vec()),
        ("random", random),
    ] {
        let path = dir.path().join(what);
        std::fs::write(&path, &bytes).unwrap();
        for read_only in [false, true] {
            match Journal::open_at(FileStorage::open(&path).unwrap(), 0, read_only) {
                Err(e @ JournalError::NotOurs) => {
                    assert!(e.to_string().contains("move it away"), "{e}");
                }
                other => panic!("{what}, read-only {read_only}: {other:?}"),
            }
        }
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{what}: nothing cut");
    }
    let path = dir.path().join("zeros");
    std::fs::write(&path, vec![0u8; 4096]).unwrap();
    let (_, opened) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
    assert_eq!(opened.cut, Some((0, 4096)));
}
