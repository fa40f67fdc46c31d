//! Writes the bundled example project (`assets/example` by default) from its documented
//! truth (`src/example`), with the project's own forward models plus stated, seeded noise —
//! or, with `--truth FILE`, an example project from any truth of the schema of
//! `assets/example/truth.json` (so answers can be tested against truths the code was not
//! tuned on).
//!
//! ```text
//! cargo run --release --bin make-example [-- <folder>]
//! cargo run --release --bin make-example -- --truth my_truth.json [<folder>]
//! cargo run --release --bin make-example -- --monitoring 120 --soundings 2000 [<folder>]
//! ```
//!
//! `--monitoring EPOCHS --soundings M` writes the large example of issue 25 instead
//! ([`hydrogeo_studio::example::monitoring`]): a monitoring campaign of ERT epochs and a
//! dense TDEM line, the work a split run deals out to a cluster.

use std::path::PathBuf;

/// The value after `flag` in `args`, removed with it; `Err` when the flag has none.
fn take_value(args: &mut Vec<String>, flag: &str) -> Result<Option<String>, String> {
    let Some(i) = args.iter().position(|a| a == flag) else {
        return Ok(None);
    };
    if i + 1 >= args.len() {
        return Err(format!("{flag} needs a value"));
    }
    let v = args.remove(i + 1);
    args.remove(i);
    Ok(Some(v))
}

fn count(flag: &str, v: Option<String>) -> Result<Option<usize>, String> {
    v.map(|t| {
        t.parse::<usize>()
            .map_err(|_| format!("{flag}: expected a whole number, found '{t}'"))
    })
    .transpose()
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = (|| -> Result<_, String> {
        let truth = take_value(&mut args, "--truth")?.map(PathBuf::from);
        let monitoring = count("--monitoring", take_value(&mut args, "--monitoring")?)?;
        let soundings = count("--soundings", take_value(&mut args, "--soundings")?)?;
        Ok((truth, monitoring, soundings))
    })();
    let (truth, monitoring, soundings) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "error: {e} (usage: make-example [--truth FILE] [--monitoring EPOCHS --soundings M] [FOLDER])"
            );
            std::process::exit(2);
        }
    };
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let large = monitoring.is_some() || soundings.is_some();
    let default_dir = || {
        let stem = truth.as_ref().map(|f| {
            f.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        match (large, stem) {
            // Never over the bundled example: anything but it goes beside it.
            (true, s) => base.join("runs").join(format!(
                "example-monitoring-{}x{}{}",
                monitoring.unwrap_or(120),
                soundings.unwrap_or(2000),
                s.map(|s| format!("-{s}")).unwrap_or_default()
            )),
            (false, Some(s)) => base.join("runs").join(format!("example-{s}")),
            (false, None) => base.join("assets").join("example"),
        }
    };
    let dir = args.first().map(PathBuf::from).unwrap_or_else(default_dir);
    let t = match &truth {
        Some(f) => hydrogeo_studio::example::read_truth(f),
        None => Ok(hydrogeo_studio::example::Truth::default()),
    };
    let written = t.and_then(|t| {
        if large {
            hydrogeo_studio::example::monitoring::write(
                &t,
                &dir,
                monitoring.unwrap_or(120),
                soundings.unwrap_or(2000),
            )
        } else {
            hydrogeo_studio::example::write_project_from(&t, &dir)
        }
    });
    match written {
        Ok(file) => println!("wrote {}", file.display()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
