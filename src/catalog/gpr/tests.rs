//! The GPR tools through the registry, on the example's line and real field data.

use super::*;
use crate::methods::gpr::process::Recipe;
use crate::runtime::step::DecidedBy;
use crate::runtime::{StepStatus, invoke};

fn registry() -> Registry {
    let mut reg = Registry::new();
    register(&mut reg).unwrap();
    reg
}

/// A run over `file` (absolute) with `config`, writing into `out`.
fn context(file: &Path, config: Value, out: &Path) -> RunContext {
    let mut inputs = Map::new();
    inputs.insert(DATA_ROLE.into(), Value::from(file.display().to_string()));
    let config = match config {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    RunContext::new("Process the radar line")
        .with_config(config)
        .with_inputs(&inputs, Path::new("/"))
        .with_output_dir(out)
}

fn run(ctx: &mut RunContext, tool: &str) -> StepStatus {
    invoke(ctx, &registry(), tool, "test", DecidedBy::Policy)
}

fn last(ctx: &RunContext) -> &crate::runtime::Step {
    ctx.steps.last().unwrap()
}

/// The real GSSI line (oracle gpr_readers.json: 512 × 1040, εr 6, 48 ns): the summary
/// states those numbers, the product holds the line, the raw radargram is drawn.
#[test]
fn load_reads_the_real_dzt_and_draws_it_as_recorded() {
    let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
    let out = tempfile::tempdir().unwrap();
    let mut ctx = context(&path, json!({}), out.path());
    assert_eq!(
        run(&mut ctx, "load_gpr_line"),
        StepStatus::Ok,
        "{:?}",
        last(&ctx)
    );
    let s = &last(&ctx).summary;
    assert!(s.contains("1040 traces × 512 samples"), "{s}");
    assert!(
        s.contains("0–47.91 ns two-way time (0.09375 ns sampling)"),
        "{s}"
    );
    assert!(s.contains("header εr 6 (an instrument setting)"), "{s}");
    assert!(s.contains("400 MHz antenna"), "{s}");
    let line = held::<GprLine>(&ctx, keys::GPR_DATA).unwrap();
    assert_eq!((line.n_samples, line.n_traces), (512, 1040));
    let numbers = ctx.product(keys::GPR_DATA).unwrap().key_numbers();
    assert_eq!(numbers["n_data"], json!(512 * 1040));
    assert_eq!(numbers["survey_dates"], json!(["2017-03-21"]));
    let fig = &last(&ctx).figures[0];
    assert!(fig.caption.contains("two-way time (ns"), "{}", fig.caption);
    let img = image::open(&fig.path).unwrap();
    assert!(img.width() > 500 && img.height() > 300);
    let md = ctx
        .product(keys::GPR_DATA)
        .unwrap()
        .report_markdown()
        .unwrap();
    assert!(
        md.contains("| Header εr | 6 (the operator's instrument setting"),
        "{md}"
    );
    assert!(!md.contains("N/A"));
}

/// Without a user velocity the DZT header's εr = 6 is used and said to be an instrument
/// setting: v = c/√6 = 0.12239 m/ns, depth rows v·dt/2 (exact). The .npz, recipe JSON and
/// radargram are written and read back; the report has the recipe table.
#[test]
fn process_uses_the_header_permittivity_and_says_so() {
    let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
    let out = tempfile::tempdir().unwrap();
    let mut ctx = context(&path, json!({}), out.path());
    run(&mut ctx, "load_gpr_line");
    assert_eq!(
        run(&mut ctx, "process_gpr_line"),
        StepStatus::Ok,
        "{:?}",
        last(&ctx)
    );
    let s = last(&ctx).summary.clone();
    assert!(s.contains("from εr = 6 in the file header"), "{s}");
    assert!(s.contains("not a measurement"), "{s}");
    assert!(s.contains("the line is in depth"), "{s}");
    assert!(
        ctx.warnings.iter().any(|w| w.contains("instrument")),
        "{:?}",
        ctx.warnings
    );
    let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
    assert_eq!(r.velocity_origin, VelocityOrigin::HeaderPermittivity);
    let v = 0.299_792_458 / 6f64.sqrt();
    let n = ctx.product(keys::GPR_RESULTS).unwrap().key_numbers();
    assert!((n["velocity_m_per_ns"].as_f64().unwrap() - v).abs() < 1e-15);
    assert!((r.processed.vertical_step - v * 0.09375 / 2.0).abs() < 1e-15);
    let files = ctx.product(keys::GPR_RESULTS).unwrap().files();
    assert_eq!(files.len(), 2);
    let npz = std::fs::read(&files[0]).unwrap();
    assert!(npz.windows(11).any(|w| w == b"depth_m.npy"));
    let recipe: Recipe =
        serde_json::from_str(&std::fs::read_to_string(&files[1]).unwrap()).unwrap();
    assert_eq!(recipe.steps.len(), 10);
    assert_eq!(recipe, r.processed.recipe);
    assert!(image::open(&last(&ctx).figures[0].path).is_ok());
    let md = ctx
        .product(keys::GPR_RESULTS)
        .unwrap()
        .report_markdown()
        .unwrap();
    assert!(md.contains("| # | Step | Applied | Chosen by | Parameters | What it did |"));
    assert!(md.contains("Left out, and why"), "{md}");
    assert!(md.contains("background removal"), "{md}");
    // Issue 21: a depth from the header's εr (a value keyed into the instrument) fails the
    // line's evaluation on the real file, and the report says why.
    assert_eq!(r.evaluation.component("velocity_provenance"), Some(30.0));
    assert!(!r.evaluation.passed, "{}", r.evaluation.sentence());
    assert!(
        md.contains("| velocity provenance | 30/100: from εr = 6 in the file header"),
        "{md}"
    );
}

/// A user velocity wins over the header; one outside 0.01–0.3 m/ns is refused with the
/// reason; an unknown processing key and a non-numeric velocity are errors naming them.
#[test]
fn user_settings_are_used_or_refused_with_the_reason() {
    let path = crate::require_data!("gpr/gprpy/GSSI_FILE____032.DZT");
    let out = tempfile::tempdir().unwrap();
    let mut ctx = context(&path, json!({ VELOCITY_KEY: 0.1 }), out.path());
    run(&mut ctx, "load_gpr_line");
    assert_eq!(run(&mut ctx, "process_gpr_line"), StepStatus::Ok);
    let s = &last(&ctx).summary;
    assert!(
        s.contains("0.1000 m/ns from the project setting gpr_velocity_m_per_ns (a user value)"),
        "{s}"
    );
    let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
    assert!((r.processed.vertical_step - 0.1 * 0.09375 / 2.0).abs() < 1e-15);

    for (config, expect) in [
        (json!({ VELOCITY_KEY: 0.5 }), "speed of light"),
        (
            json!({ VELOCITY_KEY: "fast" }),
            "gpr_velocity_m_per_ns must be a number",
        ),
        (json!({ PERMITTIVITY_KEY: 0.5 }), "below 1"),
        (json!({ PARAMS_KEY: { "dewow": 3 } }), "expected one of"),
    ] {
        let mut ctx = context(&path, config.clone(), out.path());
        run(&mut ctx, "load_gpr_line");
        assert_eq!(
            run(&mut ctx, "process_gpr_line"),
            StepStatus::Failed,
            "{config}"
        );
        let e = &last(&ctx).error;
        assert!(e.contains(expect), "{config}: {e}");
    }
    // gpr_permittivity = 9 → c/3.
    let mut ctx = context(&path, json!({ PERMITTIVITY_KEY: 9.0 }), out.path());
    run(&mut ctx, "load_gpr_line");
    run(&mut ctx, "process_gpr_line");
    let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
    assert_eq!(r.velocity_origin, VelocityOrigin::UserPermittivity);
    let v = r.processed.velocity.as_ref().unwrap().velocity_m_per_ns;
    assert!((v - 0.299_792_458 / 3.0).abs() < 1e-15);
}

/// The pulseEKKO line has no permittivity in its header: without a user velocity it stays
/// in two-way time and the summary says why and what to set.
#[test]
fn without_a_velocity_the_line_stays_in_time_and_says_why() {
    let path = crate::require_data!("gpr/gprpy/SnS_ComOffs_XLINE00.DT1");
    let out = tempfile::tempdir().unwrap();
    let mut ctx = context(&path, json!({}), out.path());
    assert_eq!(run(&mut ctx, "load_gpr_line"), StepStatus::Ok);
    assert!(last(&ctx).summary.contains("531 traces × 1500 samples"));
    assert_eq!(
        run(&mut ctx, "process_gpr_line"),
        StepStatus::Ok,
        "{:?}",
        last(&ctx)
    );
    let s = &last(&ctx).summary;
    assert!(s.contains("stays in two-way time"), "{s}");
    assert!(s.contains("Why two-way time: no velocity was given"), "{s}");
    assert!(
        s.contains("set gpr_velocity_m_per_ns or gpr_permittivity"),
        "{s}"
    );
    let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
    assert_eq!(r.velocity_origin, VelocityOrigin::None);
    assert!(
        r.left_out
            .iter()
            .any(|l| l.step == "migration" && l.why.contains("needs a velocity"))
    );
    let f = &last(&ctx).figures[0];
    assert!(f.caption.contains("two-way time (ns)"), "{}", f.caption);
}

/// The WARR gather is analysed by hyperbolic semblance (0.06–0.16 m/ns, the bounds of the
/// method test on this file), kept in two-way time, and its semblance panel drawn.
#[test]
fn a_warr_gather_is_analysed_for_velocity() {
    let path = crate::require_data!("gpr/gprpy/SnS_WARR_XLINE00.DT1");
    let out = tempfile::tempdir().unwrap();
    let mut ctx = context(&path, json!({}), out.path());
    run(&mut ctx, "load_gpr_line");
    assert!(
        last(&ctx).summary.contains("WARR gather (assumed)"),
        "{}",
        last(&ctx).summary
    );
    assert_eq!(
        run(&mut ctx, "process_gpr_line"),
        StepStatus::Ok,
        "{:?}",
        last(&ctx)
    );
    let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
    assert_eq!(r.velocity_origin, VelocityOrigin::Semblance);
    let v = ctx.product(keys::GPR_RESULTS).unwrap().key_numbers()["semblance_velocity_m_per_ns"]
        .as_f64()
        .unwrap();
    assert!((0.06..=0.16).contains(&v), "{v}");
    assert_eq!(r.processed.domain, Domain::TwoWayTime);
    assert!(
        last(&ctx).summary.contains("hyperbolic semblance"),
        "{}",
        last(&ctx).summary
    );
    assert_eq!(last(&ctx).figures.len(), 2);
    assert!(last(&ctx).figures[1].caption.contains("Semblance"));
}

/// The whole run over the example project's radar line alone: the GPR steps come in
/// dependency order, end ok, and the report carries the recipe; with the project's
/// velocity and a direct-wave-peak time zero the water table is 4 m deep within one row.
#[test]
fn a_run_over_the_example_line_reports_the_recipe() {
    let dir = tempfile::tempdir().unwrap();
    let truth = crate::example::Truth::default();
    let roles = crate::example::gpr::write(&truth, dir.path()).unwrap();
    let mut inputs = Map::new();
    for (role, p) in roles {
        inputs.insert(role, Value::from(p.display().to_string()));
    }
    let config = json!({
        VELOCITY_KEY: truth.gpr_velocity_m_per_ns,
        PARAMS_KEY: { "time_zero": { "set": { "direct_wave_peak": {} } } }
    });
    let out = dir.path().join("run");
    let mut ctx = RunContext::new("Where is the water table?")
        .with_config(config.as_object().unwrap().clone())
        .with_inputs(&inputs, dir.path())
        .with_output_dir(&out);
    let reg = crate::catalog::registry();
    crate::runtime::controller::drive(
        &mut ctx,
        &reg,
        None,
        &crate::runtime::controller::RunOptions::default(),
    );
    let tools: Vec<(&str, StepStatus)> = ctx
        .steps
        .iter()
        .map(|s| (s.tool.as_str(), s.status))
        .collect();
    let gpr: Vec<&(&str, StepStatus)> = tools.iter().filter(|(t, _)| t.contains("gpr")).collect();
    assert_eq!(
        gpr,
        vec![
            &("load_gpr_line", StepStatus::Ok),
            &("process_gpr_line", StepStatus::Ok)
        ],
        "{tools:?}"
    );
    assert!(
        tools
            .last()
            .is_some_and(|(t, s)| t.contains("report") && *s == StepStatus::Ok),
        "{tools:?}"
    );
    let r = held::<GprProcessed>(&ctx, keys::GPR_RESULTS).unwrap();
    let p = &r.processed;
    assert_eq!(p.domain, Domain::Depth);
    // The water table: median over traces away from the diffractor of the strongest
    // sample between 3 and 5 m.
    let axis = p.vertical_axis();
    let mut picks: Vec<f64> = (0..p.n_traces)
        .filter(|j| (p.positions_m[*j] - 18.0).abs() > 6.0)
        .map(|j| {
            let col = p.data.column(j);
            let i = (0..p.n_samples)
                .filter(|i| (3.0..5.0).contains(&axis[*i]))
                .max_by(|a, b| col[*a].abs().total_cmp(&col[*b].abs()))
                .unwrap();
            axis[i]
        })
        .collect();
    picks.sort_by(f64::total_cmp);
    let d = picks[picks.len() / 2];
    assert!((d - 4.0).abs() <= p.vertical_step, "{d}");
    let report =
        std::fs::read_to_string(ctx.product(keys::REPORT_FILES).unwrap().files()[0].clone())
            .unwrap();
    assert!(report.contains("Processing recipe"), "{report}");
    assert!(report.contains("project setting gpr_velocity_m_per_ns"));
    assert!(
        report.contains("2024-05-01"),
        "the survey date is collected"
    );
}

#[test]
fn a_folder_of_radar_files_is_refused_naming_them() {
    // Seed 001, read_gpr_input: "A folder of radar files is refused with their names, since a
    // run processes one line."
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("lines");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["LINE02.DZT", "line01.dzt", "notes.txt"] {
        std::fs::write(dir.join(f), "x").unwrap();
    }
    let out = tmp.path().join("run");
    let mut ctx = context(&dir, Value::Null, &out);
    assert_eq!(run(&mut ctx, "load_gpr_line"), StepStatus::Failed);
    let e = &last(&ctx).error;
    assert!(
        e.contains("a folder of 2 radar file(s) (LINE02.DZT, line01.dzt)")
            && e.contains("name one of them as gpr_file"),
        "{e}"
    );
    assert!(!e.contains("notes.txt"), "{e}");
    std::fs::remove_file(dir.join("LINE02.DZT")).unwrap();
    std::fs::remove_file(dir.join("line01.dzt")).unwrap();
    let mut ctx = context(&dir, Value::Null, &out);
    run(&mut ctx, "load_gpr_line");
    assert!(
        last(&ctx).error.contains("holds no radar file"),
        "{}",
        last(&ctx).error
    );
}
