//! Issue 19, item 7: every escape attempt the attacker made against the script sandbox, each
//! asserted to fail. Every script first switches the Python audit hook off by rebinding the
//! runner's globals (the attack of the issue), so what holds is the kernel's side: Landlock,
//! seccomp, rlimits, the process group, and the parent's own careful reads. Scripts run
//! through `run_checked` (no static check), as code the checker would have refused.
//! Skipped, with the reason printed, without python3 or Landlock.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::scratch::{ScriptRun, landlock_abi, python, run_checked};

/// Switches the runner's audit hook off: after this its checks pass everything.
const REBIND: &str = "import __main__\n\
__main__.BLOCKED = set()\n\
__main__.BLOCKED_PREFIXES = ()\n\
__main__.WRITES = set()\n\
__main__.inside = lambda p: True\n";

/// The audit hook's own refusals say this; it must not be what stopped an attempt here.
const HOOK_WORDS: &str = "not allowed";

struct Site {
    tmp: tempfile::TempDir,
    folder: PathBuf,
    input: PathBuf,
}

fn site() -> Option<Site> {
    if python().is_none() {
        eprintln!("skipping: no python3 on this machine");
        return None;
    }
    if landlock_abi().is_none() {
        eprintln!("skipping: no Landlock on this kernel");
        return None;
    }
    let tmp = tempfile::tempdir().ok()?;
    let input = tmp.path().join("project/data.csv");
    std::fs::create_dir_all(input.parent()?).ok()?;
    std::fs::write(&input, "x,z\n0,100\n").ok()?;
    let folder = tmp.path().join("run/scripts/1");
    Some(Site { tmp, folder, input })
}

/// Run `body` (the inside of `main`, imports at the top) after the rebinding.
fn attempt(s: &Site, imports: &[&str], body: &str, timeout: Duration) -> ScriptRun {
    let indented: String = body.lines().map(|l| format!("    {l}\n")).collect();
    let head: String = imports.iter().map(|m| format!("import {m}\n")).collect();
    let src = format!("{head}{REBIND}def main(inputs, out):\n{indented}");
    let imports: Vec<String> = imports.iter().map(|m| m.to_string()).collect();
    run_checked(
        &src,
        &imports,
        &[("data".into(), s.input.clone())],
        &s.folder,
        timeout,
    )
}

/// The attempt failed, and not because of the (disabled) audit hook.
fn assert_refused_by_kernel(r: &ScriptRun, words: &[&str]) {
    assert_eq!(r.status, "failed", "{r:?}");
    assert!(
        !r.error.contains(HOOK_WORDS),
        "the hook was still on: {}",
        r.error
    );
    assert!(
        words.iter().any(|w| r.error.contains(w)),
        "expected one of {words:?}: {}",
        r.error
    );
}

const SHORT: Duration = Duration::from_secs(20);

#[test]
fn the_rebinding_really_switches_the_hook_off() {
    // Control: the same write outside the folder, hook on, is refused by the hook; after the
    // rebinding the hook lets it through and only Landlock refuses it.
    let Some(s) = site() else { return };
    let target = s.tmp.path().join("escaped.txt");
    let body = format!(
        "open({:?}, 'w').write('x')\nreturn {{}}",
        target.display().to_string()
    );
    let src = format!(
        "def main(inputs, out):\n    {}\n",
        body.replace('\n', "\n    ")
    );
    let hooked = run_checked(&src, &[], &[], &s.folder, SHORT);
    assert!(hooked.error.contains("not allowed"), "{hooked:?}");
    let r = attempt(&s, &[], &body, SHORT);
    assert_refused_by_kernel(&r, &["Permission denied"]);
    assert!(!target.exists());
}

#[test]
fn a_fork_bomb_cannot_fork() {
    let Some(s) = site() else { return };
    let r = attempt(
        &s,
        &["os", "time"],
        "for i in range(60):\n    if os.fork() == 0:\n        time.sleep(30)\n        os._exit(0)\nreturn {}",
        SHORT,
    );
    assert_refused_by_kernel(&r, &["Operation not permitted", "Resource temporarily"]);
}

#[test]
fn no_subprocess_not_even_the_interpreter() {
    let Some(s) = site() else { return };
    let marker = s.folder.join("out/spawned");
    let r = attempt(
        &s,
        &["subprocess", "sys"],
        &format!(
            "subprocess.run([sys.executable, '-c', 'open({:?}, \"w\")'])\nreturn {{}}",
            marker.display().to_string()
        ),
        SHORT,
    );
    assert_refused_by_kernel(&r, &["Operation not permitted", "Permission denied"]);
    assert!(!marker.exists());
}

#[test]
fn no_udp_or_tcp_to_localhost() {
    let Some(s) = site() else { return };
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let port = udp.local_addr().unwrap().port();
    let r = attempt(
        &s,
        &["socket"],
        &format!(
            "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))\nreturn {{}}"
        ),
        SHORT,
    );
    assert_refused_by_kernel(&r, &["Permission denied"]);
    assert!(udp.recv(&mut [0u8; 8]).is_err(), "a datagram arrived");
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let r = attempt(
        &s,
        &["socket"],
        &format!("socket.create_connection(('127.0.0.1', {port}), timeout=2)\nreturn {{}}"),
        SHORT,
    );
    assert_refused_by_kernel(&r, &["Permission denied"]);
    assert!(tcp.accept().is_err(), "a connection arrived");
}

#[test]
fn four_gib_cannot_be_allocated() {
    let Some(s) = site() else { return };
    let r = attempt(
        &s,
        &[],
        "b = bytearray(4 << 30)\nreturn {'n': len(b)}",
        SHORT,
    );
    assert_refused_by_kernel(&r, &["MemoryError"]);
}

#[test]
fn nothing_outlives_the_time_limit() {
    let Some(s) = site() else { return };
    // A child that would write after the limit, then a loop that never ends.
    let late = s.folder.join("out/late.txt");
    let r = attempt(
        &s,
        &["os", "time"],
        &format!(
            "try:\n    if os.fork() == 0:\n        time.sleep(3)\n        open({:?}, 'w').write('alive')\n        os._exit(0)\nexcept OSError:\n    pass\nwhile True:\n    pass",
            late.display().to_string()
        ),
        Duration::from_secs(2),
    );
    assert_eq!(r.status, "timed_out", "{r:?}");
    std::thread::sleep(Duration::from_secs(3));
    assert!(!late.exists(), "a process outlived the script's limit");
}

#[test]
fn planted_links_are_neither_read_nor_written_through() {
    let Some(s) = site() else { return };
    let user_file = s.tmp.path().join("users_notes.txt");
    std::fs::write(&user_file, "mine").unwrap();
    let fake = s.tmp.path().join("fake_result.json");
    std::fs::write(
        &fake,
        r#"{"status": "ok", "result": {"secret": "outside"}}"#,
    )
    .unwrap();
    let body = format!(
        "import pathlib\nd = pathlib.Path(out).parent\nfor n in ['record.json', 'proposed.py', 'printed.txt', 'purpose.txt']:\n    os.symlink({:?}, d / n)\n(d / '_result.json').unlink(missing_ok=True)\nos.symlink({:?}, d / '_result.json')\nos._exit(0)",
        user_file.display().to_string(),
        fake.display().to_string()
    );
    let r = attempt(&s, &["os"], &body, SHORT);
    // The parent did not read the planted result.
    assert_eq!(r.status, "failed", "{r:?}");
    assert!(!serde_json::to_string(&r).unwrap().contains("outside"));
    // Saving the record replaces the links; the user's file is untouched.
    let record = super::script_record::ScriptRecord {
        n: 1,
        kind: "script".into(),
        purpose: "p".into(),
        proposed: "code".into(),
        edited: None,
        decision: "run".into(),
        by: super::events::AnsweredBy::User,
        status: r.status.clone(),
        result: r.result.clone(),
        files: r.files.clone(),
        printed: r.printed.clone(),
        error: r.error.clone(),
        folder: r.folder.clone(),
    };
    super::offers::save_record(&record);
    assert_eq!(std::fs::read_to_string(&user_file).unwrap(), "mine");
    assert_eq!(
        std::fs::read_to_string(r.folder.join("proposed.py")).unwrap(),
        "code"
    );
}

#[test]
fn etc_shadow_and_the_parents_environment_are_unreadable() {
    let Some(s) = site() else { return };
    for path in ["/etc/shadow", "/etc/hostname"] {
        if !Path::new(path).exists() {
            continue;
        }
        let r = attempt(
            &s,
            &[],
            &format!("return {{'t': open({path:?}).read()}}"),
            SHORT,
        );
        assert_refused_by_kernel(&r, &["Permission denied"]);
    }
    let r = attempt(
        &s,
        &["os"],
        "return {'t': open(f'/proc/{os.getppid()}/environ', 'rb').read().decode('latin-1')}",
        SHORT,
    );
    assert_refused_by_kernel(&r, &["Permission denied"]);
}

#[test]
fn link_cycles_in_the_output_are_not_followed() {
    let Some(s) = site() else { return };
    let r = attempt(
        &s,
        &["os"],
        "(out / 'real.txt').write_text('1')\nos.symlink(out, out / 'loop')\nos.symlink('/', out / 'root')\nreturn {'files': ['real.txt']}",
        SHORT,
    );
    assert_eq!(r.status, "ok", "{r:?}");
    assert_eq!(r.files, vec!["real.txt".to_string()]);
    assert!(r.printed.contains("a link, not followed"), "{}", r.printed);
}
