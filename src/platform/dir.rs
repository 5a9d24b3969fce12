//! Directories held open by descriptor. hostbench runs as root on shared machines, where another
//! user can swap a name between a check of it and a use of it. So a directory it writes into,
//! reads a cache from or runs programs from is opened once, by a checked walk, and then used only
//! through its descriptor.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// The effective user this process acts as.
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Symbolic links followed in one walk before it is given up (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// How far a directory reached by [`Dir::open`] must be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Reached without following another user's symbolic link; who owns the directories on
    /// the way is not judged. For a place the user named to receive output.
    Reach,
    /// Also it and every directory on the way belong to this user or root and no one else can
    /// write them, except where the sticky bit is set (as /tmp's is: no one can then rename or
    /// remove what is not theirs in it). What hostbench makes in such a place stays its own: a
    /// work directory, where each run makes a private directory.
    OwnOrSticky,
    /// As `OwnOrSticky`, and the directory itself can be written by no one else at all, so
    /// nothing in it can have been put there by another user. For what hostbench runs, keeps
    /// or trusts by name: the cache of compiled programs, the result store (SQLite makes its
    /// journal beside the database by name).
    Own,
}

/// A directory held open. `path` is how it was named, for messages only: nothing is ever
/// opened by it again.
///
/// The walk starts at `/`, follows no other user's symbolic link, and checks each directory
/// as it is reached. Files are then created, opened, renamed and removed with the `*at`
/// calls, workers `fchdir` into the directory, and programs are executed from descriptors. A
/// name inside a directory that only this user (or root) can write cannot be swapped by anyone
/// else, so once the directory is held, what its names lead to is settled.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

fn errno_io(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

/// Why a directory another user could change is not trusted, or None. `strict`: not even a
/// sticky directory may be writable by others (the last directory under [`Trust::Own`]).
fn distrust(stat: &rfs::Stat, shown: &Path, strict: bool) -> Option<String> {
    let me = euid();
    if stat.st_uid != me && stat.st_uid != 0 {
        return Some(format!(
            "{} belongs to another user (uid {})",
            shown.display(),
            stat.st_uid
        ));
    }
    let mode = stat.st_mode & 0o7777;
    let sticky = mode & 0o1000 != 0;
    if mode & 0o022 != 0 && (strict || !sticky) {
        return Some(format!(
            "{} is writable by other users (mode {:04o})",
            shown.display(),
            mode
        ));
    }
    None
}

/// The parts of `path` a walk goes through: names and `..` (`.` and the root dropped).
fn parts(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect()
}

fn open_root() -> io::Result<OwnedFd> {
    rfs::openat(
        rfs::CWD,
        "/",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno_io)
}

/// Reads the target of the symbolic link held by `link` (an `O_PATH|O_NOFOLLOW` descriptor of
/// the link itself: the link read is the one whose owner was checked).
fn read_link(link: &OwnedFd) -> io::Result<PathBuf> {
    let target = rfs::readlinkat(link, "", Vec::new()).map_err(errno_io)?;
    Ok(PathBuf::from(OsString::from_vec(target.into_bytes())))
}

impl Dir {
    /// Opens the directory `path` (relative to the current directory if not absolute),
    /// checked as `trust` asks. The error says which directory or link was refused and why.
    pub fn open(path: &Path, trust: Trust) -> Result<Dir> {
        walk(None, path, trust, None)
    }

    /// As [`open`](Self::open), creating missing directories on the way with `mode`.
    pub fn open_or_create(path: &Path, mode: u32, trust: Trust) -> Result<Dir> {
        walk(None, path, trust, Some(mode))
    }

    /// The directory `path` names relative to this one (`..` and links included, followed by
    /// the same rules).
    pub fn open_relative(&self, path: &Path, trust: Trust) -> Result<Dir> {
        walk(Some(self), path, trust, None)
    }

    /// How the directory was named.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }

    /// The directory's own status, as it is now.
    pub fn stat(&self) -> io::Result<rfs::Stat> {
        rfs::fstat(&self.fd).map_err(errno_io)
    }

    /// Why this directory is not one this user alone (or root) can change, or None.
    pub fn distrust(&self) -> Option<String> {
        match self.stat() {
            Ok(st) => distrust(&st, &self.path, true),
            Err(e) => Some(format!("{}: {e}", self.path.display())),
        }
    }

    /// A second descriptor of the same directory.
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            fd: self.fd.try_clone()?,
            path: self.path.clone(),
        })
    }

    fn shown(&self, name: &OsStr) -> PathBuf {
        self.path.join(name)
    }

    /// Makes `name` the current directory of this process.
    pub fn chdir(&self) -> io::Result<()> {
        rustix::process::fchdir(&self.fd).map_err(errno_io)
    }

    /// The directory `name` in this one, opened for reading, never through a symbolic link.
    fn open_dir_fd(&self, name: &OsStr) -> Result<OwnedFd, Errno> {
        rfs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
    }

    /// The current directory, through the process's own descriptor of it (not its name): a
    /// worker that entered its directory by `fchdir` works on in that very directory.
    pub fn current() -> io::Result<Dir> {
        let fd = rfs::openat(
            rfs::CWD,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno_io)?;
        Ok(Dir {
            fd,
            path: PathBuf::from("."),
        })
    }

    /// Opens the directory `name` in this one, not following a symbolic link; under
    /// [`Trust::Own`] it must belong to this user or root and be writable by no one else.
    pub fn open_dir(&self, name: impl AsRef<OsStr>, trust: Trust) -> Result<Dir> {
        let name = name.as_ref();
        let shown = self.shown(name);
        let fd = self.open_dir_fd(name).map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR => anyhow!("{} is not a directory", shown.display()),
            e => anyhow!("opening {}: {}", shown.display(), errno_io(e)),
        })?;
        let dir = Dir { fd, path: shown };
        if trust != Trust::Reach {
            let st = dir.stat()?;
            if let Some(why) = distrust(&st, &dir.path, trust == Trust::Own) {
                bail!(why);
            }
        }
        Ok(dir)
    }

    /// Creates the directory `name` (mode `mode` whatever the umask) and opens it: it is then
    /// this user's, made by this call, and nothing else stood at its name.
    pub fn create_dir(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<Dir> {
        let name = name.as_ref();
        rfs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode)).map_err(errno_io)?;
        let fd = self.open_dir_fd(name).map_err(errno_io)?;
        let st = rfs::fstat(&fd).map_err(errno_io)?;
        // Replaced between the two calls by someone who could write here: not ours.
        if st.st_uid != euid() {
            return Err(io::Error::other(format!(
                "{} was replaced by another user's directory",
                self.shown(name).display()
            )));
        }
        rfs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(errno_io)?;
        Ok(Dir {
            fd,
            path: self.shown(name),
        })
    }

    /// The directory `name`, created (mode `mode`) if it is not there, checked as `trust`
    /// asks.
    pub fn create_or_open_dir(
        &self,
        name: impl AsRef<OsStr>,
        mode: u32,
        trust: Trust,
    ) -> Result<Dir> {
        let name = name.as_ref();
        match self.create_dir(name, mode) {
            Ok(d) => Ok(d),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => self.open_dir(name, trust),
            Err(e) => Err(e).with_context(|| format!("creating {}", self.shown(name).display())),
        }
    }

    /// Creates the file `name` new (never an existing one, never through a symlink), for
    /// writing, with mode `mode` whatever the umask.
    pub fn create_new(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<File> {
        let fd = rfs::openat(
            &self.fd,
            name.as_ref(),
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )
        .map_err(errno_io)?;
        rfs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(errno_io)?;
        Ok(File::from(fd))
    }

    /// Opens `name` for appending, creating it (mode 0644) if needed: never through a symbolic
    /// link, never blocking on a FIFO, and only a regular file of this user's.
    pub fn open_append(&self, name: impl AsRef<OsStr>) -> io::Result<File> {
        let name = name.as_ref();
        let fd = rfs::openat(
            &self.fd,
            name,
            OFlags::WRONLY
                | OFlags::APPEND
                | OFlags::CREATE
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::NOCTTY
                | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| {
            // Say what stands there: the kernel's refusal of a symlink (ELOOP, or EACCES in a
            // sticky directory) or of a FIFO without a reader (ENXIO) names neither.
            match rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                    FileType::Symlink => io::Error::other("it is a symbolic link (not followed)"),
                    FileType::RegularFile if st.st_uid != euid() => {
                        io::Error::other(format!("it belongs to another user (uid {})", st.st_uid))
                    }
                    FileType::RegularFile => errno_io(e),
                    kind => {
                        io::Error::other(format!("it is {}, not a regular file", type_name(kind)))
                    }
                },
                Err(_) => errno_io(e),
            }
        })?;
        let st = rfs::fstat(&fd).map_err(errno_io)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::other(format!(
                "it is {}, not a regular file",
                type_name(FileType::from_raw_mode(st.st_mode))
            )));
        }
        if st.st_uid != euid() {
            return Err(io::Error::other(format!(
                "it belongs to another user (uid {}); refusing to write into it",
                st.st_uid
            )));
        }
        rfs::fcntl_setfl(&fd, OFlags::APPEND).map_err(errno_io)?;
        Ok(File::from(fd))
    }

    /// Opens `name` for reading: not through a symbolic link, never blocking on a FIFO, and
    /// only a regular file.
    pub fn open_regular(&self, name: impl AsRef<OsStr>) -> io::Result<File> {
        let fd = rfs::openat(
            &self.fd,
            name.as_ref(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::LOOP => io::Error::other("it is a symbolic link (not followed)"),
            e => errno_io(e),
        })?;
        let st = rfs::fstat(&fd).map_err(errno_io)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::other(format!(
                "it is {}",
                type_name(FileType::from_raw_mode(st.st_mode))
            )));
        }
        rfs::fcntl_setfl(&fd, OFlags::empty()).map_err(errno_io)?;
        Ok(File::from(fd))
    }

    /// Writes `bytes` as the whole content of `name`, with mode `mode`: into a new file of an
    /// unpredictable name in this directory, renamed over `name`. A reader never sees half a
    /// file, a failed write leaves nothing, and what stood at `name` (a symlink, another
    /// user's file) is replaced, never written through.
    pub fn write_replacing(&self, name: impl AsRef<OsStr>, bytes: &[u8], mode: u32) -> Result<()> {
        let name = name.as_ref();
        let shown = self.shown(name);
        if let Ok(st) = rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
                bail!("{} is a directory", shown.display());
            }
        }
        let (tmp, mut file) = self
            .create_temporary(".hostbench-tmp-", mode)
            .with_context(|| format!("creating a file in {}", self.path.display()))?;
        let written = file
            .write_all(bytes)
            .and_then(|_| file.flush())
            .and_then(|_| rfs::renameat(&self.fd, &tmp, &self.fd, name).map_err(errno_io));
        if let Err(e) = written {
            let _ = rfs::unlinkat(&self.fd, &tmp, AtFlags::empty());
            return Err(e).with_context(|| format!("writing {}", shown.display()));
        }
        Ok(())
    }

    /// A new file named `prefix` and 12 random characters, created exclusively.
    pub fn create_temporary(&self, prefix: &str, mode: u32) -> io::Result<(OsString, File)> {
        use rand::distributions::{Alphanumeric, DistString};
        loop {
            let name = OsString::from(format!(
                "{prefix}{}",
                Alphanumeric.sample_string(&mut rand::thread_rng(), 12)
            ));
            match self.create_new(&name, mode) {
                Ok(f) => return Ok((name, f)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Renames `from` to `to`, both in this directory.
    pub fn rename(&self, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
        rfs::renameat(&self.fd, from.as_ref(), &self.fd, to.as_ref()).map_err(errno_io)
    }

    /// Removes the file (or symlink) `name`.
    pub fn remove_file(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        rfs::unlinkat(&self.fd, name.as_ref(), AtFlags::empty()).map_err(errno_io)
    }

    /// What stands at `name`, not following a symbolic link.
    pub fn stat_at(&self, name: impl AsRef<OsStr>) -> io::Result<rfs::Stat> {
        rfs::statat(&self.fd, name.as_ref(), AtFlags::SYMLINK_NOFOLLOW).map_err(errno_io)
    }

    /// The symbolic link `name`: its owner and its target, both read through one descriptor
    /// of the link itself (the target read is that of the link whose owner is returned).
    pub fn read_link(&self, name: impl AsRef<OsStr>) -> io::Result<(u32, PathBuf)> {
        let link = rfs::openat(
            &self.fd,
            name.as_ref(),
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno_io)?;
        let st = rfs::fstat(&link).map_err(errno_io)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::Symlink {
            return Err(io::Error::other("it is not a symbolic link"));
        }
        Ok((st.st_uid, read_link(&link)?))
    }

    /// The names in this directory (without `.` and `..`).
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let mut dir = rfs::Dir::read_from(&self.fd).map_err(errno_io)?;
        let mut names = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(errno_io)?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsString::from_vec(name.to_vec()));
            }
        }
        Ok(names)
    }

    /// Removes everything in this directory, a directory in it with all it holds, through
    /// descriptors: a directory in it swapped for a symlink is removed as a link, never
    /// followed.
    pub fn clear(&self) -> io::Result<()> {
        let mut first_error = None;
        for name in self.names()? {
            if let Err(e) = self.remove_tree(&name) {
                if e.kind() != io::ErrorKind::NotFound {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Removes `name` in this directory: a file or link, or a directory and everything in it.
    pub fn remove_tree(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = name.as_ref();
        match rfs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) => return Ok(()),
            Err(Errno::ISDIR) | Err(Errno::PERM) => {}
            Err(e) => return Err(errno_io(e)),
        }
        let fd = self.open_dir_fd(name).map_err(errno_io)?;
        let inner = Dir {
            fd,
            path: self.shown(name),
        };
        inner.clear()?;
        rfs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR).map_err(errno_io)
    }

    /// Whether this directory is on procfs, whose symbolic links (`/proc/self/fd/1`) are
    /// the process's own and name things that have no path.
    fn on_procfs(&self) -> bool {
        const PROC_SUPER_MAGIC: i64 = 0x9fa0;
        rfs::fstatfs(&self.fd).is_ok_and(|s| s.f_type == PROC_SUPER_MAGIC)
    }

    /// Writes `bytes` to the output file `name` in this directory (`-o FILE`), deciding by
    /// what was opened, never by a look before the open:
    /// - nothing, or a regular file: replaced whole ([`write_replacing`](Self::write_replacing));
    /// - a character device or a FIFO (`/dev/null`, `/dev/tty`, `>(cmd)`): written into; a
    ///   FIFO with no reader is refused rather than waited on;
    /// - a symbolic link of another user's: replaced, not followed. One of this user's or
    ///   root's (`/dev/stdout`) is followed, its target read from the very link whose owner
    ///   was checked, and what it leads to written by these same rules;
    /// - anything else (a directory, a socket, a block device): refused.
    pub fn write_output(&self, name: &OsStr, bytes: &[u8]) -> Result<()> {
        self.write_output_within(name, bytes, 0)
    }

    fn write_output_within(&self, name: &OsStr, bytes: &[u8], links: usize) -> Result<()> {
        // What stands at the name may change between two opens of it (another user swapping
        // it): each try decides by what it opened, and one that met a change starts over.
        for _ in 0..10 {
            match self.write_output_once(name, bytes, links) {
                Err(e) if e.downcast_ref::<Changed>().is_some() => continue,
                other => return other,
            }
        }
        Err(anyhow!(Changed)).with_context(|| format!("writing {}", self.shown(name).display()))
    }

    fn write_output_once(&self, name: &OsStr, bytes: &[u8], links: usize) -> Result<()> {
        let shown = self.shown(name);
        let opened = rfs::openat(
            &self.fd,
            name,
            OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        );
        match opened {
            Ok(fd) => self.write_into_opened(fd, name, bytes, false),
            Err(Errno::LOOP) => {
                let link = rfs::openat(
                    &self.fd,
                    name,
                    OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(errno_io)
                .with_context(|| format!("opening {}", shown.display()))?;
                let st = rfs::fstat(&link).map_err(errno_io)?;
                if FileType::from_raw_mode(st.st_mode) != FileType::Symlink {
                    return Err(anyhow!(Changed));
                }
                let me = euid();
                if st.st_uid != me && st.st_uid != 0 {
                    return self.write_replacing(name, bytes, 0o644);
                }
                if self.on_procfs() {
                    // The process's own descriptor: opened through it, acted on as opened.
                    let fd = rfs::openat(
                        &self.fd,
                        name,
                        OFlags::WRONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|e| open_error(e, &shown))?;
                    return self.write_into_opened(fd, name, bytes, true);
                }
                if links >= MAX_LINKS {
                    bail!("{}: too many levels of symbolic links", shown.display());
                }
                let target = read_link(&link)?;
                let Some(file) = target.file_name() else {
                    bail!(
                        "{} leads to {}, a directory",
                        shown.display(),
                        target.display()
                    );
                };
                let parent = target.parent().unwrap_or(Path::new(""));
                let dir = if parent.as_os_str().is_empty() {
                    self.try_clone()?
                } else {
                    self.open_relative(parent, Trust::Reach)?
                };
                dir.write_output_within(file, bytes, links + 1)
            }
            Err(Errno::NOENT) => self.write_replacing(name, bytes, 0o644),
            Err(e @ (Errno::ACCESS | Errno::PERM | Errno::TXTBSY | Errno::ROFS)) => {
                // A regular file that cannot be opened for writing (mode 0444, a running
                // program) is replaced as any other: the rename needs only the directory.
                match self.stat_at(name) {
                    Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                        self.write_replacing(name, bytes, 0o644)
                    }
                    _ => Err(open_error(e, &shown)),
                }
            }
            Err(e) => Err(open_error(e, &shown)),
        }
    }

    /// Acts on what `write_output` opened: a device or FIFO is written into; a regular file
    /// is replaced whole (or, reached through the process's own `/proc` link, written into
    /// from its start, as a shell's `>` would); anything else is refused.
    fn write_into_opened(
        &self,
        fd: OwnedFd,
        name: &OsStr,
        bytes: &[u8],
        through_proc: bool,
    ) -> Result<()> {
        let shown = self.shown(name);
        let st = rfs::fstat(&fd).map_err(errno_io)?;
        let kind = FileType::from_raw_mode(st.st_mode);
        match kind {
            FileType::CharacterDevice | FileType::Fifo => {}
            FileType::RegularFile if through_proc => {
                rfs::ftruncate(&fd, 0).map_err(errno_io)?;
            }
            FileType::RegularFile => {
                drop(fd);
                return self.write_replacing(name, bytes, 0o644);
            }
            other => bail!(
                "{} is {}: not a file to write output to",
                shown.display(),
                type_name(other)
            ),
        }
        rfs::fcntl_setfl(&fd, OFlags::empty()).map_err(errno_io)?;
        let mut file = File::from(fd);
        file.write_all(bytes)
            .and_then(|_| file.flush())
            .with_context(|| format!("writing {}", shown.display()))
    }
}

/// What stood at an output's name changed between two opens of it.
#[derive(Debug)]
struct Changed;

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("what stands at the name kept changing while it was opened")
    }
}

impl std::error::Error for Changed {}

/// The error of opening an output: a FIFO no process reads, a socket, a directory said as
/// such. The open has already failed, so what the name is looked at for is the wording only.
fn open_error(e: Errno, shown: &Path) -> anyhow::Error {
    match e {
        Errno::NXIO => {
            let socket = std::fs::symlink_metadata(shown).is_ok_and(|m| {
                use std::os::unix::fs::FileTypeExt;
                m.file_type().is_socket()
            });
            if socket {
                anyhow!(
                    "{} is a socket: not a file to write output to",
                    shown.display()
                )
            } else {
                anyhow!("opening {}: a FIFO that no process reads", shown.display())
            }
        }
        Errno::ISDIR => anyhow!("{} is a directory", shown.display()),
        e => anyhow!("opening {}: {}", shown.display(), errno_io(e)),
    }
}

/// What a file is, for a refusal: "a directory", "a FIFO", "a device", …
pub fn type_name(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        FileType::Socket => "a socket",
        FileType::Symlink => "a symbolic link",
        _ => "not a regular file",
    }
}

/// Where a walk starts: `start` for a relative path, else the root (a relative path without
/// `start` from the current directory); the directory's descriptor (`O_PATH`), the path shown
/// for it, and the path left to walk.
fn walk_start(start: Option<&Dir>, path: &Path) -> Result<(OwnedFd, PathBuf, PathBuf)> {
    Ok(match start {
        Some(d) if path.is_relative() => (
            rfs::openat(
                &d.fd,
                ".",
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(errno_io)?,
            d.path.clone(),
            path.to_path_buf(),
        ),
        _ => {
            let absolute = if path.is_absolute() {
                path.to_path_buf()
            } else {
                std::env::current_dir()
                    .context("finding the current directory")?
                    .join(path)
            };
            (open_root()?, PathBuf::from("/"), absolute)
        }
    })
}

/// One step of a walk: `name` in `fd`, opened without following a link (`O_PATH |
/// O_NOFOLLOW`); with `create`, a missing directory is made first with that mode. `next` is
/// the path shown in errors.
fn open_step(fd: &OwnedFd, name: &OsString, next: &Path, create: Option<u32>) -> Result<OwnedFd> {
    let open = || {
        rfs::openat(
            fd,
            name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
    };
    match open() {
        Ok(c) => Ok(c),
        Err(Errno::NOENT) if create.is_some() && name != ".." => {
            let mode = create.unwrap_or(0o700);
            match rfs::mkdirat(fd, name, Mode::from_raw_mode(mode)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => {
                    return Err(errno_io(e)).with_context(|| format!("creating {}", next.display()))
                }
            }
            open()
                .map_err(errno_io)
                .with_context(|| format!("opening {}", next.display()))
        }
        Err(e) => Err(errno_io(e)).with_context(|| format!("opening {}", next.display())),
    }
}

/// The walk behind [`Dir::open`]: from `/` (or from `start` for a relative path), one name at
/// a time, each opened with `O_PATH|O_NOFOLLOW` and looked at through what was opened. A
/// symbolic link is followed only if it is this user's or root's; its target is read from the
/// link's own descriptor and walked by the same rules. Beyond [`Trust::Reach`] every directory
/// reached is checked as it is reached (see [`Trust`]).
fn walk(start: Option<&Dir>, path: &Path, trust: Trust, create: Option<u32>) -> Result<Dir> {
    let me = euid();
    let (mut fd, mut shown, rest) = walk_start(start, path)?;
    let check = |fd: &OwnedFd, shown: &Path| -> Result<()> {
        if trust != Trust::Reach {
            let st = rfs::fstat(fd).map_err(errno_io)?;
            if let Some(why) = distrust(&st, shown, false) {
                bail!(why);
            }
        }
        Ok(())
    };
    check(&fd, &shown)?;
    let mut pending: VecDeque<OsString> = parts(&rest).into();
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        let next = shown.join(&name);
        let child = open_step(&fd, &name, &next, create)?;
        let st = rfs::fstat(&child).map_err(errno_io)?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => {
                if st.st_uid != me && st.st_uid != 0 {
                    bail!(
                        "{} is a symbolic link of another user's (uid {}); not followed",
                        next.display(),
                        st.st_uid
                    );
                }
                links += 1;
                if links > MAX_LINKS {
                    bail!("{}: too many levels of symbolic links", next.display());
                }
                let target = read_link(&child)?;
                if target.is_absolute() {
                    fd = open_root()?;
                    shown = PathBuf::from("/");
                    check(&fd, &shown)?;
                }
                for part in parts(&target).into_iter().rev() {
                    pending.push_front(part);
                }
            }
            FileType::Directory => {
                if name == ".." {
                    shown.pop();
                } else {
                    shown = next;
                }
                check(&child, &shown)?;
                fd = child;
            }
            other => bail!(
                "{} is {}, not a directory",
                next.display(),
                type_name(other)
            ),
        }
    }
    let fd = rfs::openat(
        &fd,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno_io)
    .with_context(|| format!("opening {}", shown.display()))?;
    let dir = Dir {
        fd,
        path: path.to_path_buf(),
    };
    if trust == Trust::Own {
        let st = dir.stat()?;
        if let Some(why) = distrust(&st, &shown, true) {
            bail!(why);
        }
    }
    Ok(dir)
}

/// Splits an output path into the directory that holds it and its name; a path that names a
/// directory (`/`, `.`, `x/..`, `x/`) has no file name to write.
pub fn split_file(path: &Path) -> Result<(PathBuf, OsString)> {
    let ends_in_slash = path.as_os_str().as_bytes().ends_with(b"/");
    match path.components().next_back() {
        Some(Component::Normal(name)) if !ends_in_slash => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            Ok((dir, name.to_os_string()))
        }
        _ => bail!("{} is a directory", path.display()),
    }
}

/// Descriptors hostbench holds, as a worker's spec names them: a worker gets the numbers and
/// the descriptors themselves (see `workers::Worker::spawn_with`).
pub fn borrowed(fd: RawFd) -> BorrowedFd<'static> {
    // SAFETY: only called on descriptors a worker was handed and holds for its whole life.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
    }

    #[test]
    fn open_append_refuses_a_symlink_and_a_fifo_and_appends_to_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let held = Dir::open(dir.path(), Trust::Reach).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("x.log")).unwrap();
        let err = held.open_append("x.log").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

        let fifo =
            std::ffi::CString::new(dir.path().join("fifo.log").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let err = held.open_append("fifo.log").unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");

        held.open_append("ok.log").unwrap().write_all(b"a").unwrap();
        held.open_append("ok.log").unwrap().write_all(b"b").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ok.log")).unwrap(),
            "ab"
        );
    }

    #[test]
    fn a_directory_is_opened_once_and_used_by_descriptor_after_a_rename() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a");
        std::fs::create_dir(&a).unwrap();
        let dir = Dir::open(&a, Trust::Own).unwrap();
        // Renamed away and another put in its place: the descriptor still names the first.
        std::fs::rename(&a, t.path().join("moved")).unwrap();
        std::fs::create_dir(&a).unwrap();
        dir.create_new("f", 0o644).unwrap().write_all(b"x").unwrap();
        assert!(t.path().join("moved/f").exists());
        assert!(!a.join("f").exists());
    }

    #[test]
    fn own_trust_names_a_directory_others_can_write_and_allows_a_sticky_one_above() {
        let t = tempfile::tempdir().unwrap();
        let shared = t.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let mine = shared.join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(Dir::open(&mine, Trust::Own).is_ok());
        // The sticky directory itself is writable by others: a place to make a private
        // directory in, not one to keep things in by name.
        let why = Dir::open(&shared, Trust::Own).unwrap_err().to_string();
        assert!(why.contains("writable by other users (mode 1777)"), "{why}");
        assert!(Dir::open(&shared, Trust::OwnOrSticky).is_ok());
        // Without the sticky bit, anything under it can be renamed by others.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let why = Dir::open(&mine, Trust::Own).unwrap_err().to_string();
        assert!(
            why.contains("shared is writable by other users (mode 0777)"),
            "{why}"
        );
        let why = Dir::open(&shared, Trust::OwnOrSticky)
            .unwrap_err()
            .to_string();
        assert!(
            why.contains("shared is writable by other users (mode 0777)"),
            "{why}"
        );
        assert!(Dir::open(&mine, Trust::Reach).is_ok());
    }

    #[test]
    fn an_own_symlink_is_followed_by_a_walk_and_dotdot_goes_up() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real/deep");
        std::fs::create_dir_all(&real).unwrap();
        std::os::unix::fs::symlink("real/deep", t.path().join("link")).unwrap();
        let d = Dir::open(&t.path().join("link/../deep/."), Trust::Own).unwrap();
        d.create_new("g", 0o600).unwrap();
        assert!(real.join("g").exists());
        let e = Dir::open(&t.path().join("link/nothing"), Trust::Reach).unwrap_err();
        assert!(format!("{e:#}").contains("No such file"), "{e:#}");
    }

    #[test]
    fn open_or_create_makes_the_missing_directories_with_their_mode() {
        let t = tempfile::tempdir().unwrap();
        let deep = t.path().join("a/b/c");
        // (Under umask 000 too: tests/hostile.rs runs the binary so. The umask is the
        // process's, so a unit test does not change it under the tests beside it.)
        Dir::open_or_create(&deep, 0o700, Trust::Own).unwrap();
        for p in ["a", "a/b", "a/b/c"] {
            assert_eq!(mode(&t.path().join(p)), 0o700, "{p}");
        }
    }

    #[test]
    fn write_replacing_replaces_a_symlink_instead_of_following_it() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, t.path().join("out")).unwrap();
        let d = Dir::open(t.path(), Trust::Reach).unwrap();
        d.write_replacing("out", b"page", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(
            std::fs::read_to_string(t.path().join("out")).unwrap(),
            "page"
        );
        assert_eq!(mode(&t.path().join("out")), 0o644);
        assert_eq!(d.names().unwrap().len(), 2);
        let e = d.write_replacing(".", b"x", 0o644).unwrap_err();
        assert!(format!("{e:#}").contains("is a directory"), "{e:#}");
    }

    #[test]
    fn remove_tree_removes_through_descriptors_and_never_follows_a_link() {
        let t = tempfile::tempdir().unwrap();
        let keep = t.path().join("keep");
        std::fs::create_dir(&keep).unwrap();
        std::fs::write(keep.join("k"), "x").unwrap();
        let gone = t.path().join("gone");
        std::fs::create_dir_all(gone.join("sub/subsub")).unwrap();
        std::fs::write(gone.join("sub/f"), "x").unwrap();
        std::os::unix::fs::symlink(&keep, gone.join("sub/link")).unwrap();
        let d = Dir::open(t.path(), Trust::Own).unwrap();
        d.remove_tree("gone").unwrap();
        assert!(!gone.exists());
        assert!(keep.join("k").exists());
    }

    #[test]
    fn split_file_refuses_names_of_directories() {
        assert_eq!(
            split_file(Path::new("r.html")).unwrap(),
            (PathBuf::from("."), OsString::from("r.html"))
        );
        assert_eq!(
            split_file(Path::new("/a/b/r.html")).unwrap(),
            (PathBuf::from("/a/b"), OsString::from("r.html"))
        );
        for p in ["/", ".", "a/..", "a/"] {
            assert!(split_file(Path::new(p)).is_err(), "{p}");
        }
    }
}
