//! Writes the bundled example project (`assets/example` by default) from its documented
//! truth (`src/example`), with the project's own forward models plus stated, seeded noise.
//!
//! ```text
//! cargo run --release --bin make-example [-- <folder>]
//! ```

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("assets")
                .join("example")
        });
    match hydrogeo_studio::example::write_project(&dir) {
        Ok(file) => println!("wrote {}", file.display()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
