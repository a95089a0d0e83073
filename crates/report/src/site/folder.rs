//! The site's folder on disk: which folders it may be written into, each
//! page written whole (through a `.partial` file renamed into place), and
//! the list of what it wrote (`netbench-site.json`), by which the next write
//! knows the folder for a site of its own and removes the pages that are no
//! longer part of it. Nothing is written or removed through a symbolic link
//! inside the folder: a planted `index.html.partial` or `servers/` link
//! once made a write overwrite, and a removal delete, a file outside it
//! (issue 42).

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{pages, write_page, Site};

/// The file that marks a folder as a netbench site and lists its pages.
pub const MARKER: &str = "netbench-site.json";

/// The marker's layout version.
const FORMAT: &str = "netbench-site/1";

/// Why a site could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// The path is a file: the site is a folder.
    #[error(
        "{} is a file, not a folder; give a folder for the site (it is created when missing)",
        path.display()
    )]
    NotAFolder { path: PathBuf },
    /// The folder holds other files and no marker: writing there could
    /// replace someone's files.
    #[error(
        "{} is not empty and holds no netbench site (no {MARKER} in it); give a new or empty \
         folder, or force it (`netbench site --force`: pages of the same names are replaced, \
         other files left alone)",
        path.display()
    )]
    NotASite { path: PathBuf },
    #[error(
        "cannot read the folder {}: {source}; check its permissions",
        path.display()
    )]
    Read { path: PathBuf, source: io::Error },
    #[error(
        "cannot create the folder {}: {source}; check that its parent is writable",
        path.display()
    )]
    Create { path: PathBuf, source: io::Error },
    #[error(
        "cannot write {}: {source}; check the free space and the folder's permissions",
        path.display()
    )]
    Write { path: PathBuf, source: io::Error },
    /// A folder inside the site is a symbolic link: writing or removing
    /// through it could reach files outside the site.
    #[error(
        "{} is a symbolic link, and the site never writes or removes through one; remove the \
         link (a real folder is made in its place), or give another folder",
        path.display()
    )]
    Link { path: PathBuf },
}

/// What a write left in the folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// The pages, relative to the folder, index first.
    pub files: Vec<String>,
    /// Pages of the previous site that this one no longer has, removed.
    pub removed: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    format: String,
    files: Vec<String>,
}

/// Writes `site` into `dir`: a folder that is missing, empty, or holds an
/// earlier netbench site (whose pages no longer produced are removed);
/// with `force`, any folder (its other files are left alone).
pub fn write_site(site: &Site, dir: &Path, force: bool) -> Result<Written, SiteError> {
    let previous = previous_site(dir, force)?;
    let pages = pages(site);
    let files: Vec<String> = pages.iter().map(|(p, _)| p.clone()).collect();
    for sub in ["runs", "servers"] {
        let path = dir.join(sub);
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(SiteError::Create { path, source }),
        }
        real_folder(&path)?;
    }
    for (rel, page) in &pages {
        let mut html = Vec::new();
        write_page(&mut html, site, *page).expect("writing into memory cannot fail");
        write_whole(&dir.join(rel), &html)?;
    }
    let mut removed = Vec::new();
    for old in previous.unwrap_or_default() {
        if !files.contains(&old) && is_page_path(&old) {
            // Only through real folders: unlink then removes the entry
            // itself, never what a link names.
            let path = dir.join(&old);
            if let Some(parent) = path.parent().filter(|p| *p != dir) {
                real_folder(parent)?;
            }
            // Gone already is as good as removed.
            match std::fs::remove_file(&path) {
                Ok(()) => removed.push(old),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(SiteError::Write {
                        path: dir.join(&old),
                        source,
                    })
                }
            }
        }
    }
    // Last: a write cut short leaves the previous list, still a site's.
    let marker = serde_json::to_vec_pretty(&Marker {
        format: FORMAT.into(),
        files: files.clone(),
    })
    .expect("the marker serializes");
    write_whole(&dir.join(MARKER), &marker)?;
    Ok(Written { files, removed })
}

/// Whether `dir` may take the site, and the pages an earlier site there
/// listed (None when there was none).
fn previous_site(dir: &Path, force: bool) -> Result<Option<Vec<String>>, SiteError> {
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|source| SiteError::Create {
                path: dir.to_path_buf(),
                source,
            })?;
            return Ok(None);
        }
        Err(source) => {
            return Err(SiteError::Read {
                path: dir.to_path_buf(),
                source,
            })
        }
    };
    if !meta.is_dir() {
        return Err(SiteError::NotAFolder {
            path: dir.to_path_buf(),
        });
    }
    let read_failed = |source| SiteError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let marker = dir.join(MARKER);
    if marker.is_file() {
        // A damaged list still marks a site; only its stale pages stay.
        let text = std::fs::read(&marker).map_err(read_failed)?;
        let files = serde_json::from_slice::<Marker>(&text)
            .map(|m| m.files)
            .unwrap_or_default();
        return Ok(Some(files));
    }
    let empty = std::fs::read_dir(dir)
        .map_err(read_failed)?
        .next()
        .is_none();
    if empty || force {
        Ok(None)
    } else {
        Err(SiteError::NotASite {
            path: dir.to_path_buf(),
        })
    }
}

/// Removes the entry at `path` (a link itself, not its target), if any.
fn remove_entry(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// A page path the site could have written: relative, downwards only, an
/// HTML file. A marker edited by hand cannot make a write delete anything
/// else.
fn is_page_path(rel: &str) -> bool {
    let path = Path::new(rel);
    rel.ends_with(".html") && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// `path` is a folder itself, not a link to one (nor anything else).
fn real_folder(path: &Path) -> Result<(), SiteError> {
    let meta = std::fs::symlink_metadata(path).map_err(|source| SiteError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.file_type().is_symlink() {
        return Err(SiteError::Link {
            path: path.to_path_buf(),
        });
    }
    if !meta.is_dir() {
        return Err(SiteError::NotAFolder {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Writes `bytes` to `path` through `path.partial`, renamed into place, so
/// that a reader (or a web server) never sees half a page. The partial file
/// is made new (O_EXCL, which never follows a link): whatever was there
/// under its name (a stale one, or a planted link) is removed first, the
/// entry itself; and the rename replaces `path`'s entry, a link included,
/// never the file a link names.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), SiteError> {
    let mut partial = path.as_os_str().to_os_string();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let written = remove_entry(&partial)
        .and_then(|()| {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(&partial)
        })
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&partial, path));
    written.map_err(|source| {
        let _ = std::fs::remove_file(&partial);
        SiteError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("netbench-site-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn only_a_new_an_empty_or_a_site_folder_is_written_without_force() {
        let dir = scratch("folder");
        assert_eq!(previous_site(&dir, false).unwrap(), None);
        assert!(dir.is_dir(), "a missing folder is created");
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let err = previous_site(&dir, false).unwrap_err();
        assert!(matches!(err, SiteError::NotASite { .. }), "{err}");
        assert!(err.to_string().contains("--force"), "{err}");
        assert_eq!(previous_site(&dir, true).unwrap(), None);
        std::fs::write(
            dir.join(MARKER),
            r#"{"format":"netbench-site/1","files":["index.html","runs/1.html"]}"#,
        )
        .unwrap();
        assert_eq!(
            previous_site(&dir, false).unwrap(),
            Some(vec!["index.html".to_string(), "runs/1.html".to_string()])
        );
        let file = dir.join("notes.txt");
        let err = previous_site(&file, true).unwrap_err();
        assert!(matches!(err, SiteError::NotAFolder { .. }), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 42: a link planted as `index.html.partial` made the write
    /// overwrite its target; a page that is a link is replaced, not its
    /// target.
    #[test]
    fn a_write_never_goes_through_a_planted_link() {
        use std::os::unix::fs::symlink;
        let dir = scratch("partial-link");
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.with_extension("victim");
        std::fs::write(&victim, "precious").unwrap();
        symlink(&victim, dir.join("index.html.partial")).unwrap();
        write_whole(&dir.join("index.html"), b"<html>").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(
            std::fs::read_to_string(dir.join("index.html")).unwrap(),
            "<html>"
        );
        // A page that is itself a link: the link goes, its target stays.
        symlink(&victim, dir.join("other.html")).unwrap();
        write_whole(&dir.join("other.html"), b"<p>").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!std::fs::symlink_metadata(dir.join("other.html"))
            .unwrap()
            .file_type()
            .is_symlink());
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_file(&victim).unwrap();
    }

    /// Issue 42: `servers/` a link out of the site and a marker edited to
    /// list a page there made a write delete a page outside the site.
    #[test]
    fn a_removal_never_goes_through_a_linked_folder() {
        use std::os::unix::fs::symlink;
        let dir = scratch("servers-link");
        std::fs::create_dir_all(&dir).unwrap();
        let outside = dir.with_extension("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim.html"), "precious").unwrap();
        symlink(&outside, dir.join("servers")).unwrap();
        std::fs::write(
            dir.join(MARKER),
            r#"{"format":"netbench-site/1","files":["servers/victim.html"]}"#,
        )
        .unwrap();
        let site = super::super::build_site(Vec::new());
        let err = write_site(&site, &dir, false).unwrap_err();
        assert!(matches!(err, SiteError::Link { .. }), "{err}");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(
            std::fs::read_to_string(outside.join("victim.html")).unwrap(),
            "precious"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn a_marker_cannot_point_a_removal_outside_the_site() {
        assert!(is_page_path("servers/x.html"));
        assert!(!is_page_path("../x.html"));
        assert!(!is_page_path("/etc/x.html"));
        assert!(!is_page_path("notes.txt"));
    }
}
