//! Writing output files at names a user chose or a tool predicts (`hostbench-report.html`,
//! `results/HOST-DATE-NN`, interbench's log) so that another user's symlink or file planted at
//! that name cannot turn root against anyone. A whole file is written under a new unpredictable
//! name and renamed into place; a file appended to must be a regular file of this user's, opened
//! without following a symlink; a directory written into must be this user's.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::dir::{euid, split_file, type_name, Dir, Trust};

/// Writes `bytes` to an output file a user named (`-o FILE`, the report's default name),
/// deciding by what was opened (`O_NOFOLLOW`, then `fstat`), never by a look before the
/// open, so that `-o /dev/null` as root never replaces the device and a name swapped between
/// a look and the open is never written through. See [`Dir::write_output`] for each case. The
/// directory is reached without following another user's symbolic link.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    let (dir, name) = split_file(path)?;
    Dir::open(&dir, Trust::Reach)?.write_output(&name, bytes)
}

/// Reads the whole of `path`, a regular file of at most `limit` bytes: a FIFO would block the
/// read until another process writes, a device such as `/dev/zero` never ends, so anything but
/// a regular file is refused, and a file longer than `limit` is refused once `limit` bytes are
/// read (it may grow while it is read).
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_checked(path, limit, |_| Ok(()))
}

/// A secret's file as libpq takes its password file: a regular file (a FIFO is not waited on)
/// that neither its group nor anyone else may read or write (mode 0600 or less), read up to
/// `limit` bytes. Anything else is refused with why, and not read.
pub fn read_private(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_checked(path, limit, |meta| {
        if meta.mode() & 0o077 != 0 {
            return Err(io::Error::other(format!(
                "ignored, as libpq ignores it: its group or others may use it (mode {:04o}; 0600 or less)",
                meta.mode() & 0o7777
            )));
        }
        Ok(())
    })
}

/// A file this program wrote for itself and acts on (`history --state`): a regular file of
/// this user's that neither its group nor others may write, read up to `limit` bytes. Another
/// user's, or one others could have changed, is refused with why, and not read.
pub fn read_own(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_checked(path, limit, |meta| {
        if meta.uid() != euid() {
            return Err(io::Error::other(format!(
                "it is user {}'s, not this user's ({})",
                meta.uid(),
                euid()
            )));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(io::Error::other(format!(
                "its group or others may write it (mode {:04o})",
                meta.mode() & 0o7777
            )));
        }
        Ok(())
    })
}

/// `read_regular`, with `check` of the opened file's metadata before anything is read.
fn read_checked(
    path: &Path,
    limit: u64,
    check: impl Fn(&std::fs::Metadata) -> io::Result<()>,
) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(format!(
            "it is {}",
            type_name(rustix::fs::FileType::from_raw_mode(meta.mode()))
        )));
    }
    check(&meta)?;
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

/// Opens the directory `dir`, creating it (and its parents, mode 0755 whatever the umask) if
/// needed, and checks that it, as reached, is a directory of this user's: files written into
/// another user's directory could be read, replaced or linked by them. It is reached without
/// following another user's symbolic link, and held: what is written into it goes through the
/// returned descriptor.
pub fn own_directory(dir: &Path) -> Result<Dir> {
    let d = Dir::open_or_create(dir, 0o755, Trust::Reach)?;
    let st = d.stat()?;
    if st.st_uid != euid() {
        bail!(
            "{} belongs to another user (uid {}); refusing to write there",
            dir.display(),
            st.st_uid
        );
    }
    Ok(d)
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
/// through its descriptor (never through a symlink or into a file someone else prepared).
pub fn write_report_pair(dir: &Path, host: &str, text: &str, html: &str) -> Result<PathBuf> {
    let held = own_directory(dir)?;
    // A name in the held directory, never a path through another one.
    let host = host.replace('/', "_");
    let day = chrono::Local::now().format("%Y-%m-%d");
    for n in 1..1000 {
        let name = format!("{host}-{day}-{n:02}");
        let html_name = format!("{name}.html");
        if held.stat_at(&html_name).is_ok() {
            continue;
        }
        let Ok(mut f) = held.create_new(&name, 0o644) else {
            continue;
        };
        let written = f.write_all(text.as_bytes()).and_then(|_| {
            let mut h = held.create_new(&html_name, 0o644)?;
            h.write_all(html.as_bytes())
        });
        if let Err(e) = written {
            let _ = held.remove_file(&name);
            let _ = held.remove_file(&html_name);
            return Err(e).with_context(|| format!("writing {}", dir.join(&name).display()));
        }
        return Ok(dir.join(name));
    }
    bail!("no free report name in {}", dir.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

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

    /// libpq's rule for a password file: one its group or others may use is ignored; a FIFO
    /// is not waited on; `/dev/zero` is not read at all.
    #[test]
    fn read_private_takes_a_file_of_mode_0600_or_less_and_nothing_else() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_private(&file, 1 << 20).unwrap(), b"*:*:*:*:pw\n");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = read_private(&file, 1 << 20).unwrap_err().to_string();
        assert!(err.contains("mode 0644"), "{err}");
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        std::fs::set_permissions(&fifo, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = read_private(&fifo, 1 << 20).unwrap_err().to_string();
        assert!(err.contains("FIFO") || err.contains("fifo"), "{err}");
        assert!(read_private(Path::new("/dev/zero"), 1 << 20).is_err());
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
}
