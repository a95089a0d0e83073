//! What is checked and how a file is opened before it is treated as a
//! store: a SQLite file of another program is refused untouched, and a
//! store opened to be read is read without writing a byte beside it (no
//! `-wal` or `-shm` file, no lock, no change of mode), as the read-only
//! commands promise.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// The tables of a file that is some other program's SQLite database: it
/// has tables, and not netbench's (`runs`), or tables with no schema
/// version. None for netbench's own stores and for empty files.
pub(super) fn foreign_tables(conn: &Connection) -> rusqlite::Result<Option<Vec<String>>> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
         ORDER BY name",
    )?;
    let tables: Vec<String> = stmt
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    if tables.is_empty() {
        return Ok(None);
    }
    let version = super::schema::user_version(conn)?;
    let ours = version > 0 && tables.iter().any(|t| t == "runs");
    Ok((!ours).then_some(tables))
}

/// `store.sqlite-wal` beside `store.sqlite`.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Whether this process may write the file and its folder (where SQLite
/// makes its `-wal` and `-shm` files).
fn can_write(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    [path, dir].iter().all(|p| {
        let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: a valid NUL-terminated path; access only reads it.
        unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
    })
}

/// Opens the store at `path` to read it, writing nothing beside it.
///
/// - No `-wal` beside it (no writer, everything checkpointed): the file is
///   the whole store, opened `immutable`, so SQLite takes no lock and makes
///   no `-wal` or `-shm`, even in a folder the reader cannot write.
/// - A `-wal` beside it (a run writing now, or one that died): the live
///   files are read where they are when they can be written (the writer's
///   own files, nothing new), else through a private copy of both, since a
///   reader that cannot write the `-shm` cannot read the WAL in place.
pub(super) fn open_reader(path: &Path, busy: Duration) -> rusqlite::Result<Connection> {
    open_reader_as(path, busy, can_write(path))
}

pub(super) fn open_reader_as(
    path: &Path,
    busy: Duration,
    writable: bool,
) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if !beside(path, "-wal").exists() {
        return Connection::open_with_flags(
            immutable_uri(path),
            flags | OpenFlags::SQLITE_OPEN_URI,
        );
    }
    if writable {
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(busy)?;
        return Ok(conn);
    }
    read_through_copy(path)
}

/// `file:/the/path?immutable=1`, the path percent-encoded where the URI
/// syntax needs it.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        match b {
            b'?' | b'#' | b'%' => uri.push_str(&format!("%{b:02X}")),
            _ if b.is_ascii() && !b.is_ascii_control() => uri.push(b as char),
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// The store and its WAL copied to a private folder, opened there (SQLite
/// replays the WAL), and copied whole into memory; the folder is removed.
fn read_through_copy(path: &Path) -> rusqlite::Result<Connection> {
    use std::os::unix::fs::DirBuilderExt;
    let io = |e: std::io::Error| {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some(format!("copying the store to read its WAL: {e}")),
        )
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir =
        std::env::temp_dir().join(format!("netbench-read-{}-{nanos:08x}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(io)?;
    let copied = (|| {
        let db = dir.join("store.sqlite");
        std::fs::copy(path, &db).map_err(io)?;
        std::fs::copy(beside(path, "-wal"), beside(&db, "-wal")).map_err(io)?;
        let file = Connection::open(&db)?;
        let mut memory = Connection::open_in_memory()?;
        rusqlite::backup::Backup::new(&file, &mut memory)?.run_to_completion(
            1024,
            Duration::ZERO,
            None,
        )?;
        Ok(memory)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    copied
}

#[cfg(test)]
mod tests {
    use super::immutable_uri;
    use std::path::Path;

    #[test]
    fn the_uri_keeps_the_path_and_escapes_what_uris_read() {
        assert_eq!(
            immutable_uri(Path::new("/a b/x?y#z%.sqlite")),
            "file:/a b/x%3Fy%23z%25.sqlite?immutable=1"
        );
    }
}
