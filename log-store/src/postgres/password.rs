//! Where a password comes from when the URL has none, as libpq (`psql`) finds it, so a store
//! URL never has to carry one (it would land in settings files and shell history): the
//! `PGPASSWORD` variable, else the password file (`PGPASSFILE`, else `~/.pgpass`), whose lines
//! are `host:port:database:user:password` with `*` for any and `\:` / `\\` escapes. As libpq
//! does, a password file that others may read is ignored, with a warning.

use std::path::PathBuf;

use postgres::Config;
use postgres::config::Host;

/// Sets `config`'s password from `PGPASSWORD` or the password file when it has none.
pub(super) fn fill(config: &mut Config) {
    if config.get_password().is_some() {
        return;
    }
    if let Some(p) = std::env::var_os("PGPASSWORD") {
        config.password(p.to_string_lossy().as_bytes());
        return;
    }
    let Some(path) = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))
    else {
        return;
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(&path)
            && meta.permissions().mode() & 0o077 != 0
        {
            tracing::warn!(
                file = %path.display(),
                "the password file may be read by others; ignoring it (chmod 600 it, as psql requires)"
            );
            return;
        }
    }
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        #[cfg(unix)]
        Some(Host::Unix(_)) => "localhost".to_owned(),
        None => "localhost".to_owned(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_owned();
    let db = config.get_dbname().unwrap_or(&user).to_owned();
    if let Some(p) = lookup(&text, [&host, &port, &db, &user]) {
        config.password(p.as_bytes());
    }
}

/// The password of the first line of a password file matching `want` (host, port, database,
/// user).
fn lookup(text: &str, want: [&str; 4]) -> Option<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .find_map(|line| {
            let fields = split(line);
            if fields.len() < 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(want)
                .all(|(f, w)| f == "*" || f == w);
            matches.then(|| fields[4..].join(":"))
        })
}

/// A password-file line's fields, `\:` and `\\` unescaped.
fn split(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next()
                    && let Some(last) = fields.last_mut()
                {
                    last.push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => {
                if let Some(last) = fields.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_line_wins_with_wildcards_and_escapes() {
        let file = "# comment\n\
                    other:5432:plans:ann:no\n\
                    db.internal:5432:plans:ann:s3cr\\:et\n\
                    *:*:*:ann:fallback\n";
        assert_eq!(
            lookup(file, ["db.internal", "5432", "plans", "ann"]).as_deref(),
            Some("s3cr:et")
        );
        assert_eq!(
            lookup(file, ["elsewhere", "6543", "x", "ann"]).as_deref(),
            Some("fallback")
        );
        assert_eq!(lookup(file, ["db.internal", "5432", "plans", "bob"]), None);
        assert_eq!(lookup("short:line", ["a", "b", "c", "d"]), None);
    }
}
