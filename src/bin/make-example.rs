//! Writes the bundled example project (`assets/example` by default) from its documented
//! truth (`src/example`), with the project's own forward models plus stated, seeded noise —
//! or, with `--truth FILE`, an example project from any truth of the schema of
//! `assets/example/truth.json` (so answers can be tested against truths the code was not
//! tuned on).
//!
//! ```text
//! cargo run --release --bin make-example [-- <folder>]
//! cargo run --release --bin make-example -- --truth my_truth.json [<folder>]
//! ```

use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (truth, rest): (Option<PathBuf>, Vec<&String>) = match args
        .iter()
        .position(|a| a == "--truth")
    {
        Some(i) => match args.get(i + 1) {
            Some(f) => (
                Some(PathBuf::from(f)),
                args.iter()
                    .enumerate()
                    .filter(|(k, _)| *k != i && *k != i + 1)
                    .map(|(_, a)| a)
                    .collect(),
            ),
            None => {
                eprintln!(
                    "error: --truth needs a file (a truth of the schema of assets/example/truth.json)"
                );
                std::process::exit(2);
            }
        },
        None => (None, args.iter().collect()),
    };
    let default_dir = || {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        match &truth {
            // Never over the bundled example: a truth of one's own goes beside it.
            Some(f) => base.join("runs").join(format!(
                "example-{}",
                f.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            )),
            None => base.join("assets").join("example"),
        }
    };
    let dir = rest.first().map(PathBuf::from).unwrap_or_else(default_dir);
    let written = match &truth {
        Some(f) => hydrogeo_studio::example::read_truth(f)
            .and_then(|t| hydrogeo_studio::example::write_project_from(&t, &dir)),
        None => hydrogeo_studio::example::write_project(&dir),
    };
    match written {
        Ok(file) => println!("wrote {}", file.display()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
