//! The index file's tables. Keys start with the session id, so one session is one range.
//!
//! | table | key | value |
//! |---|---|---|
//! | `meta` | `format`, `store` | the format (`1`) and the store indexed |
//! | `progress` | session | (events indexed, hash of the last one indexed) |
//! | `marks` | (session, seq) | (kind, text) |
//! | `texts` | (session, item id, content) | (first seq, last seq with that content) |

use redb::{Database, ReadableDatabase, TableDefinition};

pub(crate) const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
pub(crate) const PROGRESS: TableDefinition<&str, (u64, &str)> = TableDefinition::new("progress");
pub(crate) const MARKS: TableDefinition<(&str, u64), (u8, &str)> = TableDefinition::new("marks");
pub(crate) const TEXTS: TableDefinition<(&str, &str, &str), (u64, u64)> =
    TableDefinition::new("texts");

/// The format this code writes.
const FORMAT: &str = "1";

/// Checks a file's meta and creates the tables: a file without them is a planlog index only
/// if it was just created (an empty redb file of someone else's is refused); one made for
/// another store or format is emptied.
pub(crate) fn prepare(db: &Database, store: &str, fresh: bool) -> Result<(), String> {
    let read = db.begin_read().map_err(|e| e.to_string())?;
    let meta = match read.open_table(META) {
        Ok(t) => Some((
            t.get("format")
                .map_err(|e| e.to_string())?
                .map(|v| v.value().to_owned()),
            t.get("store")
                .map_err(|e| e.to_string())?
                .map(|v| v.value().to_owned()),
        )),
        Err(redb::TableError::TableDoesNotExist(_)) => None,
        Err(e) => return Err(e.to_string()),
    };
    drop(read);
    let reset = match &meta {
        None if !fresh => {
            return Err("it is a redb file planlog did not write as an index".to_owned());
        }
        None => false,
        Some((format, at)) => format.as_deref() != Some(FORMAT) || at.as_deref() != Some(store),
    };
    let write = db.begin_write().map_err(|e| e.to_string())?;
    if reset {
        write.delete_table(PROGRESS).map_err(|e| e.to_string())?;
        write.delete_table(MARKS).map_err(|e| e.to_string())?;
        write.delete_table(TEXTS).map_err(|e| e.to_string())?;
    }
    {
        let mut meta = write.open_table(META).map_err(|e| e.to_string())?;
        meta.insert("format", FORMAT).map_err(|e| e.to_string())?;
        meta.insert("store", store).map_err(|e| e.to_string())?;
        write.open_table(PROGRESS).map_err(|e| e.to_string())?;
        write.open_table(MARKS).map_err(|e| e.to_string())?;
        write.open_table(TEXTS).map_err(|e| e.to_string())?;
    }
    write.commit().map_err(|e| e.to_string())
}
