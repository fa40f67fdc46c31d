//! Auto to report on the bundled example project (`assets/example`: 4 ERT surveys, a seismic
//! line, 5 TDEM soundings, 3 MT sites, 400 gravity stations, one GPR line), headless and
//! without a model, from project.json to report.html. Issue #12's target: under 60 s on 2
//! cores in release. Run with `cargo bench --bench end_to_end`.

use std::path::Path;

use hydrogeo_studio::catalog;
use hydrogeo_studio::runtime::Project;
use hydrogeo_studio::runtime::session::run;

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn example_project_auto_to_report(bencher: divan::Bencher) {
    let project_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join("example");
    let runs = tempfile::tempdir().expect("temporary folder");
    bencher.bench_local(|| {
        let project = Project::load(&project_dir).expect("the example project loads");
        let mut spec = catalog::run_spec(project);
        spec.runs_dir = runs.path().to_path_buf();
        let outcome = run(spec, &catalog::registry(), None).expect("run folder");
        assert_eq!(
            outcome.status.word(),
            "success",
            "the benchmark measures a complete run: {:?}",
            outcome.reasons
        );
        outcome.dir
    });
}
