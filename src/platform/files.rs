//! Writing output files at names a user chose or a tool predicts (`hostbench-report.html`,
//! `results/HOST-DATE-NN`, interbench's log) without being turned against the user who runs
//! hostbench. In a world-writable directory another user may have put a symlink or a file of
//! their own at that name in advance; following it would let them make root overwrite any file,
//! or write into theirs. So: a whole file is written under a new unpredictable name and renamed
//! into place (a rename replaces a symlink, never follows it); a file appended to is opened
//! without following a symlink and must be a regular file of this user's; a directory written
//! into must be this user's.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

fn euid() -> u32 {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() }
}

/// Writes `bytes` as the whole content of `path`, mode 0644: into a new file of an
/// unpredictable name beside it, then renamed over `path`. A reader never sees half a file, a
/// failed write leaves nothing behind, and whatever stood at `path` (a symlink, another user's
/// file) is replaced, never written through.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.is_dir() {
            bail!("{} is a directory", path.display());
        }
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".hostbench-tmp-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.flush())
        .and_then(|_| {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
        })
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// What a file is, for a refusal: "a directory", "a FIFO", "a device", …
pub fn kind_name(kind: std::fs::FileType) -> &'static str {
    if kind.is_file() {
        "a regular file"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Writes `bytes` to an output file a user named (`-o FILE`, the report's default name).
/// What stands at `path` decides how, so that `-o /dev/null` as root never replaces the
/// device and a planted symlink is never written through:
/// - nothing, or a regular file: replaced whole ([`write_replacing`]);
/// - a character device or a FIFO (`/dev/null`, `/dev/tty`, `>(cmd)`): written into; a FIFO
///   with no reader is refused rather than waited on;
/// - a symbolic link of another user's: replaced, not followed. One of this user's or root's
///   (`/dev/stdout`) is followed: written into whatever it leads to, by the same rules;
/// - anything else (a directory, a socket, a block device): refused.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    let Ok(link) = std::fs::symlink_metadata(path) else {
        return write_replacing(path, bytes);
    };
    let me = euid();
    let followed = link.file_type().is_symlink() && (link.uid() == me || link.uid() == 0);
    if link.file_type().is_symlink() && !followed {
        return write_replacing(path, bytes);
    }
    let meta = if followed {
        match std::fs::metadata(path) {
            Ok(m) => m,
            // A link of this user's to nothing: the file is made where it leads.
            Err(_) => return write_into(path, bytes, true),
        }
    } else {
        link
    };
    let kind = meta.file_type();
    if kind.is_char_device() || kind.is_fifo() || (followed && kind.is_file()) {
        return write_into(path, bytes, followed && kind.is_file());
    }
    if kind.is_file() {
        return write_replacing(path, bytes);
    }
    bail!(
        "{} is {}: not a file to write output to",
        path.display(),
        kind_name(kind)
    )
}

/// Writes `bytes` into what `path` names (a device, a FIFO, or the file an own link leads
/// to, truncated first when `truncate`), never blocking on a FIFO that has no reader.
fn write_into(path: &Path, bytes: &[u8], truncate: bool) -> Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(truncate)
        .truncate(truncate)
        .mode(0o644)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => io::Error::other("a FIFO that no process reads"),
            _ => e,
        })
        .with_context(|| format!("opening {}", path.display()))?;
    clear_nonblock(&f)?;
    f.write_all(bytes)
        .and_then(|_| f.flush())
        .with_context(|| format!("writing {}", path.display()))
}

/// Reads the whole of `path`, a regular file of at most `limit` bytes: a FIFO would block the
/// read until another process writes, a device such as `/dev/zero` never ends, so anything but
/// a regular file is refused, and a file longer than `limit` is refused once `limit` bytes are
/// read (it may grow while it is read).
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(format!(
            "it is {}",
            kind_name(meta.file_type())
        )));
    }
    clear_nonblock(&file)?;
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::other(format!(
            "it is larger than {} MiB, the most hostbench reads",
            limit >> 20
        )));
    }
    Ok(bytes)
}

/// Opens `path` for appending, creating it (mode 0644) if needed. Refuses a symlink, anything
/// but a regular file (a FIFO would block the run), and a file of another user's.
pub fn open_append(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            // Say what stands there: the kernel's refusal of a symlink (ELOOP, or EACCES in a
            // sticky directory) or of a FIFO without a reader (ENXIO) names neither.
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => {
                    io::Error::other("it is a symbolic link (not followed)")
                }
                Ok(m) if !m.is_file() => io::Error::other("it is not a regular file"),
                Ok(m) if m.uid() != euid() => {
                    io::Error::other(format!("it belongs to another user (uid {})", m.uid()))
                }
                _ => e,
            }
        })
        .with_context(|| format!("opening {}", path.display()))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    if meta.uid() != euid() {
        bail!(
            "{} belongs to another user (uid {}); refusing to write into it",
            path.display(),
            meta.uid()
        );
    }
    clear_nonblock(&file)?;
    Ok(file)
}

fn clear_nonblock(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Creates `path` new (`O_EXCL`, which also refuses a symlink there), mode 0644.
pub fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path)
}

/// Creates `dir` and its missing parents with `mode` whatever the umask: under `umask 000` a
/// plain `create_dir_all` makes them writable by every user. The mode is narrowed by the
/// umask, never widened.
pub fn create_dirs(dir: &Path, mode: u32) -> Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))
}

/// Why `path` — a file or directory at or under the directory `root` — cannot be trusted to
/// be what this user put there, or None if it can: it, and every directory from it up to
/// `root` (both included), must belong to this user and be writable by no one else, and it
/// must not lead outside `root` through a symbolic link. A program in such a place can only
/// have been written by this user (or root); anywhere else another user may have planted it.
pub fn untrusted(root: &Path, path: &Path) -> Option<String> {
    let canonical =
        |p: &Path| std::fs::canonicalize(p).map_err(|e| format!("{}: {e}", p.display()));
    let (root, path) = match (canonical(root), canonical(path)) {
        (Ok(r), Ok(p)) => (r, p),
        (Err(e), _) | (_, Err(e)) => return Some(e),
    };
    if !path.starts_with(&root) {
        return Some(format!(
            "{} leads outside {} through a symbolic link",
            path.display(),
            root.display()
        ));
    }
    let me = euid();
    for p in path.ancestors().take_while(|p| p.starts_with(&root)) {
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => return Some(format!("{}: {e}", p.display())),
        };
        if meta.uid() != me {
            return Some(format!(
                "{} belongs to another user (uid {})",
                p.display(),
                meta.uid()
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Some(format!(
                "{} is writable by other users (mode {:04o})",
                p.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    None
}

/// Creates the directory `dir` (and its parents, mode 0755 whatever the umask) if needed, and
/// checks that it, as reached through any symlink, is a directory of this user's: files
/// written into another user's directory could be read, replaced or linked by them.
pub fn own_directory(dir: &Path) -> Result<()> {
    create_dirs(dir, 0o755)?;
    let me = euid();
    let link = std::fs::symlink_metadata(dir)?;
    let meta = std::fs::metadata(dir)?;
    if link.file_type().is_symlink() && link.uid() != me {
        bail!(
            "{} is a symbolic link of another user's (uid {}); refusing to write there",
            dir.display(),
            link.uid()
        );
    }
    if meta.uid() != me {
        bail!(
            "{} belongs to another user (uid {}); refusing to write there",
            dir.display(),
            meta.uid()
        );
    }
    Ok(())
}

/// Marks every descriptor this process inherited above standard error close-on-exec, so no
/// program hostbench starts (a worker, a test's shell) keeps one: a user's `flock 9 hostbench
/// …` lock would otherwise stay held by a worker that outlives a killed coordinator. What a
/// worker is given on purpose is handed over explicitly (`workers::Worker::spawn`).
pub fn close_inherited_on_exec() {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    // Collected first: reading the directory holds a descriptor of its own.
    let fds: Vec<i32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: fcntl on a descriptor number; one that closed meanwhile fails with EBADF.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// The first file named `program` in a directory of PATH, as a shell would find it.
pub fn on_path(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The bytes an unprivileged user can still write on the filesystem that holds `dir`.
pub fn free_bytes(dir: &Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: a valid C string and a statvfs to fill.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Writes `DIR/HOST-YYYY-MM-DD-NN` and its `.html` (UnixBench's report files), NN the first
/// number not yet used. The directory must be this user's, and both files are created new
/// (never through a symlink or into a file someone else prepared).
pub fn write_report_pair(dir: &Path, host: &str, text: &str, html: &str) -> Result<PathBuf> {
    own_directory(dir)?;
    let day = chrono::Local::now().format("%Y-%m-%d");
    for n in 1..1000 {
        let path = dir.join(format!("{host}-{day}-{n:02}"));
        let html_path = path.with_extension("html");
        if std::fs::symlink_metadata(&html_path).is_ok() {
            continue;
        }
        let Ok(mut f) = create_new(&path) else {
            continue;
        };
        let written = f.write_all(text.as_bytes()).and_then(|_| {
            let mut h = create_new(&html_path)?;
            h.write_all(html.as_bytes())
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_file(&html_path);
            return Err(e).with_context(|| format!("writing {}", path.display()));
        }
        return Ok(path);
    }
    bail!("no free report name in {}", dir.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replacing_replaces_a_symlink_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = dir.path().join("report.html");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_replacing(&out, b"page").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "page");
        assert!(!std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink());
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        // Nothing else left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn write_replacing_into_a_missing_directory_fails_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("no/such/dir/r.html");
        assert!(write_replacing(&out, b"x").is_err());
        assert!(write_replacing(dir.path(), b"x").is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn write_output_writes_into_a_device_and_a_fifo_and_refuses_a_directory() {
        let null = Path::new("/dev/null");
        let before = std::fs::symlink_metadata(null).unwrap();
        write_output(null, b"page").unwrap();
        let after = std::fs::symlink_metadata(null).unwrap();
        assert!(after.file_type().is_char_device());
        assert_eq!((before.ino(), before.dev()), (after.ino(), after.dev()));

        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let err = write_output(&fifo, b"x").unwrap_err();
        assert!(format!("{err:#}").contains("no process reads"), "{err:#}");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        // The reader opens the FIFO (and blocks) before the write: retry until it has.
        let mut tries = 0;
        while write_output(&fifo, b"through the fifo").is_err() {
            tries += 1;
            assert!(tries < 500, "no reader came");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(reader.join().unwrap(), "through the fifo");
        assert!(std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo());

        let err = write_output(dir.path(), b"x").unwrap_err();
        assert!(format!("{err:#}").contains("is a directory"), "{err:#}");
        let sock = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let err = write_output(&sock, b"x").unwrap_err();
        assert!(format!("{err:#}").contains("is a socket"), "{err:#}");
    }

    #[test]
    fn write_output_follows_an_own_link_and_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.html");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_output(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let plain = dir.path().join("plain.html");
        write_output(&plain, b"one").unwrap();
        write_output(&plain, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "two");
    }

    #[test]
    fn read_regular_refuses_a_fifo_a_device_and_a_file_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let err = read_regular(&fifo, 1 << 20).unwrap_err().to_string();
        assert!(err.contains("a FIFO"), "{err}");
        let err = read_regular(Path::new("/dev/zero"), 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a device"), "{err}");
        let err = read_regular(dir.path(), 1 << 20).unwrap_err().to_string();
        assert!(err.contains("a directory"), "{err}");
        let file = dir.path().join("r.json");
        std::fs::write(&file, vec![b'x'; 3 << 20]).unwrap();
        let err = read_regular(&file, 2 << 20).unwrap_err().to_string();
        assert!(err.contains("larger than 2 MiB"), "{err}");
        assert_eq!(read_regular(&file, 3 << 20).unwrap().len(), 3 << 20);
    }

    #[test]
    fn open_append_refuses_a_symlink_and_a_fifo_and_appends_to_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let log = dir.path().join("x.log");
        std::os::unix::fs::symlink(&victim, &log).unwrap();
        let err = open_append(&log).unwrap_err();
        assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

        let fifo = dir.path().join("fifo.log");
        mkfifo(&fifo);
        let err = open_append(&fifo).unwrap_err();
        assert!(format!("{err:#}").contains("not a regular file"), "{err:#}");

        let ok = dir.path().join("ok.log");
        open_append(&ok).unwrap().write_all(b"a").unwrap();
        open_append(&ok).unwrap().write_all(b"b").unwrap();
        assert_eq!(std::fs::read_to_string(&ok).unwrap(), "ab");
    }

    #[test]
    fn create_dirs_gives_every_new_directory_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        create_dirs(&deep, 0o700).unwrap();
        for p in [dir.path().join("a"), dir.path().join("a/b"), deep] {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", p.display());
        }
    }

    #[test]
    fn untrusted_names_a_directory_others_can_write_and_a_link_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("cache");
        let prog = root.join("native/h/prog");
        create_dirs(prog.parent().unwrap(), 0o700).unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(&prog, "x").unwrap();
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(untrusted(&root, &prog), None);

        std::fs::set_permissions(root.join("native"), std::fs::Permissions::from_mode(0o777))
            .unwrap();
        let why = untrusted(&root, &prog).unwrap();
        assert!(
            why.contains("native is writable by other users (mode 0777)"),
            "{why}"
        );
        std::fs::set_permissions(root.join("native"), std::fs::Permissions::from_mode(0o700))
            .unwrap();

        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o775)).unwrap();
        assert!(untrusted(&root, &prog)
            .unwrap()
            .contains("prog is writable"));
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();

        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "x").unwrap();
        let link = root.join("native/h/link");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        assert!(untrusted(&root, &link).unwrap().contains("leads outside"));
        assert!(untrusted(&root, &root.join("missing")).is_some());
    }

    #[test]
    fn create_new_refuses_an_existing_name_and_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("r-01");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(create_new(&link).is_err());
        assert!(create_new(&victim).is_err());
        assert!(create_new(&dir.path().join("r-02")).is_ok());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }
}
