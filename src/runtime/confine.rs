//! The kernel-side limits of a generated script's process (issue 19, item 7), outside the
//! interpreter so a script that switches the Python audit hook off meets them all the same:
//!
//! - **rlimits**: `RLIMIT_CPU` (the time limit, in CPU seconds), `RLIMIT_AS` (address space),
//!   `RLIMIT_NPROC` (no new processes for an unprivileged user), `RLIMIT_FSIZE` (no file
//!   larger than [`MAX_FILE_BYTES`]) and `RLIMIT_CORE` 0;
//! - **seccomp** (Linux, x86-64 and aarch64): `fork`, `vfork` and any `clone` that is not a
//!   thread fail with `EPERM` (`clone3` with `ENOSYS`, so threads fall back to `clone`);
//!   `socket` fails with `EACCES` for every family (UDP as well as TCP, which Landlock's
//!   network rules alone do not cover); `io_uring_setup` fails (it could open sockets
//!   without the `socket` call); x32 system calls fail;
//! - **a process group of its own**, killed whole at the limit ([`kill_group`]).
//!
//! And on the parent's side, reading what a script left in its folder: [`read_regular`]
//! opens with `O_NOFOLLOW` (a link planted in place of `_result.json` is not followed) and
//! caps the size; [`list_files`] never follows a link and stops at a bound, so a cycle of
//! links cannot make it run for ever.

use std::path::{Path, PathBuf};

/// Address space a script may map (numpy, scipy and matplotlib need a few hundred MB).
pub const MAX_ADDRESS_SPACE_BYTES: u64 = 2 << 30;
/// The largest file a script may write.
pub const MAX_FILE_BYTES: u64 = 512 << 20;
/// Entries [`list_files`] looks at before it stops.
pub const MAX_LISTED: usize = 10_000;
/// Folder depth [`list_files`] descends to.
pub const MAX_DEPTH: usize = 16;

/// The limits for one child, decided in the parent and applied in the child before exec.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// CPU seconds (soft; the hard limit is one more).
    pub cpu_s: u64,
    /// `RLIMIT_AS`.
    pub address_space_bytes: u64,
}

impl Limits {
    /// The limits for a script with a wall-clock limit of `timeout`: the CPU limit is the
    /// wall-clock one rounded up (a script cannot use more CPU time than wall time, so this
    /// is the backstop should the parent's kill not come).
    pub fn for_timeout(timeout: std::time::Duration) -> Self {
        Limits {
            cpu_s: timeout.as_secs().saturating_add(1),
            address_space_bytes: MAX_ADDRESS_SPACE_BYTES,
        }
    }
}

/// A seccomp program, built in the parent (the child may not allocate between fork and exec).
pub struct Filter {
    #[cfg(target_os = "linux")]
    program: Vec<libc::sock_filter>,
}

#[cfg(target_os = "linux")]
mod bpf {
    pub const LD_W_ABS: u16 = 0x20;
    pub const JEQ_K: u16 = 0x15;
    pub const JGE_K: u16 = 0x35;
    pub const JSET_K: u16 = 0x45;
    pub const RET_K: u16 = 0x06;
    pub const RET_ALLOW: u32 = 0x7fff_0000;
    pub const RET_ERRNO: u32 = 0x0005_0000;
    pub const RET_KILL_PROCESS: u32 = 0x8000_0000;
    /// `struct seccomp_data`: nr at 0, arch at 4, args[0] at 16 (low word, little-endian).
    pub const NR: u32 = 0;
    pub const ARCH: u32 = 4;
    pub const ARG0_LOW: u32 = 16;
    #[cfg(target_arch = "x86_64")]
    pub const AUDIT_ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    pub const AUDIT_ARCH: u32 = 0xC000_00B7;
    /// x32 system calls on x86-64 carry this bit.
    pub const X32_BIT: u32 = 0x4000_0000;

    pub fn stmt(code: u16, k: u32) -> libc::sock_filter {
        libc::sock_filter {
            code,
            jt: 0,
            jf: 0,
            k,
        }
    }

    pub fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
        libc::sock_filter { code, jt, jf, k }
    }
}

impl Filter {
    /// The filter described in the module documentation.
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    pub fn new() -> Self {
        use bpf::*;
        let errno = |e: i32| stmt(RET_K, RET_ERRNO | (e as u32 & 0xffff));
        // (system call, errno): refused outright.
        let mut refused: Vec<(i64, i32)> = vec![
            (libc::SYS_clone3, libc::ENOSYS),
            (libc::SYS_socket, libc::EACCES),
            (libc::SYS_io_uring_setup, libc::EPERM),
        ];
        #[cfg(target_arch = "x86_64")]
        refused.extend([
            (libc::SYS_fork, libc::EPERM),
            (libc::SYS_vfork, libc::EPERM),
        ]);
        let mut p = vec![
            stmt(LD_W_ABS, ARCH),
            // A foreign architecture's system call numbers mean other calls: kill.
            jump(JEQ_K, AUDIT_ARCH, 1, 0),
            stmt(RET_K, RET_KILL_PROCESS),
            stmt(LD_W_ABS, NR),
        ];
        #[cfg(target_arch = "x86_64")]
        p.extend([jump(JGE_K, X32_BIT, 0, 1), errno(libc::EPERM)]);
        for (nr, e) in refused {
            p.push(jump(JEQ_K, nr as u32, 0, 1));
            p.push(errno(e));
        }
        // clone: a thread (CLONE_THREAD) may be made, a process may not.
        p.extend([
            jump(JEQ_K, libc::SYS_clone as u32, 0, 3),
            stmt(LD_W_ABS, ARG0_LOW),
            jump(JSET_K, libc::CLONE_THREAD as u32, 1, 0),
            errno(libc::EPERM),
            stmt(RET_K, RET_ALLOW),
        ]);
        Filter { program: p }
    }

    /// No filter where the architecture is not one the numbers above are written for.
    #[cfg(not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )))]
    pub fn new() -> Self {
        Filter {
            #[cfg(target_os = "linux")]
            program: Vec::new(),
        }
    }

    /// Whether this filter does anything on this machine.
    pub fn active(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            !self.program.is_empty()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }
}

impl Default for Filter {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(target_os = "linux")]
fn set_limit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> std::io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads a valid struct; async-signal-safe.
    if unsafe { libc::setrlimit(resource, &lim) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Apply `limits` and `filter` to the calling process. Called in the child between fork and
/// exec: only system calls, no allocation (the filter was built before the fork).
#[cfg(target_os = "linux")]
pub fn apply_in_child(limits: Limits, filter: &Filter) -> std::io::Result<()> {
    set_limit(
        libc::RLIMIT_CPU,
        limits.cpu_s,
        limits.cpu_s.saturating_add(1),
    )?;
    set_limit(
        libc::RLIMIT_AS,
        limits.address_space_bytes,
        limits.address_space_bytes,
    )?;
    set_limit(libc::RLIMIT_NPROC, 1, 1)?;
    set_limit(libc::RLIMIT_FSIZE, MAX_FILE_BYTES, MAX_FILE_BYTES)?;
    set_limit(libc::RLIMIT_CORE, 0, 0)?;
    if filter.program.is_empty() {
        return Ok(());
    }
    // prctl's variadic arguments are unsigned longs.
    const ONE: libc::c_ulong = 1;
    const ZERO: libc::c_ulong = 0;
    // SAFETY: prctl with integer arguments; the program outlives the call (it is copied by
    // the kernel when the filter is installed).
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, ONE, ZERO, ZERO, ZERO) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let prog = libc::sock_fprog {
            len: filter.program.len() as u16,
            filter: filter.program.as_ptr() as *mut libc::sock_filter,
        };
        if libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &prog as *const libc::sock_fprog,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Kill the process group `pgid` (the child made it with `process_group(0)`, so its id is
/// the child's pid): whatever the script left running dies with it.
pub fn kill_group(pgid: u32) {
    #[cfg(unix)]
    if let Ok(id) = i32::try_from(pgid)
        && id > 1
    {
        // SAFETY: kill with a negative id signals a process group; no memory is involved.
        unsafe {
            libc::kill(-id, libc::SIGKILL);
        }
    }
}

/// A regular file's bytes, opened without following a final link (`O_NOFOLLOW`) and read up
/// to `max_bytes`: what a script left in its folder cannot make the parent read elsewhere.
pub fn read_regular(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What [`list_files`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Regular files under the folder, relative, sorted.
    pub files: Vec<String>,
    /// Links (not followed), other non-regular entries and the bound reached, one line each.
    pub refused: Vec<String>,
}

/// Regular files under `dir` (relative, sorted), never following a link, at most
/// [`MAX_LISTED`] entries and [`MAX_DEPTH`] levels.
pub fn list_files(dir: &Path) -> Listing {
    let mut out = Listing::default();
    let mut stack: Vec<(PathBuf, usize)> = vec![(dir.to_path_buf(), 0)];
    let mut seen = 0usize;
    while let Some((d, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_LISTED {
                out.refused.push(format!(
                    "more than {MAX_LISTED} entries: the rest not listed"
                ));
                out.files.sort();
                return out;
            }
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
            // The entry's own type: a link is a link, whatever it points at.
            match e.file_type() {
                Ok(t) if t.is_symlink() => out.refused.push(format!("{rel}: a link, not followed")),
                Ok(t) if t.is_dir() && depth + 1 < MAX_DEPTH => stack.push((p, depth + 1)),
                Ok(t) if t.is_dir() => out.refused.push(format!(
                    "{rel}: deeper than {MAX_DEPTH} folders, not listed"
                )),
                Ok(t) if t.is_file() => out.files.push(rel),
                _ => out.refused.push(format!("{rel}: not a regular file")),
            }
        }
    }
    out.files.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_never_follows_links_and_ends_on_a_cycle() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("a")).unwrap();
        std::fs::write(out.join("a/table.csv"), "1\n").unwrap();
        // A cycle and a link to the whole file system.
        std::os::unix::fs::symlink(&out, out.join("a/loop")).unwrap();
        std::os::unix::fs::symlink("/", out.join("root")).unwrap();
        let l = list_files(&out);
        assert_eq!(l.files, vec!["a/table.csv".to_string()]);
        assert_eq!(l.refused.len(), 2, "{:?}", l.refused);
        assert!(l.refused.iter().all(|r| r.contains("a link, not followed")));
    }

    #[test]
    fn a_planted_link_is_not_read_through() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "key").unwrap();
        let result = dir.path().join("_result.json");
        std::os::unix::fs::symlink(&secret, &result).unwrap();
        assert!(read_regular(&result, 1024).is_err());
        std::fs::remove_file(&result).unwrap();
        std::fs::write(&result, "0123456789").unwrap();
        assert_eq!(read_regular(&result, 4).unwrap(), b"0123");
    }
}
