//! Shared helpers of the workspace-level integration tests.
//!
//! | module | what |
//! |---|---|
//! | `scenario` | the scripted-model scenario runner behind `tests/scenarios.rs` |
//! | (root) | [`TempStore`]: a redb store in a temporary folder; [`TempPg`]: a fresh database on the test PostgreSQL server; [`OwnCluster`]: a PostgreSQL server of its own, to kill and restart |
//!
//! Binaries: `crash_child` (the SIGKILL tests' victim), `plan_writer` (one of many writer
//! processes), `hook_latency` and `mcp_latency` (BENCHMARKS.md), `hook_probe` (a bare process-per-call
//! hook for `hook_latency` to run beside planlog), `make_store` (builds large stores
//! for the limits in BENCHMARKS.md).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support code

pub mod scenario;

use planlog_core::EventLog;
use planlog_store::{Indexing, JournaledLog, PgLog, RedbLog};

/// A [`RedbLog`] in a temporary folder that lives as long as it does.
pub struct TempStore {
    /// The log.
    pub log: RedbLog,
    /// The folder (deleted on drop).
    pub dir: tempfile::TempDir,
}

impl TempStore {
    /// A fresh, empty store.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = RedbLog::open(dir.path().join("planlog.redb")).unwrap();
        Self { log, dir }
    }
}

impl Default for TempStore {
    fn default() -> Self {
        Self::new()
    }
}

impl AsRef<dyn EventLog> for TempStore {
    fn as_ref(&self) -> &(dyn EventLog + 'static) {
        &self.log
    }
}

/// A [`JournaledLog`] (the journal and its index) in a temporary folder that lives as long
/// as it does.
pub struct TempJournaled {
    /// The log.
    pub log: JournaledLog,
    /// The folder (deleted on drop).
    pub dir: tempfile::TempDir,
}

impl TempJournaled {
    /// A fresh, empty store indexed on a thread of its own (the default).
    pub fn new() -> Self {
        Self::indexed(Indexing::Background)
    }

    /// A fresh, empty store indexed as `indexing` says.
    pub fn indexed(indexing: Indexing) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = JournaledLog::options()
            .indexing(indexing)
            .open(dir.path().join("planlog.redb"))
            .unwrap();
        Self { log, dir }
    }
}

impl Default for TempJournaled {
    fn default() -> Self {
        Self::new()
    }
}

impl AsRef<dyn EventLog> for TempJournaled {
    fn as_ref(&self) -> &(dyn EventLog + 'static) {
        &self.log
    }
}

/// The test PostgreSQL server's URL (`PLANLOG_TEST_POSTGRES`, set by `.ci/with-postgres`), or
/// `None` after printing SKIPPED: except that CI (`PLANLOG_REQUIRE_POSTGRES`) fails instead.
pub fn postgres_url() -> Option<String> {
    match std::env::var("PLANLOG_TEST_POSTGRES") {
        Ok(url) => Some(url),
        Err(_) => {
            assert!(
                std::env::var_os("PLANLOG_REQUIRE_POSTGRES").is_none(),
                "PLANLOG_REQUIRE_POSTGRES is set but PLANLOG_TEST_POSTGRES is not: run under .ci/with-postgres"
            );
            eprintln!("SKIPPED: no PLANLOG_TEST_POSTGRES (run the tests under .ci/with-postgres)");
            None
        }
    }
}

/// A fresh database on the test PostgreSQL server, dropped with this value.
pub struct TempPg {
    /// The log on it.
    pub log: PgLog,
    /// Its URL.
    pub url: String,
    admin: String,
    name: String,
    roles: std::sync::Mutex<Vec<String>>,
}

impl TempPg {
    /// A new database (`None`: no test server, see [`postgres_url`]).
    pub fn new() -> Option<Self> {
        let admin = postgres_url()?;
        let name = format!("planlog_t_{}", ulid::Ulid::new().to_string().to_lowercase());
        let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        let url = format!("{}/{name}", admin.rsplit_once('/').unwrap().0);
        let log = PgLog::open(&url).unwrap();
        Some(Self {
            log,
            url,
            admin,
            name,
            roles: std::sync::Mutex::default(),
        })
    }
}

impl TempPg {
    /// Runs `sql` on this database as the server's superuser (roles, grants, planted rows).
    pub fn execute(&self, sql: &str) {
        let mut client = postgres::Client::connect(&self.url, postgres::NoTls).unwrap();
        client.batch_execute(sql).unwrap();
    }

    /// Runs `sql` in a transaction of its own that stays open (holding the locks it took, as
    /// a long import holding a session's row does) until the returned value is dropped.
    pub fn hold(&self, sql: &str) -> Held {
        let mut client = postgres::Client::connect(&self.url, postgres::NoTls).unwrap();
        client.batch_execute(&format!("BEGIN; {sql}")).unwrap();
        Held(client)
    }

    /// A new login role of its own (`<what>_<this database>`), with no privileges; dropped
    /// with the database. Returns its name.
    pub fn role(&self, what: &str) -> String {
        let role = format!("{what}_{}", self.name);
        self.execute(&format!("CREATE ROLE {role} LOGIN"));
        self.roles.lock().unwrap().push(role.clone());
        role
    }

    /// This database's URL for the role `user` with `password` (trust authentication on the
    /// test server: the password is there to prove it is never printed).
    pub fn url_as(&self, user: &str, password: &str) -> String {
        let (_, rest) = self.url.split_once('@').unwrap();
        format!("postgres://{user}:{password}@{rest}")
    }
}

impl Drop for TempPg {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
            for role in self.roles.lock().unwrap().iter() {
                let _ = c.batch_execute(&format!("DROP ROLE IF EXISTS {role}"));
            }
        }
    }
}

impl AsRef<dyn EventLog> for TempPg {
    fn as_ref(&self) -> &(dyn EventLog + 'static) {
        &self.log
    }
}

/// A PostgreSQL cluster of its own (initdb into a temporary folder, on a free 127.0.0.1 port),
/// for the test that kills the server: the shared test server stays up for everyone else.
/// Built from `PLANLOG_TEST_PG_BIN` and run as `PLANLOG_TEST_PG_USER` (both set by
/// `.ci/with-postgres`); stopped and removed when dropped.
pub struct OwnCluster {
    /// The URL of its `postgres` database.
    pub url: String,
    bin: std::path::PathBuf,
    user: String,
    data: std::path::PathBuf,
    port: u16,
    _dir: tempfile::TempDir,
}

impl OwnCluster {
    /// Creates and starts it (`None` after printing SKIPPED when there is no test server).
    pub fn start() -> Option<Self> {
        Self::start_with(None)
    }

    /// [`OwnCluster::start`], with TCP connections authenticated by password (SCRAM) when
    /// `password` is given: the superuser `planlog` has that password (the URL holds none).
    pub fn start_with(password: Option<&str>) -> Option<Self> {
        postgres_url()?;
        let bin = std::path::PathBuf::from(std::env::var("PLANLOG_TEST_PG_BIN").ok()?);
        let user = std::env::var("PLANLOG_TEST_PG_USER").ok()?;
        let dir = tempfile::Builder::new()
            .prefix("planlog-own-pg")
            .tempdir()
            .unwrap();
        let me = std::process::Command::new("id")
            .arg("-un")
            .output()
            .unwrap();
        if String::from_utf8_lossy(&me.stdout).trim() != user {
            let ok = std::process::Command::new("chown")
                .arg(&user)
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(ok.success(), "chown the cluster folder to {user}");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let data = dir.path().join("cluster");
        let cluster = Self {
            url: format!("postgres://planlog@127.0.0.1:{port}/postgres"),
            bin,
            user,
            data,
            port,
            _dir: dir,
        };
        let data = cluster.data.display().to_string();
        let mut initdb = vec!["-D", &data, "-U", "planlog", "--no-sync"];
        let pwfile = cluster.data.with_file_name("pwfile");
        let pwfile_s = pwfile.display().to_string();
        match password {
            None => initdb.extend(["-A", "trust"]),
            Some(p) => {
                std::fs::write(&pwfile, p).unwrap();
                let _ = std::process::Command::new("chown")
                    .arg(&cluster.user)
                    .arg(&pwfile)
                    .status();
                initdb.extend([
                    "--auth-local",
                    "trust",
                    "--auth-host",
                    "scram-sha-256",
                    "--pwfile",
                    &pwfile_s,
                ]);
            }
        }
        cluster.run("initdb", &initdb);
        cluster.start_server();
        Some(cluster)
    }

    /// One of the server's programs, to be run as its user.
    fn command(&self, program: &str) -> std::process::Command {
        let path = self.bin.join(program);
        let me = std::process::Command::new("id")
            .arg("-un")
            .output()
            .unwrap();
        if String::from_utf8_lossy(&me.stdout).trim() == self.user {
            std::process::Command::new(&path)
        } else {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", &self.user, "--"]).arg(&path);
            c
        }
    }

    /// Runs one of the server's programs as its user; it must succeed.
    fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts the server (after [`OwnCluster::kill`]: crash recovery runs first).
    pub fn start_server(&self) {
        let data = self.data.display().to_string();
        let log = self.data.with_file_name("server.log").display().to_string();
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=on -c synchronous_commit=on",
            self.port,
            self.data.parent().unwrap().display()
        );
        let out = self
            .command("pg_ctl")
            .args(["-D", &data, "-w", "-l", &log, "-o", &opts, "start"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "starting the server: {}\nits log:\n{}",
            String::from_utf8_lossy(&out.stdout),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// The server's log so far.
    pub fn server_log(&self) -> String {
        std::fs::read_to_string(self.data.with_file_name("server.log")).unwrap_or_default()
    }

    /// Kills the server the hard way: SIGKILL to the postmaster and every backend at once
    /// (as a power cut would stop them), then waits until they are gone.
    pub fn kill(&self) {
        let pid = std::fs::read_to_string(self.data.join("postmaster.pid")).unwrap();
        let pid = pid.lines().next().unwrap().trim().to_owned();
        let children = std::process::Command::new("pgrep")
            .args(["-P", &pid])
            .output()
            .unwrap();
        let mut pids = vec![pid];
        pids.extend(
            String::from_utf8_lossy(&children.stdout)
                .split_whitespace()
                .map(str::to_owned),
        );
        // The postmaster first (it must die); a backend may have exited on its own since.
        for (i, pid) in pids.iter().enumerate() {
            let status = std::process::Command::new("kill")
                .args(["-9", pid])
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success() || i > 0, "kill -9 the postmaster {pid}");
        }
        // The folder's lock goes when every process of the server has exited.
        for _ in 0..800 {
            // Until reaped, even a zombie postmaster holds the folder: the next server
            // refuses to start while the pid in its lock file answers.
            let alive = pids
                .iter()
                .any(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
            if !alive {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("the killed server's processes did not exit");
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        let _ = self
            .command("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "stop"])
            .output();
    }
}

/// An open transaction on a test database, rolled back when dropped ([`TempPg::hold`]).
pub struct Held(postgres::Client);

impl Drop for Held {
    fn drop(&mut self) {
        let _ = self.0.batch_execute("ROLLBACK");
    }
}
