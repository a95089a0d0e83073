//! Where server and build output goes: one folder per netbench process in the
//! temporary folder, readable by its owner only, each file created new, so
//! nobody else can read a server's output or plant a link it is written
//! through. A log no longer needed is removed with [`remove`], and the
//! folder with its last log; a log kept for the user (a failed build's) is
//! cut to its last [`KEPT_MAX`] bytes ([`keep`]). A server's output, which
//! may never stop, is bounded while it is written ([`capture`]): its first
//! and last [`KEPT_MAX`] bytes are kept, and what was cut between is
//! counted.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, PipeReader, PipeWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The folder while it exists; None before the first log and after the
/// last one is removed.
static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The most of a kept log left on disk: its end, where a build says what
/// went wrong. A chatty build once left 96 MB.
pub(crate) const KEPT_MAX: u64 = 1 << 20;

/// This process's private log folder, made when there is none.
fn dir(slot: &mut Option<PathBuf>) -> io::Result<PathBuf> {
    if let Some(d) = slot.as_ref().filter(|d| d.is_dir()) {
        return Ok(d.clone());
    }
    let base = std::env::temp_dir();
    let mut last = None;
    for attempt in 0..16u32 {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let d = base.join(format!(
            "netbench-{}-{nanos:08x}{attempt:x}",
            std::process::id()
        ));
        // mkdir never follows a link at its last component and fails on
        // anything already there: the folder is ours alone.
        match DirBuilder::new().mode(0o700).create(&d) {
            Ok(()) => {
                *slot = Some(d.clone());
                return Ok(d);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free log folder name")))
}

/// A new log file named after `stem` in the private folder.
pub(crate) fn create(stem: &str) -> io::Result<(PathBuf, File)> {
    let mut slot = DIR.lock().unwrap_or_else(|e| e.into_inner());
    let dir = dir(&mut slot)?;
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    for n in 0u32.. {
        let path = if n == 0 {
            dir.join(format!("{stem}.log"))
        } else {
            dir.join(format!("{stem}-{n}.log"))
        };
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("u32 names run out first")
}

/// Removes a log, and the folder when it was the last one in it.
pub(crate) fn remove(log: &Path) {
    let mut slot = DIR.lock().unwrap_or_else(|e| e.into_inner());
    let _ = std::fs::remove_file(log);
    if let Some(d) = slot.as_ref() {
        // remove_dir fails on a folder that still holds a log: kept.
        if log.parent() == Some(d.as_path()) && std::fs::remove_dir(d).is_ok() {
            *slot = None;
        }
    }
}

/// Cuts a log kept for the user to its last [`KEPT_MAX`] bytes, with a
/// first line that says how much went.
pub(crate) fn keep(log: &Path) -> io::Result<()> {
    let len = std::fs::metadata(log)?.len();
    if len <= KEPT_MAX {
        return Ok(());
    }
    let mut tail = Vec::with_capacity(KEPT_MAX as usize);
    let mut f = File::open(log)?;
    f.seek(SeekFrom::Start(len - KEPT_MAX))?;
    f.read_to_end(&mut tail)?;
    let mut out = OpenOptions::new().write(true).truncate(true).open(log)?;
    writeln!(
        out,
        "[netbench: the first {} bytes of this log were dropped; the last {KEPT_MAX} follow]",
        len - KEPT_MAX
    )?;
    out.write_all(&tail)
}

/// A log written through a pipe: what the writer end gets lands in the
/// file bounded, whatever its volume. A server that wrote without pause
/// filled 3.49 GB in 5 s of one cell (issue 42); the file now holds at most
/// its first and last [`KEPT_MAX`] bytes and a line between that says how
/// much was cut.
pub(crate) struct Captured {
    /// Bytes of output dropped between the kept head and tail so far.
    cut: Arc<AtomicU64>,
}

impl Captured {
    /// Bytes the log dropped so far (0: it holds everything).
    pub(crate) fn cut(&self) -> u64 {
        self.cut.load(Ordering::Relaxed)
    }
}

/// How often, at most, the kept tail is written out while output goes on:
/// a flood rewrites at most [`KEPT_MAX`] bytes this often, and the file's
/// end (read for error messages) is never staler.
const TAIL_EVERY: Duration = Duration::from_millis(200);

/// A new log file named after `stem` (see [`create`]) and the writer end of
/// a pipe to pass as a child's stdout and stderr. A thread copies the pipe
/// into the file until every writer is closed (the child and whatever it
/// started have ended), pinned to `cpus` when given: a server's output
/// costs the server's CPUs, not the client's.
pub(crate) fn capture(
    stem: &str,
    cpus: Option<&[usize]>,
) -> io::Result<(PathBuf, PipeWriter, Captured)> {
    let (path, file) = create(stem)?;
    let (reader, writer) = io::pipe()?;
    let cut = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&cut);
    let cpus = cpus.map(<[usize]>::to_vec);
    std::thread::Builder::new()
        .name("server-log".into())
        .spawn(move || {
            if let Some(cpus) = cpus {
                let _ = crate::placement::pin_current_thread(&cpus);
            }
            let _ = copy_bounded(reader, file, KEPT_MAX, &counted);
        })?;
    Ok((path, writer, Captured { cut }))
}

/// Copies `from` into `file` until its end: the first `keep` bytes as
/// they come, then the last `keep` in memory, written after them (with a
/// line saying how much was dropped) at most every [`TAIL_EVERY`] and at
/// the end.
fn copy_bounded(
    mut from: PipeReader,
    mut file: File,
    keep: u64,
    cut: &AtomicU64,
) -> io::Result<()> {
    let mut head_left = keep;
    let mut tail = Tail::new(keep as usize);
    let mut buf = vec![0u8; 64 * 1024];
    let mut written_at = Instant::now();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut data = &buf[..n];
        if head_left > 0 {
            let take = data.len().min(head_left as usize);
            file.write_all(&data[..take])?;
            head_left -= take as u64;
            data = &data[take..];
        }
        if !data.is_empty() {
            tail.push(data);
            cut.store(tail.dropped, Ordering::Relaxed);
            if written_at.elapsed() >= TAIL_EVERY {
                tail.write_after(&mut file, keep)?;
                written_at = Instant::now();
            }
        }
    }
    if tail.dirty {
        tail.write_after(&mut file, keep)?;
    }
    Ok(())
}

/// The last bytes of a stream, in a ring of fixed size.
struct Tail {
    ring: Vec<u8>,
    /// Where the oldest byte is, once the ring is full.
    start: usize,
    /// Bytes that fell out of the ring.
    dropped: u64,
    /// Changed since it was last written out.
    dirty: bool,
}

impl Tail {
    fn new(size: usize) -> Self {
        Tail {
            ring: Vec::with_capacity(size),
            start: 0,
            dropped: 0,
            dirty: false,
        }
    }

    fn push(&mut self, mut data: &[u8]) {
        let size = self.ring.capacity();
        self.dirty = true;
        if data.len() > size {
            let skip = data.len() - size;
            self.dropped += (skip + self.ring.len()) as u64;
            data = &data[skip..];
            self.ring.clear();
            self.start = 0;
        }
        let room = size - self.ring.len();
        let fits = data.len().min(room);
        self.ring.extend_from_slice(&data[..fits]);
        // Full: the oldest bytes are overwritten, a slice at a time.
        let mut rest = &data[fits..];
        while !rest.is_empty() {
            let n = rest.len().min(size - self.start);
            self.ring[self.start..self.start + n].copy_from_slice(&rest[..n]);
            self.start = (self.start + n) % size;
            self.dropped += n as u64;
            rest = &rest[n..];
        }
    }

    /// Writes the tail after the first `at` bytes of `file`, replacing
    /// what an earlier call wrote there.
    fn write_after(&mut self, file: &mut File, at: u64) -> io::Result<()> {
        file.set_len(at)?;
        file.seek(SeekFrom::Start(at))?;
        if self.dropped > 0 {
            writeln!(
                file,
                "\n[netbench: {} bytes of this server's output were cut here; the last {} follow]",
                self.dropped,
                self.ring.len()
            )?;
        }
        file.write_all(&self.ring[self.start..])?;
        file.write_all(&self.ring[..self.start])?;
        self.dirty = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_folder_and_new_files() {
        let (a, _) = create("srv/../x y").unwrap();
        let (b, _) = create("srv/../x y").unwrap();
        assert_ne!(a, b);
        assert_eq!(a.parent(), b.parent());
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("srv_.._x_y"));
        let mode = std::fs::metadata(a.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        let mode = std::fs::metadata(&a).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    /// Issue 27: every run left an empty `netbench-PID-*` folder behind.
    #[test]
    fn the_folder_goes_with_its_last_log_and_comes_back_for_the_next() {
        let (a, _) = create("first").unwrap();
        let (b, _) = create("second").unwrap();
        let folder = a.parent().unwrap().to_path_buf();
        remove(&a);
        assert!(folder.is_dir(), "removed while a log was in it");
        // Other tests of this process may hold logs in it too: only once
        // every log is gone does it go.
        remove(&b);
        if std::fs::read_dir(&folder).map_or(true, |mut d| d.next().is_none()) {
            assert!(!folder.exists(), "the empty folder was left behind");
        }
        let (c, _) = create("third").unwrap();
        assert!(c.parent().unwrap().is_dir());
        remove(&c);
    }

    /// Issue 42: a server's endless output is kept as its first and last
    /// `keep` bytes, with a line that says how much went between.
    #[test]
    fn captured_output_keeps_its_head_and_tail_and_counts_the_cut() {
        let (log, file) = create("captured").unwrap();
        let (reader, mut writer) = io::pipe().unwrap();
        let cut = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&cut);
        let copier = std::thread::spawn(move || copy_bounded(reader, file, 1000, &counted));
        writer.write_all(b"FIRST").unwrap();
        // 5 MB in uneven pieces, then the end: far past the 2,000 kept.
        let piece: Vec<u8> = (0..7919u32).map(|i| b'a' + (i % 26) as u8).collect();
        for _ in 0..640 {
            writer.write_all(&piece).unwrap();
        }
        writer.write_all(b"LAST").unwrap();
        drop(writer);
        copier.join().unwrap().unwrap();
        let text = std::fs::read_to_string(&log).unwrap();
        let total = 5 + 640 * 7919 + 4;
        assert!(text.starts_with("FIRST"));
        assert!(text.ends_with("LAST"));
        let said = format!(
            "[netbench: {} bytes of this server's output were cut here; the last 1000 follow]",
            total - 2000
        );
        assert!(text.contains(&said), "{}", &text[1000..1200]);
        assert_eq!(cut.load(Ordering::Relaxed), total as u64 - 2000);
        assert_eq!(text.len(), 2000 + said.len() + 2);
        // The kept tail is the stream's end, in order.
        let whole: Vec<u8> = [&b"FIRST"[..], &piece.repeat(640), b"LAST"].concat();
        assert_eq!(
            text.as_bytes()[text.len() - 1000..],
            whole[whole.len() - 1000..]
        );
        remove(&log);

        // Short output is kept whole, with no line.
        let (log, file) = create("captured-short").unwrap();
        let (reader, mut writer) = io::pipe().unwrap();
        let counted = Arc::new(AtomicU64::new(0));
        let copier = std::thread::spawn(move || copy_bounded(reader, file, 1000, &counted));
        writer.write_all(&[b'x'; 1500]).unwrap();
        drop(writer);
        copier.join().unwrap().unwrap();
        assert_eq!(std::fs::read(&log).unwrap(), vec![b'x'; 1500]);
        remove(&log);
    }

    #[test]
    fn a_kept_log_is_cut_to_its_end() {
        let (log, mut f) = create("kept").unwrap();
        f.write_all(&vec![b'x'; KEPT_MAX as usize + 10]).unwrap();
        f.write_all(b"LAST").unwrap();
        drop(f);
        keep(&log).unwrap();
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.starts_with("[netbench: the first 14 bytes"),
            "{}",
            &text[..80]
        );
        assert!(text.ends_with("LAST"));
        assert!(text.len() as u64 <= KEPT_MAX + 100);
        remove(&log);
    }
}
