//! A private PostgreSQL for suites with db scenarios: initdb in a temporary
//! folder, loopback only on a free port, default settings, the contract's
//! table loaded; in its own process group with a guard, so it never outlives
//! netbench, and its folder goes with it.

use std::ffi::CString;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::server::{free_port, in_own_group, spawn_guard, Cleanup};

/// How long PostgreSQL may take to accept connections after it starts.
const READY_WITHIN: Duration = Duration::from_secs(60);
/// The role and the database the servers use (CONTRACT.md, "db").
const USER: &str = "netbench";

#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin or on PATH): `apt-get install postgresql`, or `make server-deps`")]
    NotInstalled,
    #[error("PostgreSQL refuses to run as root, and this machine has no `postgres` user to run it as: create one (`useradd --system postgres`) or run netbench as another user")]
    NoUser,
    #[error("cannot prepare PostgreSQL's folder {path}: {source}")]
    Folder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{step} failed: {detail}")]
    Step { step: &'static str, detail: String },
    #[error("PostgreSQL did not accept connections within {0:?}; its log:\n{1}")]
    NotReady(Duration, String),
    #[error("cannot load contract/db/schema.sql into PostgreSQL: {0}")]
    Seed(String),
}

/// What the run records about the database it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgFacts {
    /// `SHOW server_version`.
    pub version: String,
    /// The CPUs it was pinned to (the server's): None when unpinned.
    pub cpus: Option<Vec<usize>>,
}

/// A running private PostgreSQL. Dropping it stops it and removes its folder.
pub struct PrivatePostgres {
    child: Child,
    guard: Option<Child>,
    dir: PathBuf,
    port: u16,
    pub facts: PgFacts,
}

/// The folder of the newest PostgreSQL's programs: Debian's layout first,
/// then PATH.
fn bin_dir() -> Result<PathBuf, PgError> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return Ok(bin);
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .find(|d| d.join("initdb").exists() && d.join("postgres").exists())
        .ok_or(PgError::NotInstalled)
}

/// The user and group to run PostgreSQL as: Debian's `postgres` when
/// netbench runs as root (PostgreSQL refuses root), else netbench's own.
fn run_as() -> Result<Option<(u32, u32)>, PgError> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = CString::new("postgres").expect("no NUL");
    // SAFETY: getpwnam returns a pointer into static storage or null; it is
    // read at once, before any other call could overwrite it.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err(PgError::NoUser);
    }
    // SAFETY: checked non-null above.
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some((uid, gid)))
}

fn as_user(cmd: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid);
    }
    cmd
}

fn step(step: &'static str, cmd: &mut Command) -> Result<(), PgError> {
    let out = cmd.output().map_err(|e| PgError::Step {
        step,
        detail: e.to_string(),
    })?;
    if out.status.success() {
        return Ok(());
    }
    Err(PgError::Step {
        step,
        detail: format!(
            "{}: {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    })
}

fn private_folder(user: Option<(u32, u32)>) -> Result<PathBuf, PgError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("netbench-pg-{}-{nanos}", std::process::id()));
    let err = |source| PgError::Folder {
        path: dir.clone(),
        source,
    };
    std::fs::create_dir(&dir).map_err(err)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(err)?;
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).map_err(err)?;
    }
    Ok(dir)
}

impl PrivatePostgres {
    /// Creates, starts and seeds a PostgreSQL on 127.0.0.1, pinned to `cpus`
    /// (the server's: the database shares them, as it would share a
    /// machine with the server it serves).
    pub fn start(cpus: Option<&[usize]>) -> Result<PrivatePostgres, PgError> {
        let bin = bin_dir()?;
        let user = run_as()?;
        let dir = private_folder(user)?;
        let data = dir.join("data");
        let started = Self::boot(&bin, user, &dir, &data, cpus);
        let mut pg = match started {
            Ok(pg) => pg,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        pg.seed()?;
        Ok(pg)
    }

    fn boot(
        bin: &Path,
        user: Option<(u32, u32)>,
        dir: &Path,
        data: &Path,
        cpus: Option<&[usize]>,
    ) -> Result<PrivatePostgres, PgError> {
        // Trust on loopback: the cluster lives for one run in a folder only
        // its user can read, and listens on 127.0.0.1 alone.
        step(
            "initdb",
            as_user(
                Command::new(bin.join("initdb")).arg("-D").arg(data).args([
                    "-U",
                    USER,
                    "-A",
                    "trust",
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "--no-sync",
                ]),
                user,
            ),
        )?;
        let port = free_port().map_err(|e| PgError::Step {
            step: "finding a free port",
            detail: e.to_string(),
        })?;
        let log =
            std::fs::File::create(dir.join("postgres.log")).map_err(|source| PgError::Folder {
                path: dir.to_path_buf(),
                source,
            })?;
        let log_err = log.try_clone().map_err(|source| PgError::Folder {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut cmd = Command::new(bin.join("postgres"));
        cmd.arg("-D")
            .arg(data)
            .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
            .arg("-k")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err);
        as_user(&mut cmd, user);
        // The group lets the guard and stop() reach the postmaster. Its
        // children start sessions of their own (setsid), so they are found
        // as its descendants (the sampler's members) and end when it does.
        in_own_group(&mut cmd, cpus);
        let child = cmd.spawn().map_err(|e| PgError::Step {
            step: "starting postgres",
            detail: e.to_string(),
        })?;
        let guard = spawn_guard(Some(child.id()), None, Cleanup::Folder(dir));
        Ok(PrivatePostgres {
            child,
            guard,
            dir: dir.to_path_buf(),
            port,
            facts: PgFacts {
                version: String::new(),
                cpus: cpus.map(<[usize]>::to_vec),
            },
        })
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Waits until it accepts connections, then creates the database and
    /// loads the contract's table.
    fn seed(&mut self) -> Result<(), PgError> {
        let admin = format!(
            "host=127.0.0.1 port={} user={USER} dbname=postgres",
            self.port
        );
        let began = Instant::now();
        let mut client = loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(PgError::Step {
                    step: "starting postgres",
                    detail: format!("it exited ({status}); its log:\n{}", self.log_tail()),
                });
            }
            match postgres::Client::connect(&admin, postgres::NoTls) {
                Ok(c) => break c,
                Err(_) if began.elapsed() < READY_WITHIN => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(_) => return Err(PgError::NotReady(READY_WITHIN, self.log_tail())),
            }
        };
        let seed_err = |e: postgres::Error| PgError::Seed(e.to_string());
        client
            .batch_execute(&format!("CREATE DATABASE {USER}"))
            .map_err(seed_err)?;
        let version: String = client
            .query_one("SHOW server_version", &[])
            .map_err(seed_err)?
            .get(0);
        drop(client);
        let mut db = postgres::Client::connect(&self.url(), postgres::NoTls).map_err(seed_err)?;
        db.batch_execute(netbench_contract::db::SCHEMA_SQL)
            .map_err(seed_err)?;
        self.facts.version = version;
        Ok(())
    }

    /// `DATABASE_URL` as the contract spells it.
    pub fn url(&self) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{USER}", self.port)
    }

    /// The postmaster's process id, which is also its group's id.
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// A fast shutdown (SIGINT: sessions are ended, nothing waits for
    /// clients), then SIGKILL to the group after a grace period; the folder
    /// is removed. Idempotent.
    pub fn stop(&mut self) {
        if let Some(mut guard) = self.guard.take() {
            let _ = guard.kill();
            let _ = guard.wait();
        }
        let pgid = self.child.id() as libc::pid_t;
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            // SAFETY: signalling the postmaster we started.
            unsafe { libc::kill(pgid, libc::SIGINT) };
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until && !matches!(self.child.try_wait(), Ok(Some(_))) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        // SAFETY: the group we created; harmless when it is empty.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = self.child.wait();
        // A backend killed with the group may still be writing for a moment:
        // the folder goes once the group is empty.
        let until = Instant::now() + Duration::from_secs(5);
        // SAFETY: signal 0 only asks whether the group has members.
        while unsafe { libc::kill(-pgid, 0) } == 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        if std::fs::remove_dir_all(&self.dir).is_err() {
            std::thread::sleep(Duration::from_millis(100));
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `DATABASE_POOL_SIZE` (CONTRACT.md, "db"): twice the CPUs the server and
/// PostgreSQL share, at least 4.
pub fn pool_size(server_cpus: Option<&[usize]>) -> usize {
    let cpus = server_cpus.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        <[usize]>::len,
    );
    (2 * cpus).max(4)
}

#[cfg(test)]
mod tests {
    use super::pool_size;

    #[test]
    fn the_pool_rule_is_twice_the_shared_cpus_at_least_four() {
        assert_eq!(pool_size(Some(&[0])), 4);
        assert_eq!(pool_size(Some(&[0, 1, 2])), 6);
        assert!(pool_size(None) >= 4);
    }
}
