//! Issue 19, item 5: runs of one project started at the same moment never share a run folder.
//! Run folders used to be claimed by "check it does not exist, then create it", so two runs in
//! the same second could both take one folder and write one journal between them.

use std::sync::{Arc, Barrier};

use hydrogeo_studio::catalog;
use hydrogeo_studio::runtime::Project;
use hydrogeo_studio::runtime::events::Event;
use hydrogeo_studio::runtime::journal::replay;
use hydrogeo_studio::runtime::session::run;

#[test]
fn twelve_runs_started_together_get_twelve_folders_with_one_journal_each() {
    const RUNS: usize = 12;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("project.json"),
        r#"{"goal": "nothing to do"}"#,
    )
    .unwrap();
    let barrier = Arc::new(Barrier::new(RUNS));
    let handles: Vec<_> = (0..RUNS)
        .map(|_| {
            let dir = tmp.path().to_path_buf();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let spec = catalog::run_spec(Project::load(&dir).unwrap());
                barrier.wait();
                run(spec, &catalog::registry(), None).unwrap().dir
            })
        })
        .collect();
    let mut dirs: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    dirs.sort();
    dirs.dedup();
    assert_eq!(dirs.len(), RUNS, "{dirs:?}");
    for dir in &dirs {
        let journal = replay(&dir.join("journal.jsonl")).unwrap();
        let started = journal
            .events
            .iter()
            .filter(|e| matches!(e, Event::RunStarted { .. }))
            .count();
        assert_eq!(started, 1, "{}", dir.display());
    }
}
