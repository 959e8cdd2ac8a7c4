//! Naming a store: a file path (a redb store) or a URL of a scheme planlog knows
//! (`postgres://`, `postgresql://`). Anything else spelled like a URL (`mysql://…`) is
//! refused with the schemes planlog knows, rather than taken for a file name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planlog_core::{EventLog, LogError};

use crate::postgres::{PgLog, SCHEMES, redacted, without_password};
use crate::redb::RedbLog;

/// Where a store is.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreAddress {
    /// A redb file.
    File(PathBuf),
    /// A PostgreSQL database (the URL as given, password included).
    Postgres(String),
}

impl std::fmt::Debug for StoreAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

/// A store argument spelled like a URL of a scheme planlog does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{scheme}:// is not a kind of store planlog knows; a store is a file path, or a URL of {}", SCHEMES.iter().map(|s| format!("{s}://")).collect::<Vec<_>>().join(" or "))]
pub struct UnknownScheme {
    /// The scheme given.
    pub scheme: String,
}

impl StoreAddress {
    /// Reads a store argument: a URL when it starts with `scheme://`, else a path.
    ///
    /// # Errors
    /// [`UnknownScheme`] for a URL of a scheme planlog does not know.
    pub fn parse(text: &str) -> Result<Self, UnknownScheme> {
        match text.split_once("://") {
            Some((scheme, _))
                if !scheme.is_empty()
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
            {
                if SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
                    Ok(Self::Postgres(text.to_owned()))
                } else {
                    Err(UnknownScheme {
                        scheme: scheme.to_owned(),
                    })
                }
            }
            _ => Ok(Self::File(PathBuf::from(text))),
        }
    }

    /// A path store.
    pub fn file(path: impl AsRef<Path>) -> Self {
        Self::File(path.as_ref().to_path_buf())
    }

    /// How messages name it (a URL without its password).
    pub fn shown(&self) -> String {
        match self {
            Self::File(p) => p.display().to_string(),
            Self::Postgres(url) => redacted(url),
        }
    }

    /// The address to write where others may read it (a settings file): a URL keeps its
    /// options but loses any password; a path is as given.
    pub fn without_password(&self) -> String {
        match self {
            Self::File(p) => p.display().to_string(),
            Self::Postgres(url) => without_password(url),
        }
    }

    /// Opens it with the defaults (a file is created when missing).
    ///
    /// # Errors
    /// As [`RedbLog::open`] and [`PgLog::open`].
    pub fn open(&self) -> Result<Arc<dyn EventLog>, LogError> {
        match self {
            Self::File(p) => Ok(Arc::new(RedbLog::open(p)?)),
            Self::Postgres(url) => Ok(Arc::new(PgLog::open(url)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_of_known_schemes_paths_and_refusals() {
        assert_eq!(
            StoreAddress::parse("postgres://u:pw@h/db"),
            Ok(StoreAddress::Postgres("postgres://u:pw@h/db".into()))
        );
        assert!(matches!(
            StoreAddress::parse("postgresql://h/db"),
            Ok(StoreAddress::Postgres(_))
        ));
        assert_eq!(
            StoreAddress::parse("./store/planlog.redb"),
            Ok(StoreAddress::File("./store/planlog.redb".into()))
        );
        let refused = StoreAddress::parse("mysql://h/db").unwrap_err();
        assert_eq!(refused.scheme, "mysql");
        assert!(refused.to_string().contains("postgres://"));
        assert_eq!(
            StoreAddress::parse("postgres://u:pw@h/db").unwrap().shown(),
            "postgres://u@h/db"
        );
    }
}
