//! A journal verified on its own, without redb: every record an event whose hash matches its
//! bytes, and each session's events a chain (seq 1, 2, 3, … each naming the hash of the one
//! before). This is what makes the journal the record: an export of a session is its records,
//! and an auditor can check them with nothing else. Tombstones (`record`) end a chain.

use std::collections::HashMap;

use planlog_core::SessionId;
use planlog_core::events::Hash;

use super::record::Record;

/// What a journal's chains hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chains {
    /// Sessions, and the seq and hash of each one's last event.
    pub heads: HashMap<SessionId, (u64, Hash)>,
    /// Events checked.
    pub events: u64,
}

/// A record that breaks its session's chain, or is no event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("journal record {index}: {why}")]
pub struct BrokenChain {
    /// Its place among the journal's records (from 0).
    pub index: usize,
    /// What is wrong, naming the session and seq where known.
    pub why: String,
}

/// Checks `records` (a journal's committed records, in order) as events and chains. A
/// tombstone ends its session's chain; only the same session, restored from its first
/// event, may start it again.
///
/// # Errors
/// [`BrokenChain`] at the first record that is neither an event nor a tombstone, fails its
/// hash, or does not follow its session's last event.
pub fn check_chains<R: AsRef<[u8]>>(
    records: impl IntoIterator<Item = R>,
) -> Result<Chains, BrokenChain> {
    let mut chains = Chains::default();
    let mut retired: HashMap<SessionId, Option<Hash>> = HashMap::new();
    for (index, record) in records.into_iter().enumerate() {
        let event = match Record::decode(record.as_ref()) {
            Ok(Record::Event(e)) => *e,
            Ok(Record::Delete { session, first }) => {
                chains.heads.remove(&session);
                retired.insert(session, first);
                continue;
            }
            Err(why) => return Err(BrokenChain { index, why }),
        };
        if let Some(first) = retired.get(&event.session) {
            if event.seq.get() != 1 || *first != Some(event.hash) {
                return Err(BrokenChain {
                    index,
                    why: format!(
                        "session {} was deleted, and seq {} is not its first event restored",
                        event.session,
                        event.seq.get()
                    ),
                });
            }
            retired.remove(&event.session);
        }
        let (expected_seq, expected_prev) = match chains.heads.get(&event.session) {
            Some((seq, hash)) => (seq + 1, Some(*hash)),
            None => (1, None),
        };
        if event.seq.get() != expected_seq || event.prev != expected_prev {
            return Err(BrokenChain {
                index,
                why: format!(
                    "session {} seq {} does not follow its session's last event (seq {} expected, with the hash of the one before)",
                    event.session,
                    event.seq.get(),
                    expected_seq
                ),
            });
        }
        chains
            .heads
            .insert(event.session.clone(), (event.seq.get(), event.hash));
        chains.events += 1;
    }
    Ok(chains)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use planlog_core::events::Event;

    /// The events of a fixture, in order, as their canonical bytes.
    fn fixture() -> Vec<Vec<u8>> {
        include_str!("../../../fixtures/events/format-4.jsonl")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let e: Event = serde_json::from_str(l).unwrap();
                e.encode()
            })
            .collect()
    }

    #[test]
    fn a_journal_of_whole_chains_checks_and_every_break_is_named() {
        let records = fixture();
        let chains = check_chains(&records).unwrap();
        assert_eq!(chains.events, records.len() as u64);
        assert!(!chains.heads.is_empty());
        // A record tampered with: its hash fails.
        let mut tampered = records.clone();
        let text = String::from_utf8(tampered[2].clone()).unwrap();
        tampered[2] = text
            .replacen("Read the code", "Read the cod3", 1)
            .into_bytes();
        let err = check_chains(&tampered).unwrap_err();
        assert_eq!(err.index, 2, "{err}");
        // A record left out: the next does not follow.
        let mut gap = records.clone();
        gap.remove(2);
        let err = check_chains(&gap).unwrap_err();
        assert_eq!(err.index, 2, "{err}");
        assert!(err.to_string().contains("does not follow"), "{err}");
        // Two records swapped: the first out of place is named.
        let mut swapped = records.clone();
        swapped.swap(2, 3);
        assert_eq!(check_chains(&swapped).unwrap_err().index, 2);
        // Not an event at all.
        let mut junk = records;
        junk.push(b"{\"x\":1}".to_vec());
        assert!(
            check_chains(&junk)
                .unwrap_err()
                .why
                .contains("not an event")
        );
    }
}
