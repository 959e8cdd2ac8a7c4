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
    // On a plain disk, and on one where the journal keeps zeros past its end to overwrite
    // (as on a file): a torn write then lands over zeros, not past the file's end.
    for (seed, preallocating) in (1..=300u64).flat_map(|s| [(s, false), (s, true)]) {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let disk = if preallocating {
            SimStorage::preallocating()
        } else {
            SimStorage::new()
        };
        let (mut journal, opened) = Journal::open(disk).unwrap();
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
                    // A full disk: refused, nothing acknowledged, the next append unharmed;
                    // or, where zeros kept past the end hold it, written and acknowledged.
                    0 => {
                        let len = journal.storage().bytes().len() as u64;
                        journal.storage_mut().limit = Some(len);
                        match journal.append(&refs) {
                            Err(JournalError::Io(_)) => {}
                            Ok(()) if preallocating => {
                                appends.push(records);
                                acked = appends.len();
                            }
                            other => panic!("seed {seed}: a full disk gave {other:?}"),
                        }
                        journal.storage_mut().limit = None;
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
                "seed {seed} (zeros kept: {preallocating}): {} records seen, {acked} of {} appends acknowledged",
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
    assert_eq!(crashes, 2400);
}

/// A disk with room for the frames but not for the zeros kept past them: the append lands
/// without them (as it would have before), and the journal reads back whole.
#[test]
fn an_append_the_zeros_do_not_fit_lands_without_them() {
    let (mut journal, _) = Journal::open(SimStorage::preallocating()).unwrap();
    journal.append(&[b"{\"a\":1}"]).unwrap();
    let kept = journal.storage().bytes().len() as u64;
    assert!(kept > journal.end(), "zeros kept past the end");
    // Fill the zeros kept, then one append more with a little room left.
    let big = vec![b'x'; 1000];
    let mut records = 1;
    let frame = {
        let at = journal.end();
        journal.append(&[big.as_slice()]).unwrap();
        records += 1;
        journal.end() - at
    };
    while journal.end() + frame <= kept {
        journal.append(&[big.as_slice()]).unwrap();
        records += 1;
    }
    assert_eq!(
        journal.storage().bytes().len() as u64,
        kept,
        "overwrites only"
    );
    journal.storage_mut().limit = Some(kept + 2 * frame);
    journal.append(&[big.as_slice()]).unwrap();
    records += 1;
    let len = journal.storage().bytes().len() as u64;
    assert_eq!(len, journal.end(), "appended without zeros past it");
    assert!(len > kept && len <= kept + 2 * frame, "{len}");
    // Past the limit: refused, nothing acknowledged, the journal as it was.
    journal.append(&[big.as_slice()]).unwrap();
    records += 1;
    let before = journal.end();
    assert!(matches!(
        journal.append(&[big.as_slice()]),
        Err(JournalError::Io(_))
    ));
    assert_eq!(journal.end(), before);
    let (_, opened) = Journal::open(journal.storage().crash(0, 0)).unwrap();
    assert_eq!((opened.cut, opened.records.len()), (None, records));
}

#[test]
fn a_torn_batch_is_not_seen_and_its_parts_do_not_come_back() {
    for disk in [SimStorage::new(), SimStorage::preallocating()] {
        a_torn_batch_is_not_seen_on(disk);
    }
}

fn a_torn_batch_is_not_seen_on(disk: SimStorage) {
    let (mut journal, _) = Journal::open(disk).unwrap();
    journal.append(&[b"{\"a\":1}"]).unwrap();
    let first = usize::try_from(journal.end()).unwrap();
    journal
        .write(&[b"{\"b\":1}", b"{\"b\":2}", b"{\"b\":3}"])
        .unwrap();
    let batch = usize::try_from(journal.end()).unwrap() - first;
    let written = journal.storage().bytes()[first..first + batch].to_vec();
    // Torn anywhere in the batch's write, up to the last byte of its commit frame.
    let mut wholes = 0;
    for torn in 0..batch {
        let disk = journal.storage().crash(0, torn);
        // Over zeros kept past the end, a write torn where the rest of it is zeros (the
        // commit frame's high bytes) leaves it whole, byte for byte: the batch is there,
        // whole. Anything short of that is not seen at all.
        let whole = disk.bytes().get(first..first + batch) == Some(written.as_slice());
        let (mut j, opened) = Journal::open(disk).unwrap();
        if whole {
            assert_eq!(opened.records.len(), 4, "torn at {torn}, the rest zeros");
            wholes += 1;
            continue;
        }
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
    // Only the commit frame's last bytes can be zeros (its batch id and `durable`, high).
    assert!(wholes < 16, "{wholes} of {batch} torn writes left it whole");
    // The whole write kept: the batch is there.
    let (_, opened) = Journal::open(journal.storage().crash(1, 0)).unwrap();
    assert_eq!(opened.records.len(), 4);
}

#[test]
fn damage_before_the_tail_names_its_byte_and_cuts_nothing() {
    for disk in [SimStorage::new(), SimStorage::preallocating()] {
        damage_before_the_tail_on(disk);
    }
}

fn damage_before_the_tail_on(disk: SimStorage) {
    let (mut journal, _) = Journal::open(disk).unwrap();
    for i in 0..5 {
        journal
            .append(&[format!("{{\"n\":{i}}}").as_bytes()])
            .unwrap();
    }
    let frame = usize::try_from(journal.end()).unwrap() / 5;
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
    let len = disk.bytes().len();
    let (_, opened) = Journal::open(disk).unwrap();
    assert_eq!(opened.records.len(), 4);
    // The last frame and what follows it (zeros, where the journal keeps them).
    assert_eq!(
        opened.cut,
        Some(((4 * frame) as u64, (len - 4 * frame) as u64))
    );
}

#[test]
fn a_file_storage_keeps_what_it_synced() {
    use planlog_store::journal::FileStorage;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal");
    let end = {
        let (mut journal, _) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
        journal.append(&[b"{\"a\":1}"]).unwrap();
        journal.append(&[b"{\"b\":1}", b"{\"b\":2}"]).unwrap();
        journal.end()
    };
    // On a file the journal keeps zeros past its end, to overwrite: reopened, they are
    // where it ends, and nothing is cut.
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(
        size > end,
        "zeros kept past the frames: {size} bytes, the end at {end}"
    );
    let (journal, opened) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
    assert_eq!(
        (opened.records.len(), opened.cut, journal.end()),
        (3, None, end)
    );
    drop(journal);
    // A torn tail on disk, where the next frame goes: half a frame, zeros after it.
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all_at(&[20, 0, 0, 0, 1, 2], end).unwrap();
    }
    let (_, opened) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
    assert_eq!(opened.records.len(), 3);
    assert_eq!(opened.cut, Some((end, size - end)));
    assert_eq!(std::fs::metadata(&path).unwrap().len(), end);
    let storage = FileStorage::open(&path).unwrap();
    assert_eq!(storage.size().unwrap(), end);
}

/// A file another program wrote where the journal goes (text, JSON, random bytes) has no
/// whole frame, as planlog's own first write torn short has none: the first is refused and
/// left as it was, read-write or read-only; the second, torn at any byte, is cut, and lost
/// as zeros (a file system that kept the size, not the data) is where the journal ends.
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
    // Zeros (a file system that kept the size, not the data, or zeros kept to overwrite)
    // are where the journal ends: nothing to cut, and the next frame goes at byte 0.
    let path = dir.path().join("zeros");
    std::fs::write(&path, vec![0u8; 4096]).unwrap();
    let (mut journal, opened) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
    assert_eq!(
        (opened.records.len(), opened.cut, journal.end()),
        (0, None, 0)
    );
    journal.append(&[b"{\"a\":1}"]).unwrap();
    drop(journal);
    let (_, opened) = Journal::open(FileStorage::open(&path).unwrap()).unwrap();
    assert_eq!(opened.records.len(), 1);
}
