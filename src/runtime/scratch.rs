//! Temporary scripts a model writes, run only on a yes — in a real sandbox where the kernel
//! allows one.
//!
//! Layers, from the outside in:
//!
//! 1. **Before anyone is asked**, the source is checked with Python's own parser (`ast`) in a
//!    child process, not with regular expressions: imports only from a short scientific list;
//!    no `os`, `sys`, `subprocess`, `socket`, `shutil`, `ctypes`; no `exec`, `eval`, `compile`,
//!    `getattr`, `setattr`, `__import__`, `globals`, `locals`, `vars`, `input`, `breakpoint`;
//!    no dunder names or attributes; exactly one `def main(inputs, out)` (or `def adapt(text)`
//!    for a generated reader); under 6,000 characters.
//! 2. **The person** reads it in the review dialog and says yes (nobody there: no).
//! 3. **A process of its own**, in a folder of its own, with a time limit, stdin closed and the
//!    environment cleared (no API key or any other secret reaches it).
//! 4. **Landlock** (Linux ≥ 5.13), applied to the child before it executes Python: it may
//!    write only inside its folder (which holds its temporary directory), read only its inputs,
//!    the interpreter and the system libraries, execute only the interpreter, and — where the
//!    kernel's Landlock ABI has networking (v4+) — neither connect nor bind TCP; with ABI v6 it
//!    cannot signal other processes or reach abstract Unix sockets.
//! 5. **Kernel limits** ([`super::confine`]): seccomp refuses `fork`, new processes and
//!    every `socket` (UDP too); `RLIMIT_CPU`, `RLIMIT_AS`, `RLIMIT_NPROC`, `RLIMIT_FSIZE`; a
//!    process group of its own, killed whole at the time limit. Landlock reads exclude `/etc`
//!    and `/proc` (the parent's environment holds the key).
//! 6. **A Python audit hook** inside the child, as defence in depth only: a script can switch
//!    it off by rebinding the runner's globals, and the layers above hold without it
//!    (`sandbox_escapes` tests each attempt with the hook switched off that way).
//!
//! The parent reads what the script left with `O_NOFOLLOW`, never follows a link when it
//! lists `out/`, and writes its own files there through the atomic writer (which replaces a
//! planted link instead of writing through it).
//!
//! The protections actually active on this machine are reported ([`protections`]) and shown
//! in the review dialog.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::run_folder::write_file_atomic;

/// The most of a script's stdout (and of its stderr) kept.
const MAX_PRINTED: u64 = 1 << 20;
/// The largest `_result.json` read back.
const MAX_RESULT_BYTES: u64 = 16 << 20;

/// Longer than this and nobody reads it before saying yes.
pub const MAX_SOURCE_CHARS: usize = 6000;
/// Seconds a script may run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(180);
/// Seconds a generated reader may run: it parses a few hundred lines of text, so anything
/// longer is a loop that will not end (seed 001, `adapters.TIMEOUT_SECONDS = 5.0`).
pub const ADAPTER_TIMEOUT: Duration = Duration::from_secs(5);

/// Text that must not appear anywhere in a generated reader (seed 001, `adapters.FORBIDDEN`).
/// Checked on the text before the parser runs, so a reader that reaches for a file or the
/// interpreter's internals is never shown to anyone as runnable. A reader is handed the
/// file's text; it has no reason to open anything.
pub const READER_FORBIDDEN: &[&str] = &[
    "import",
    "open(",
    "exec",
    "eval",
    "compile",
    "__",
    "globals",
    "locals",
    "getattr",
    "setattr",
    "delattr",
    "vars",
    "input",
    "breakpoint",
    "exit",
    "quit",
    "help",
    "memoryview",
];

/// The only builtins a generated reader's namespace holds (seed 001, `adapters.SAFE_BUILTINS`).
pub const READER_BUILTINS: &[&str] = &[
    "IndexError",
    "StopIteration",
    "TypeError",
    "ValueError",
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "divmod",
    "enumerate",
    "filter",
    "float",
    "int",
    "isinstance",
    "len",
    "list",
    "map",
    "max",
    "min",
    "range",
    "reversed",
    "round",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "zip",
];

/// Why a generated reader's text may not even be parsed, or `None`.
pub fn reader_forbidden(source: &str) -> Option<String> {
    READER_FORBIDDEN
        .iter()
        .find(|w| source.contains(**w))
        .map(|w| format!("generated code may not use '{w}'"))
}

/// Top-level modules a script may import.
pub const ALLOWED_MODULES: &[&str] = &[
    "bisect",
    "cmath",
    "collections",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "fractions",
    "functools",
    "heapq",
    "itertools",
    "json",
    "math",
    "matplotlib",
    "numpy",
    "operator",
    "pandas",
    "pathlib",
    "re",
    "scipy",
    "statistics",
    "string",
    "textwrap",
    "typing",
];

/// What the assistant is told a script looks like (shared by the chat and the automatic run,
/// so both write scripts the same checks accept).
pub const SCRIPT_CONTRACT: &str = "Write Python with exactly one function `def main(inputs, out):`. `inputs` is a dict of name -> path (strings) of the files to read; `out` is a pathlib.Path folder, the only place you may write. Return a small JSON-serialisable dict saying what you found or did and naming the files you wrote (relative to `out`). Import only from: numpy, scipy, pandas, matplotlib, math, statistics, json, csv, re, datetime, collections, itertools, functools, pathlib, typing, dataclasses, decimal, fractions, bisect, heapq, copy, operator, string, textwrap, cmath. No os, sys, subprocess, shutil, socket or ctypes; no exec, eval, compile, getattr, setattr, __import__ or dunder names; never modify the input files. Keep it under 6000 characters so a person can read it before approving it.";

/// The checker, run with Python's own parser. Reads the source on stdin, the kind (`script`
/// or `adapter`) in argv[1]; prints `{"ok": bool, "reason": str, "imports": [...]}`.
const CHECKER: &str = r#"
import ast, json, sys
kind = sys.argv[1]
allowed = set(json.loads(sys.argv[2]))
src = sys.stdin.read()
forbidden_calls = {'exec','eval','compile','getattr','setattr','delattr','__import__','globals','locals','vars','input','breakpoint','help','memoryview','exit','quit'}
def out(ok, reason, imports=()):
    print(json.dumps({'ok': ok, 'reason': reason, 'imports': sorted(set(imports))}))
    sys.exit(0)
try:
    tree = ast.parse(src)
except SyntaxError as e:
    out(False, f'It is not valid Python: {e.msg} (line {e.lineno}).')
imports = []
for node in ast.walk(tree):
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            out(False, 'It uses a relative import, which a temporary script may not use.')
        names = [node.module or '']
    else:
        names = None
    if names is not None:
        for n in names:
            top = n.split('.')[0]
            if kind == 'adapter':
                out(False, f'It imports {top}; a generated reader may not import anything.')
            if top not in allowed:
                out(False, f'It imports {top}, which a temporary script may not use.')
            imports.append(top)
    if isinstance(node, ast.Name):
        if node.id in forbidden_calls:
            out(False, f'It uses {node.id}, which is not allowed.')
        if node.id.startswith('__') and node.id.endswith('__'):
            out(False, f'It uses {node.id}; dunder names are not allowed.')
    if isinstance(node, ast.Attribute) and node.attr.startswith('__'):
        out(False, f'It uses {node.attr}; dunder attributes are not allowed.')
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        out(False, 'It uses global or nonlocal, which is not allowed.')
want, args = ('main', ['inputs', 'out']) if kind == 'script' else ('adapt', ['text'])
missing = 'It must define main(inputs, out).' if kind == 'script' else 'generated code must define a function called adapt'
defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == want]
if not defs:
    out(False, missing)
if len(defs) > 1:
    out(False, f'It defines {want} {len(defs)} times; define {want}({", ".join(args)}) once.')
if [a.arg for a in defs[0].args.args] != args:
    out(False, f'It must define {want}({", ".join(args)}); this {want} takes ({", ".join(a.arg for a in defs[0].args.args)}).')
for n in tree.body:
    if not isinstance(n, (ast.FunctionDef, ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.Expr, ast.ClassDef)):
        out(False, f'It runs {type(n).__name__} statements at the top level; put the work inside {want}.')
    if isinstance(n, ast.Expr) and not isinstance(n.value, ast.Constant):
        out(False, f'It runs code at the top level; put the work inside {want}.')
out(True, '', imports)
"#;

/// The runner inside the child: preloads the allowed imports, raises the audit hook, then runs
/// the script. argv: kind, folder. The job (source, inputs, imports) is in `<folder>/_job.json`.
const RUNNER: &str = r#"
import sys, os, json, importlib, pathlib, traceback
kind, folder = sys.argv[1], os.path.realpath(sys.argv[2])
with open(os.path.join(folder, '_job.json'), encoding='utf-8') as f:
    job = json.load(f)
for m in job['imports']:
    try:
        importlib.import_module(m)
    except Exception as e:
        print(f'could not import {m}: {e}', file=sys.stderr)
def inside(p):
    try:
        rp = os.path.realpath(os.fsdecode(p))
    except Exception:
        return False
    return rp == folder or rp.startswith(folder + os.sep)
BLOCKED_PREFIXES = ('subprocess.', 'socket.', 'os.exec', 'os.spawn', 'os.posix_spawn', 'os.fork', 'pty.', 'ctypes.', 'winreg.', 'webbrowser.', 'urllib.', 'http.', 'ftplib.', 'smtplib.')
BLOCKED = {'os.system', 'os.kill', 'os.killpg', 'os.putenv', 'os.unsetenv', '_posixsubprocess.fork_exec'}
WRITES = {'os.remove', 'os.unlink', 'os.rename', 'os.replace', 'os.rmdir', 'os.mkdir', 'os.chmod', 'os.chown',
          'os.truncate', 'shutil.rmtree', 'shutil.copyfile', 'shutil.move', 'shutil.copytree', 'os.link',
          'os.symlink', 'os.utime', 'os.chdir'}
def hook(event, args):
    if event in BLOCKED or event.startswith(BLOCKED_PREFIXES):
        raise PermissionError(f'{event} is not allowed in a temporary script')
    if event == 'open':
        path, mode, flags = args
        if isinstance(path, int) or path is None:
            return
        writing = (mode is not None and any(c in str(mode) for c in 'wax+')) or bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
        if writing and not inside(path):
            raise PermissionError(f'writing {path} is not allowed: a script writes only inside its own folder')
    elif event in WRITES:
        for a in args[:2]:
            if isinstance(a, (str, bytes, os.PathLike)) and not inside(a):
                raise PermissionError(f'{event} on {a} is not allowed outside the script folder')
if job.get('audit_hook', True):
    sys.addaudithook(hook)
def finish(obj):
    with open(os.path.join(folder, '_result.json'), 'w', encoding='utf-8') as f:
        json.dump(obj, f, default=str)
try:
    ns = {'__name__': '__hgx_script__'}
    if kind == 'adapter':
        import builtins
        ns['__builtins__'] = {n: getattr(builtins, n) for n in job['builtins']}
    exec(compile(job['source'], 'script.py', 'exec'), ns)
    if kind == 'script':
        out = pathlib.Path(folder) / 'out'
        result = ns['main'](dict(job['inputs']), out)
        finish({'status': 'ok', 'result': result})
    else:
        with open(job['text_file'], encoding='utf-8', errors='replace') as f:
            text = f.read()
        rows = ns['adapt'](text)
        finish({'status': 'ok', 'rows': [[float(v) for v in r] for r in rows]})
except BaseException as e:
    finish({'status': 'failed', 'error': traceback.format_exc(limit=6)})
"#;

/// The interpreter found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Python {
    /// The real executable (not a version-manager shim).
    pub executable: PathBuf,
    /// Folders the interpreter reads its standard library and packages from.
    pub read_paths: Vec<PathBuf>,
}

/// The interpreter, found once per process: `python3` on the PATH resolved to its real
/// executable. `None`: no Python on this machine.
pub fn python() -> Option<&'static Python> {
    static FOUND: OnceLock<Option<Python>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let out = Command::new("python3")
                .args(["-c", "import sys, json; print(json.dumps([sys.executable, sys.prefix, sys.base_prefix, sys.path]))"])
                .stdin(Stdio::null())
                .output()
                .ok()?;
            if !out.status.success() {
                return None;
            }
            let v: Value = serde_json::from_slice(&out.stdout).ok()?;
            let exe = PathBuf::from(v[0].as_str()?);
            let mut read_paths: Vec<PathBuf> = vec![PathBuf::from(v[1].as_str()?), PathBuf::from(v[2].as_str()?)];
            for p in v[3].as_array()? {
                if let Some(s) = p.as_str().filter(|s| !s.is_empty()) {
                    read_paths.push(PathBuf::from(s));
                }
            }
            Some(Python {
                executable: exe.canonicalize().unwrap_or(exe),
                read_paths,
            })
        })
        .as_ref()
}

/// The kernel's Landlock ABI version, or `None` when Landlock is unavailable.
pub fn landlock_abi() -> Option<i32> {
    #[cfg(target_os = "linux")]
    {
        // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) returns the ABI.
        // SAFETY: with a null attribute pointer and size 0 this syscall only reports a number.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            )
        };
        (v > 0).then_some(v as i32)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The protections active for a script on this machine, one phrase each.
pub fn protections() -> Vec<String> {
    let mut p = vec![
        "checked with Python's parser before you were asked".to_string(),
        "runs in a process group of its own, in its own folder, with a time limit; the whole group is killed at the limit".to_string(),
        "kernel limits: CPU time, 2 GiB of address space, no new processes, files up to 512 MiB".to_string(),
        "environment cleared: no API key or other secret reaches it; stdin closed".to_string(),
        "Python audit hook: no subprocesses, sockets, native libraries or writes outside its folder".to_string(),
    ];
    match landlock_abi() {
        Some(abi) => {
            p.push(format!(
                "Landlock (kernel ABI v{abi}): writes only inside its folder, reads only its inputs, the interpreter and the system libraries (not /etc, not /proc), executes nothing else"
            ));
            if abi >= 4 {
                p.push("Landlock: TCP connect and bind denied".into());
            }
            if abi >= 6 {
                p.push(
                    "Landlock: cannot signal other processes or reach abstract Unix sockets".into(),
                );
            }
        }
        None => p.push(
            "Landlock is not available on this kernel: the audit hook is the only file guard"
                .into(),
        ),
    }
    if super::confine::Filter::new().active() {
        p.push("seccomp: no fork or new process, no socket of any kind (TCP, UDP, Unix)".into());
    }
    p
}

/// Why source may not run, or the modules it imports when it may be offered.
pub fn check(source: &str, kind: Kind) -> Result<Vec<String>, String> {
    if source.trim().is_empty() {
        return Err("There is no code.".into());
    }
    if source.chars().count() > MAX_SOURCE_CHARS {
        return Err(format!(
            "It is {} characters long; a script must stay under {MAX_SOURCE_CHARS} so a person can read it before approving it.",
            source.chars().count()
        ));
    }
    if kind == Kind::Adapter
        && let Some(why) = reader_forbidden(source)
    {
        return Err(why);
    }
    let py = python()
        .ok_or("There is no Python on this machine, so the script could not be checked or run.")?;
    let mut child = Command::new(&py.executable)
        .args([
            "-I",
            "-c",
            CHECKER,
            kind.word(),
            &serde_json::to_string(ALLOWED_MODULES).unwrap_or_default(),
        ])
        .env_clear()
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("The checker could not start: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        let _ = stdin.write_all(source.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("The checker failed: {e}"))?;
    let v: Value = serde_json::from_slice(&out.stdout).map_err(|_| {
        format!(
            "The checker failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })?;
    if v["ok"].as_bool() == Some(true) {
        Ok(v["imports"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default())
    } else {
        Err(v["reason"]
            .as_str()
            .unwrap_or("It was refused.")
            .to_string())
    }
}

/// A full script or a generated reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `def main(inputs, out)`.
    Script,
    /// `def adapt(text)`.
    Adapter,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Script => "script",
            Kind::Adapter => "adapter",
        }
    }
}

/// What a run of a script did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptRun {
    /// `ok`, `failed`, `timed_out`, or `not_run` (no Python).
    pub status: String,
    /// What `main` returned (scripts), or the rows (readers).
    pub result: Value,
    /// Files written in `out/`, relative.
    pub files: Vec<String>,
    /// The end of what it printed (stdout and stderr).
    pub printed: String,
    /// Why it failed.
    pub error: String,
    /// The folder.
    pub folder: PathBuf,
    /// Wall time.
    pub seconds: f64,
}

fn tail(bytes: &[u8], max: usize) -> String {
    let s = String::from_utf8_lossy(bytes);
    let n = s.chars().count();
    if n <= max {
        s.into_owned()
    } else {
        s.chars().skip(n - max).collect()
    }
}

/// The Landlock ruleset for a child: read the system and the interpreter and the inputs,
/// execute the interpreter only, write inside `folder`, no TCP.
#[cfg(target_os = "linux")]
fn ruleset(py: &Python, folder: &Path, inputs: &[PathBuf]) -> Option<landlock::RulesetCreated> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr, Scope,
    };
    let abi = ABI::V6;
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let mut rs = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .ok()?
        .handle_access(AccessNet::from_all(abi))
        .ok()?
        .scope(Scope::from_all(abi))
        .ok()?
        .create()
        .ok()?;
    // Not /etc (it holds /etc/shadow and the machine's configuration) and not /proc: a
    // `/proc/self` opened here would be the *parent's* folder, environment and key included.
    // Only the few /etc files the dynamic loader, time zones and fonts read.
    let mut reads: Vec<PathBuf> = [
        "/usr",
        "/lib",
        "/lib64",
        "/etc/ld.so.cache",
        "/etc/localtime",
        "/etc/fonts",
        "/dev/null",
        "/dev/urandom",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    reads.extend(py.read_paths.iter().cloned());
    reads.extend(inputs.iter().cloned());
    for p in reads {
        if let Ok(fd) = PathFd::new(&p) {
            let access = if p.is_dir() {
                read
            } else {
                AccessFs::ReadFile.into()
            };
            rs = rs.add_rule(PathBeneath::new(fd, access)).ok()?;
        }
    }
    let exe = PathFd::new(&py.executable).ok()?;
    rs = rs
        .add_rule(PathBeneath::new(
            exe,
            AccessFs::Execute | AccessFs::ReadFile,
        ))
        .ok()?;
    // The kernel opens the ELF interpreter (the dynamic loader) with execute rights too.
    for ld in [
        "/lib64/ld-linux-x86-64.so.2",
        "/lib/ld-linux-aarch64.so.1",
        "/lib/ld-linux-x86-64.so.2",
    ] {
        if let Ok(fd) = PathFd::new(ld) {
            rs = rs
                .add_rule(PathBeneath::new(fd, AccessFs::Execute | AccessFs::ReadFile))
                .ok()?;
        }
    }
    let dir = PathFd::new(folder).ok()?;
    rs = rs
        .add_rule(PathBeneath::new(
            dir,
            AccessFs::from_all(abi) & !AccessFs::Execute,
        ))
        .ok()?;
    Some(rs)
}

/// Run `source` in the sandbox. `job` is what the runner reads (inputs, text file).
fn run_in_sandbox(
    kind: Kind,
    source: &str,
    imports: &[String],
    job_extra: Value,
    readable: &[PathBuf],
    folder: &Path,
    timeout: Duration,
) -> ScriptRun {
    let t0 = Instant::now();
    let mut run = ScriptRun {
        status: "not_run".into(),
        result: Value::Null,
        files: Vec::new(),
        printed: String::new(),
        error: String::new(),
        folder: folder.to_path_buf(),
        seconds: 0.0,
    };
    let Some(py) = python() else {
        run.error = "There is no Python on this machine, so the script was not run.".into();
        return run;
    };
    if let Err(e) = std::fs::create_dir_all(folder.join("out"))
        .and_then(|_| std::fs::create_dir_all(folder.join("tmp")))
    {
        run.error = format!("cannot create the script folder {}: {e}", folder.display());
        return run;
    }
    let folder = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    run.folder = folder.clone();
    let mut job = json!({"source": source, "imports": imports});
    if let (Some(j), Value::Object(extra)) = (job.as_object_mut(), job_extra) {
        j.extend(extra);
    }
    // Through the atomic writer: a link left in the folder is replaced, never written through.
    let written = write_file_atomic(&folder.join("_job.json"), job.to_string().as_bytes())
        .and_then(|_| write_file_atomic(&folder.join("_runner.py"), RUNNER.as_bytes()));
    if let Err(e) = written {
        run.error = format!("cannot write the script's job file: {e}");
        return run;
    }
    let mut cmd = sandbox_command(py, kind, &folder, readable, timeout);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            run.error = format!("the script could not start: {e}");
            return run;
        }
    };
    let mut so = child.stdout.take();
    let mut se = child.stderr.take();
    // At most MAX_PRINTED bytes of each stream are kept; a script printing more blocks on
    // the full pipe once the reader stops, and meets its time limit.
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = so.as_mut() {
            let _ = s.take(MAX_PRINTED).read_to_end(&mut b);
        }
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(s) = se.as_mut() {
            let _ = s.take(MAX_PRINTED).read_to_end(&mut b);
        }
        b
    });
    use wait_timeout::ChildExt;
    let status = match child.wait_timeout(timeout) {
        Ok(Some(s)) => Some(s),
        Ok(None) => {
            super::confine::kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
            None
        }
        Err(_) => {
            super::confine::kill_group(child.id());
            let _ = child.kill();
            None
        }
    };
    // Whatever is left in the group (nothing, where seccomp holds) ends with the script.
    super::confine::kill_group(child.id());
    let mut printed = out_t.join().unwrap_or_default();
    printed.extend(err_t.join().unwrap_or_default());
    run.printed = tail(&printed, 4000);
    run.seconds = t0.elapsed().as_secs_f64();
    let listing = super::confine::list_files(&folder.join("out"));
    run.files = listing.files;
    if !listing.refused.is_empty() {
        run.printed.push_str(&format!(
            "\n[not taken from out/: {}]",
            listing.refused.join("; ")
        ));
    }
    let Some(status) = status else {
        run.status = "timed_out".into();
        run.error = format!(
            "It ran longer than {:.0} s and was stopped.",
            timeout.as_secs_f64()
        );
        return run;
    };
    read_result(kind, &folder, status, &mut run);
    run
}

/// The interpreter's command for a script in `folder`: isolated mode, a clean environment,
/// its own process group, and (Linux) Landlock, rlimits and seccomp applied in the child
/// before exec.
fn sandbox_command(
    py: &Python,
    kind: Kind,
    folder: &Path,
    readable: &[PathBuf],
    timeout: Duration,
) -> Command {
    let mut cmd = Command::new(&py.executable);
    cmd.arg("-I")
        .arg("-B")
        .arg(folder.join("_runner.py"))
        .arg(kind.word())
        .arg(folder)
        .current_dir(folder)
        .env_clear()
        .env("LANG", "C.UTF-8")
        .env("HOME", folder)
        .env("TMPDIR", folder.join("tmp"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONIOENCODING", "utf-8")
        .env("MPLBACKEND", "Agg")
        .env("MPLCONFIGDIR", folder.join("tmp"))
        // One thread for the numeric libraries: the sandbox allows threads, but a pool per
        // core is address space the RLIMIT_AS budget need not spend.
        .env("OPENBLAS_NUM_THREADS", "1")
        .env("OMP_NUM_THREADS", "1")
        .env("MKL_NUM_THREADS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // A process group of its own, killed whole at the limit.
        cmd.process_group(0);
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let mut slot = ruleset(py, folder, readable);
        let limits = super::confine::Limits::for_timeout(timeout);
        let filter = super::confine::Filter::new();
        // SAFETY: the ruleset and the seccomp program were built in the parent; the child
        // only makes system calls before exec (prctl, landlock_restrict_self, setrlimit,
        // seccomp), allocating nothing.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(rs) = slot.take() {
                    rs.restrict_self()
                        .map_err(|e| std::io::Error::other(e.to_string()))?;
                }
                super::confine::apply_in_child(limits, &filter)
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (readable, timeout);
    cmd
}

/// The script's `_result.json` into `run` (status, result or error), read without following
/// a link and capped; `status` is how the interpreter ended.
fn read_result(kind: Kind, folder: &Path, status: std::process::ExitStatus, run: &mut ScriptRun) {
    // Read without following a link the script may have put in its place, and capped.
    let result: Option<Value> =
        super::confine::read_regular(&folder.join("_result.json"), MAX_RESULT_BYTES)
            .ok()
            .and_then(|t| serde_json::from_slice(&t).ok());
    match result {
        Some(r) if r["status"] == "ok" => {
            run.status = "ok".into();
            run.result = if kind == Kind::Script {
                r["result"].clone()
            } else {
                r["rows"].clone()
            };
        }
        Some(r) => {
            run.status = "failed".into();
            run.error = r["error"].as_str().unwrap_or("it failed").to_string();
        }
        None => {
            run.status = "failed".into();
            run.error = format!(
                "It ended ({status}) without a result: {}",
                run.printed.lines().last().unwrap_or("nothing was printed")
            );
        }
    }
}

/// Run an approved script: checked again, then in the sandbox with `inputs` (key → path)
/// readable and `folder/out` writable.
pub fn run_script(
    source: &str,
    inputs: &[(String, PathBuf)],
    folder: &Path,
    timeout: Duration,
) -> ScriptRun {
    let imports = match check(source, Kind::Script) {
        Ok(i) => i,
        Err(why) => {
            return ScriptRun {
                status: "not_run".into(),
                result: Value::Null,
                files: Vec::new(),
                printed: String::new(),
                error: why,
                folder: folder.to_path_buf(),
                seconds: 0.0,
            };
        }
    };
    run_checked(source, &imports, inputs, folder, timeout)
}

/// Run without the static check (the sandbox's own tests use this to show the sandbox holds
/// even for code the checker would have refused).
pub(crate) fn run_checked(
    source: &str,
    imports: &[String],
    inputs: &[(String, PathBuf)],
    folder: &Path,
    timeout: Duration,
) -> ScriptRun {
    let map: serde_json::Map<String, Value> = inputs
        .iter()
        .map(|(k, p)| (k.clone(), Value::from(p.display().to_string())))
        .collect();
    let readable: Vec<PathBuf> = inputs.iter().map(|(_, p)| p.clone()).collect();
    run_in_sandbox(
        Kind::Script,
        source,
        imports,
        json!({"inputs": map}),
        &readable,
        folder,
        timeout,
    )
}

/// Run with the audit hook switched off, so that a test can show the kernel's Landlock rules
/// hold on their own.
#[cfg(test)]
fn run_without_hook(
    source: &str,
    imports: &[String],
    inputs: &[(String, PathBuf)],
    folder: &Path,
) -> ScriptRun {
    let map: serde_json::Map<String, Value> = inputs
        .iter()
        .map(|(k, p)| (k.clone(), Value::from(p.display().to_string())))
        .collect();
    let readable: Vec<PathBuf> = inputs.iter().map(|(_, p)| p.clone()).collect();
    run_in_sandbox(
        Kind::Script,
        source,
        imports,
        json!({"inputs": map, "audit_hook": false}),
        &readable,
        folder,
        Duration::from_secs(20),
    )
}

/// Run an approved generated reader on `text`; the rows must form a non-empty table of finite
/// numbers with `columns` columns.
pub fn run_adapter(
    source: &str,
    text: &str,
    columns: usize,
    folder: &Path,
) -> Result<Vec<Vec<f64>>, String> {
    check(source, Kind::Adapter)?;
    std::fs::create_dir_all(folder).map_err(|e| e.to_string())?;
    let text_file = folder.join("_input.txt");
    std::fs::write(&text_file, text).map_err(|e| e.to_string())?;
    let run = run_in_sandbox(
        Kind::Adapter,
        source,
        &[],
        json!({"text_file": text_file.display().to_string(), "builtins": READER_BUILTINS}),
        std::slice::from_ref(&text_file),
        folder,
        ADAPTER_TIMEOUT,
    );
    if run.status != "ok" {
        return Err(if run.error.is_empty() {
            run.status
        } else {
            run.error
        });
    }
    let rows: Vec<Vec<f64>> = serde_json::from_value(run.result)
        .map_err(|_| "the generated reader did not return rows of numbers".to_string())?;
    if rows.is_empty() {
        return Err("the generated reader returned no rows".into());
    }
    if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != columns) {
        return Err(format!(
            "row {} has {} columns; {columns} were expected",
            i + 1,
            r.len()
        ));
    }
    if rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err("the generated reader returned a value that is not a finite number".into());
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py_or_skip() -> bool {
        if python().is_none() {
            eprintln!("skipping: no python3 on this machine");
            return false;
        }
        true
    }

    #[test]
    fn the_checker_uses_pythons_parser() {
        // Seed 001, scratch.check_script examples (our wording).
        if !py_or_skip() {
            return;
        }
        assert_eq!(
            check(
                "import numpy as np\ndef main(inputs, out):\n    return {}",
                Kind::Script
            ),
            Ok(vec!["numpy".into()])
        );
        assert_eq!(
            check(
                "import os\ndef main(inputs, out):\n    os.remove('x')",
                Kind::Script
            ),
            Err("It imports os, which a temporary script may not use.".into())
        );
        assert_eq!(
            check(
                "def main(inputs, out):\n    return ().__class__",
                Kind::Script
            ),
            Err("It uses __class__; dunder attributes are not allowed.".into())
        );
        assert_eq!(
            check("print('hi')", Kind::Script),
            Err("It must define main(inputs, out).".into())
        );
        assert!(
            check("def main(inputs, out):\n    return eval('1')", Kind::Script)
                .unwrap_err()
                .contains("eval")
        );
        assert!(
            check(
                "def main(inputs, out):\n    return getattr(1, 'real')",
                Kind::Script
            )
            .is_err()
        );
        assert!(
            check("def main(inputs, out)\n    return 1", Kind::Script)
                .unwrap_err()
                .starts_with("It is not valid Python")
        );
        // A string that merely mentions os is fine: this is a parser, not a regex.
        assert!(
            check(
                "def main(inputs, out):\n    return {'note': 'import os'}",
                Kind::Script
            )
            .is_ok()
        );
        assert!(
            check(&"x = 1\n".repeat(2000), Kind::Script)
                .unwrap_err()
                .contains("6000")
        );
        assert_eq!(
            check("def adapt(text):\n    return [[1.0, 2.0]]", Kind::Adapter),
            Ok(vec![])
        );
        assert!(
            check(
                "import math\ndef adapt(text):\n    return []",
                Kind::Adapter
            )
            .is_err()
        );
    }

    #[test]
    fn a_script_runs_reads_its_inputs_and_writes_in_its_folder() {
        if !py_or_skip() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("data.csv");
        std::fs::write(&input, "1,2\n3,4\n").unwrap();
        let folder = dir.path().join("scripts/1");
        let src = "import csv\ndef main(inputs, out):\n    rows = list(csv.reader(open(inputs['data'])))\n    (out / 'sum.txt').write_text(str(sum(float(v) for r in rows for v in r)))\n    return {'rows': len(rows)}\n";
        let r = run_script(
            src,
            &[("data".into(), input.clone())],
            &folder,
            Duration::from_secs(30),
        );
        assert_eq!(r.status, "ok", "{r:?}");
        assert_eq!(r.result["rows"], 2);
        assert_eq!(r.files, vec!["sum.txt".to_string()]);
        assert_eq!(
            std::fs::read_to_string(folder.join("out/sum.txt")).unwrap(),
            "10.0"
        );
    }

    #[test]
    fn an_adapter_returns_a_checked_table() {
        // Seed 001, adapters.run_adapter examples.
        if !py_or_skip() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let code = "def adapt(text):\n    return [[float(v) for v in line.split(',')]\n            for line in text.splitlines() if line.strip()]";
        assert_eq!(
            run_adapter(code, "1,2\n3,4\n", 2, &dir.path().join("a")).unwrap(),
            vec![vec![1.0, 2.0], vec![3.0, 4.0]]
        );
        assert_eq!(
            run_adapter(
                "def adapt(text):\n    return []",
                "",
                2,
                &dir.path().join("b")
            )
            .unwrap_err(),
            "the generated reader returned no rows"
        );
        assert!(
            run_adapter(code, "1,2,3\n", 2, &dir.path().join("c"))
                .unwrap_err()
                .contains("3 columns")
        );
    }

    #[test]
    fn a_reader_that_opens_a_file_is_refused_before_anyone_is_asked() {
        // Seed 001, adapters.FORBIDDEN: checked on the text, before the parser, so it holds
        // without Python too.
        let code = "def adapt(text):\n    return [[float(v)] for v in open('/etc/passwd')]";
        assert_eq!(
            check(code, Kind::Adapter).unwrap_err(),
            "generated code may not use 'open('"
        );
        // Seed 001, adapters.check_source examples, word for word.
        assert_eq!(
            check("import os\ndef adapt(text): return []", Kind::Adapter).unwrap_err(),
            "generated code may not use 'import'"
        );
        if py_or_skip() {
            assert_eq!(
                check("def adapt(text):\n    return [[1.0, 2.0]]", Kind::Adapter),
                Ok(vec![])
            );
            assert_eq!(
                check("x = 1", Kind::Adapter).unwrap_err(),
                "generated code must define a function called adapt"
            );
            assert_eq!(
                check("def main(inputs):\n    return {}", Kind::Script).unwrap_err(),
                "It must define main(inputs, out); this main takes (inputs)."
            );
        }
        // A script (which reads its inputs by path) may open files: the rule is the reader's.
        if py_or_skip() {
            assert!(
                check(
                    "def main(inputs, out):\n    return {'n': len(open(inputs['a']).read())}",
                    Kind::Script
                )
                .is_ok()
            );
        }
    }

    #[test]
    fn a_reader_runs_with_the_builtins_whitelist_and_a_five_second_limit() {
        if !py_or_skip() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        // `type` is neither forbidden text nor on the whitelist: the namespace lacks it.
        let e = run_adapter(
            "def adapt(text):\n    return [[float(type(text) is str)]]",
            "x",
            1,
            &dir.path().join("a"),
        )
        .unwrap_err();
        assert!(e.contains("NameError") && e.contains("type"), "{e}");
        assert_eq!(ADAPTER_TIMEOUT, Duration::from_secs(5));
        let e = run_adapter(
            "def adapt(text):\n    while True:\n        pass",
            "x",
            1,
            &dir.path().join("b"),
        )
        .unwrap_err();
        assert_eq!(e, "It ran longer than 5 s and was stopped.");
    }
}

/// Scripts that try to escape. Each runs WITHOUT the static check (which would refuse most of
/// them outright), to show that the sandbox itself holds; each must fail, be reported, and
/// change nothing outside its folder.
#[cfg(test)]
mod escape_tests {
    use super::*;

    struct Site {
        _tmp: tempfile::TempDir,
        home: PathBuf,
        input: PathBuf,
        folder: PathBuf,
    }

    fn site() -> Option<Site> {
        python()?;
        let tmp = tempfile::tempdir().ok()?;
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).ok()?;
        let input = tmp.path().join("project/data.csv");
        std::fs::create_dir_all(input.parent()?).ok()?;
        std::fs::write(&input, "x,z\n0,100\n").ok()?;
        let folder = tmp.path().join("run/scripts/1");
        Some(Site {
            _tmp: tmp,
            home,
            input,
            folder,
        })
    }

    fn attempt(s: &Site, body: &str, imports: &[&str]) -> ScriptRun {
        let src = format!(
            "def main(inputs, out):\n{}\n",
            body.lines()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let imports: Vec<String> = imports.iter().map(|s| s.to_string()).collect();
        let src = imports
            .iter()
            .map(|m| format!("import {m}\n"))
            .collect::<String>()
            + &src;
        run_checked(
            &src,
            &imports,
            &[("data".into(), s.input.clone())],
            &s.folder,
            Duration::from_secs(20),
        )
    }

    #[test]
    fn writing_to_the_home_folder_fails() {
        let Some(s) = site() else {
            return eprintln!("skipping: no python3");
        };
        let target = s.home.join("escaped.txt");
        let r = attempt(
            &s,
            &format!(
                "open({:?}, 'w').write('x')\nreturn {{}}",
                target.display().to_string()
            ),
            &[],
        );
        assert_eq!(r.status, "failed", "{r:?}");
        assert!(r.error.contains("PermissionError"), "{}", r.error);
        assert!(!target.exists());
    }

    #[test]
    fn overwriting_an_input_fails_and_the_input_is_unchanged() {
        let Some(s) = site() else {
            return eprintln!("skipping: no python3");
        };
        let r = attempt(
            &s,
            "open(inputs['data'], 'w').write('gone')\nreturn {}",
            &[],
        );
        assert_eq!(r.status, "failed", "{r:?}");
        assert_eq!(std::fs::read_to_string(&s.input).unwrap(), "x,z\n0,100\n");
        // os.open with write flags, bypassing open()'s mode string:
        let r = attempt(
            &s,
            "fd = os.open(inputs['data'], os.O_WRONLY | os.O_TRUNC)\nos.write(fd, b'gone')\nreturn {}",
            &["os"],
        );
        assert_eq!(r.status, "failed", "{r:?}");
        assert_eq!(std::fs::read_to_string(&s.input).unwrap(), "x,z\n0,100\n");
    }

    #[test]
    fn opening_a_socket_to_localhost_fails() {
        let Some(s) = site() else {
            return eprintln!("skipping: no python3");
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let r = attempt(
            &s,
            &format!(
                "c = socket.create_connection(('127.0.0.1', {port}), timeout=2)\nreturn {{'connected': True}}"
            ),
            &["socket"],
        );
        assert_eq!(r.status, "failed", "{r:?}");
        assert!(listener.accept().is_err(), "nothing reached the listener");
    }

    #[test]
    fn spawning_a_process_fails() {
        let Some(s) = site() else {
            return eprintln!("skipping: no python3");
        };
        let marker = s.home.join("spawned");
        let r = attempt(
            &s,
            &format!("os.system('touch {}')\nreturn {{}}", marker.display()),
            &["os"],
        );
        assert_eq!(r.status, "failed", "{r:?}");
        let r = attempt(
            &s,
            &format!(
                "subprocess.run(['touch', '{}'])\nreturn {{}}",
                marker.display()
            ),
            &["subprocess"],
        );
        assert_eq!(r.status, "failed", "{r:?}");
        assert!(!marker.exists());
    }

    #[test]
    fn an_api_key_in_the_environment_is_not_visible() {
        let Some(s) = site() else {
            return eprintln!("skipping: no python3");
        };
        // The test process itself has a key; the script must not see it.
        // SAFETY: set before the child is spawned, read by nothing else concurrently that matters.
        unsafe { std::env::set_var("OPENAI_API_KEY", "sk-should-never-leak") };
        let r = attempt(
            &s,
            "return {'key': os.environ.get('OPENAI_API_KEY'), 'n': len(os.environ)}",
            &["os"],
        );
        assert_eq!(r.status, "ok", "{r:?}");
        assert!(r.result["key"].is_null(), "{:?}", r.result);
        assert!(
            !serde_json::to_string(&r)
                .unwrap()
                .contains("sk-should-never-leak")
        );
    }

    #[test]
    fn a_script_that_runs_forever_is_stopped_at_its_time_limit() {
        let Some(s) = site() else {
            return eprintln!("skipping: no python3");
        };
        let src = "def main(inputs, out):\n    while True:\n        pass\n";
        let t0 = Instant::now();
        let r = run_checked(src, &[], &[], &s.folder, Duration::from_secs(2));
        assert_eq!(r.status, "timed_out");
        assert!(r.error.contains("longer than 2 s"));
        assert!(t0.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn native_libraries_cannot_be_loaded() {
        let Some(s) = site() else {
            return eprintln!("skipping: no python3");
        };
        let r = attempt(
            &s,
            "libc = ctypes.CDLL('libc.so.6')\nreturn {}",
            &["ctypes"],
        );
        assert_eq!(r.status, "failed", "{r:?}");
    }

    #[test]
    fn landlock_holds_even_without_the_audit_hook() {
        // The kernel's rules alone: the audit hook is switched off for this run.
        let Some(s) = site() else {
            return eprintln!("skipping: no python3");
        };
        let Some(abi) = landlock_abi() else {
            return eprintln!("skipping: no Landlock on this kernel");
        };
        let target = s.home.join("escaped.txt");
        let src = format!(
            "def main(inputs, out):\n    open({:?}, 'w').write('x')\n    return {{}}\n",
            target.display().to_string()
        );
        let r = run_without_hook(&src, &[], &[], &s.folder);
        assert_eq!(r.status, "failed", "{r:?}");
        assert!(
            r.error.contains("Permission denied"),
            "the kernel refused it: {}",
            r.error
        );
        assert!(!target.exists());
        let r = run_without_hook(
            "import os\ndef main(inputs, out):\n    os.system('echo hi > /tmp/hgx-escape')\n    return {'rc': 0}\n",
            &["os".into()],
            &[],
            &s.folder,
        );
        assert!(
            !Path::new("/tmp/hgx-escape").exists(),
            "no program could be executed: {r:?}"
        );
        if abi >= 4 {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let src = format!(
                "import socket\ndef main(inputs, out):\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    return {{}}\n"
            );
            let r = run_without_hook(&src, &["socket".into()], &[], &s.folder);
            assert_eq!(r.status, "failed", "{r:?}");
            assert!(
                r.error.contains("Permission denied") || r.error.contains("PermissionError"),
                "{}",
                r.error
            );
        }
    }
}
