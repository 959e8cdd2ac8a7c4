//! Naming a store: a file path (a redb store) or a URL of a scheme planlog knows
//! (`postgres://`, `postgresql://`). Anything else spelled like a URL (`mysql://…`) is
//! refused with the schemes planlog knows, rather than taken for a file name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use planlog_core::{EventLog, LogError};

/// The URL schemes a PostgreSQL store may be named by.
pub const SCHEMES: [&str; 2] = ["postgres", "postgresql"];

/// Where a store is.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreAddress {
    /// A file store: a journaled store (its redb index at this path, its journal beside it),
    /// or a store of the older redb layout.
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

    /// Opens it with the defaults (a file is created when missing, a journaled store; one
    /// of the redb layout is upgraded to one).
    ///
    /// # Errors
    /// As [`crate::JournaledOptions::open_any`] and `PgLog::open`; without the `postgres` feature, a URL is an
    /// [`planlog_core::OperatorError::Io`] of kind `Unsupported` that says so.
    pub fn open(&self) -> Result<Arc<dyn EventLog>, LogError> {
        match self {
            Self::File(p) => crate::JournaledLog::options().open_any(p, true),
            #[cfg(feature = "postgres")]
            Self::Postgres(url) => Ok(Arc::new(crate::postgres::PgLog::open(url)?)),
            #[cfg(not(feature = "postgres"))]
            Self::Postgres(url) => Err(without_postgres(url)),
        }
    }
}

/// What opening the PostgreSQL store at `url` gives in a build without the `postgres`
/// feature: an operator error of kind `Unsupported` that says so, naming the store without its
/// password. (Compiled in every build, so the default build's tests check its words.)
#[cfg_attr(feature = "postgres", allow(dead_code))]
fn without_postgres(url: &str) -> LogError {
    planlog_core::OperatorError::Io {
        path: redacted(url),
        action: "open".to_owned(),
        source: planlog_core::StorageError::new(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this planlog was built without PostgreSQL support (planlog-store's `postgres` feature); use a file store, or build with the feature",
        )),
    }
    .into()
}

/// `url` without its password, for messages: also without its query (options such as
/// `password=` or `sslpassword=` may hide there).
pub(crate) fn redacted(url: &str) -> String {
    without_password(url)
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// `url` with no password in its user part nor in its query; every other option kept (for
/// a URL written into a settings file).
pub(crate) fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            format!("{user}@{host}")
        }
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|kv| !kv.to_ascii_lowercase().contains("password="))
                .collect();
            if kept.is_empty() {
                path.to_owned()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
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

    #[test]
    fn a_url_for_settings_keeps_its_options_but_no_password() {
        assert_eq!(
            without_password(
                "postgres://planlog:s3cret@db.example:5432/plans?sslmode=disable&password=x&connect_timeout=3"
            ),
            "postgres://planlog@db.example:5432/plans?sslmode=disable&connect_timeout=3"
        );
        assert_eq!(
            without_password("postgres://db.example/plans?password=x"),
            "postgres://db.example/plans"
        );
    }

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redacted("postgres://planlog:s3cret@db.example:5432/plans?sslmode=disable&password=x"),
            "postgres://planlog@db.example:5432/plans"
        );
        assert_eq!(redacted("postgres://h/db"), "postgres://h/db");
        assert_eq!(redacted("postgresql://u@h"), "postgresql://u@h");
    }

    #[test]
    fn a_build_without_postgres_says_so_for_a_url_and_names_no_password() {
        let e = without_postgres("postgres://u:s3cret@h/db");
        let text = e.to_string();
        assert!(text.contains("without PostgreSQL support"), "{text}");
        assert!(
            text.contains("postgres://u@h/db") && !text.contains("s3cret"),
            "{text}"
        );
        let LogError::Operator(op) = e else {
            panic!("not an operator error: {e:?}")
        };
        assert_eq!(op.io_kind(), Some(std::io::ErrorKind::Unsupported));
    }
}
