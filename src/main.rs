//! `hydrogeo-studio`: the studio window, or a headless run to a report.
//!
//! ```text
//! hydrogeo-studio [--project P] [--exit-after-first-frame]   open the studio (the bundled
//!     [--auto-run|--step-run] [--panel L] [--screenshot PNG]    example project by default)
//! hydrogeo-studio run <project.json|folder> [--out DIR] [--step-by-step] [--max-steps N]
//! hydrogeo-studio read <file>                                 JSON summary of a data file
//! hydrogeo-studio models                                      the model configuration, checked
//! ```

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use hydrogeo_studio::runtime::events::{Event, Verdict};
use hydrogeo_studio::runtime::interaction::{
    ApprovalRequest, Interaction, QuestionRequest, ScriptAnswer, ScriptRequest,
};
use hydrogeo_studio::runtime::session::run;
use hydrogeo_studio::runtime::{Mode, Project};
use hydrogeo_studio::{catalog, llm, studio};

/// Every line this program prints goes through [`say`]: untrusted text (a model's reason, a
/// file's bytes in an error) cannot send terminal control sequences, and a closed stdout
/// (`hydrogeo-studio run … | head -1`) stops the printing, not the run — the run still ends
/// with its report and result.json. These shadow the standard macros for this file.
macro_rules! println {
    () => { say("\n") };
    ($($t:tt)*) => { say(&format!("{}\n", format!($($t)*))) };
}

macro_rules! print {
    ($($t:tt)*) => { say(&format!($($t)*)) };
}

/// Set once stdout is found closed; later output is dropped quietly.
static STDOUT_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn say(text: &str) {
    use std::sync::atomic::Ordering;
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let clean = hydrogeo_studio::runtime::untrusted::visible(text);
    let mut out = std::io::stdout().lock();
    if out
        .write_all(clean.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        STDOUT_GONE.store(true, Ordering::Relaxed);
    }
}

const USAGE: &str = "HydroGeo Studio — hydrogeophysical field data to an honest report.

Usage:
  hydrogeo-studio [--project <project.json|folder>] [--exit-after-first-frame]
                  [--auto-run | --step-run] [--panel <ERT|Seismic|EM|MT|Grav/Mag|GPR|Report>]
                  [--screenshot <png>]
        Open the studio window (on the bundled example project by default). Without a
        display, runs the project headless instead and says so. --auto-run starts Auto to
        report at once, --step-run Step by step; --panel shows that module; --screenshot
        saves the window as a PNG once the run has ended (with --step-run: at its first
        question, which is then declined and the run stopped), then closes.
  hydrogeo-studio run <project.json|folder> [--out DIR] [--step-by-step] [--flexible] [--max-steps N]
        Run the project to a report without a window. --flexible lets the model look at
        products and propose off-route steps (each put to you; declined without a terminal). Each step is printed as it starts and
        finishes; the last line is the run's status and its folder
        (`incomplete: runs/2026-…`), the same status result.json and the report state.
  hydrogeo-studio parts <project.json|folder> --parts N
        Print how the project splits into N parts (JSON): its independent units (ERT epochs
        of a difference, ratio or independent time-lapse, TDEM soundings inverted one by
        one, MT sites; the rest of the project is one unit) and the work kept whole
        (coupled, or not split), each with the reason. A campaign — a folder of project
        folders — splits by project, each run whole with its own report.
  hydrogeo-studio run <project.json|folder> --part i/N [--out DIR]
        Run part i (0-based) of the N-part split to a run folder of its own (journal,
        result.json, products; no report — the merge writes it).
  hydrogeo-studio merge <DIR>... --out DIR
        Make one run folder from the parts' run folders found in the DIRs: one result.json,
        one journal (parts in order), one report; a missing or failed part is named under
        Not delivered. Merge again after re-running it.
  hydrogeo-studio slurm <project.json|folder> --parts N [--partition P] [--time HH:MM:SS]
                  [--cpus C] [--sbatch-arg ARG]... [--out DIR] [--dry-run]
        Write job.sbatch (an array job, task i runs `run --part i/N`) and merge.sbatch (run
        after every task with afterany), submit both with sbatch and print the job ids and
        where the merged run will be; --dry-run only writes them.
  hydrogeo-studio new <folder> --goal \"<question>\"
        Read every file in the folder, give each recognised one its input role, and write
        project.json beside the data (the data are only read; an existing project.json is
        never overwritten). The same as File → New project from folder… in the studio.
  hydrogeo-studio read <file>
        Print a JSON summary (format, counts, ranges, units) of any data file a reader
        understands.
  hydrogeo-studio models
        Print the model configuration (HGX_PROVIDER, HGX_BASE_URL, HGX_MODEL, HGX_API_KEY_ENV)
        and check that the endpoint answers.
";

/// The exit status: 0 success, 1 a run that ended incomplete or stopped, 2 bad input (usage,
/// a project or data file that cannot be read), 3 internal (the run folder, result.json or
/// the report could not be written, or the program itself failed). README: "Exit codes".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exit {
    Success = 0,
    Incomplete = 1,
    BadInput = 2,
    Internal = 3,
}

/// An error with the exit status it ends the program with.
struct Failure {
    exit: Exit,
    error: anyhow::Error,
}

/// Usage errors and unreadable input: exit 2.
fn bad_input(error: impl Into<anyhow::Error>) -> Failure {
    Failure {
        exit: Exit::BadInput,
        error: error.into(),
    }
}

/// Anything the program could not do with good input (writing the run): exit 3.
fn internal(error: impl Into<anyhow::Error>) -> Failure {
    Failure {
        exit: Exit::Internal,
        error: error.into(),
    }
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    /// An error nobody classified is input the program could not use.
    fn from(e: E) -> Self {
        bad_input(e)
    }
}

fn main() {
    let code = match real_main() {
        Ok(exit) => exit,
        Err(f) => {
            eprintln!(
                "error: {}",
                hydrogeo_studio::runtime::untrusted::visible(&format!("{:#}", f.error))
            );
            f.exit
        }
    };
    std::process::exit(code as i32);
}

fn real_main() -> Result<Exit, Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            Ok(Exit::Success)
        }
        Some("run") => cmd_run(&args[1..]),
        Some("parts") => cmd_parts(&args[1..])
            .map(|_| Exit::Success)
            .map_err(bad_input),
        Some("merge") => cmd_merge(&args[1..]),
        Some("slurm") => cmd_slurm(&args[1..]),
        Some("read") => cmd_read(&args[1..])
            .map(|_| Exit::Success)
            .map_err(bad_input),
        Some("new") => cmd_new(&args[1..])
            .map(|_| Exit::Success)
            .map_err(bad_input),
        Some("models") => cmd_models().map(|_| Exit::Success).map_err(internal),
        Some(other) if !other.starts_with('-') => Err(bad_input(anyhow::anyhow!(
            "unknown command '{other}'\n\n{USAGE}"
        ))),
        _ => cmd_studio(&args),
    }
}

/// The example project shipped with the program.
fn example_project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join("example")
}

fn has_display() -> bool {
    std::env::var_os("DISPLAY").is_some_and(|v| !v.is_empty())
        || std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
}

fn cmd_studio(args: &[String]) -> Result<Exit, Failure> {
    let mut project = example_project();
    let mut exit_after_first_frame = false;
    let mut unattended = studio::app::Unattended::default();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--project" => {
                i += 1;
                project = PathBuf::from(args.get(i).context("--project needs a path")?);
            }
            "--exit-after-first-frame" => exit_after_first_frame = true,
            "--auto-run" => unattended.auto_run = true,
            "--step-run" => unattended.step_run = true,
            "--panel" => {
                i += 1;
                unattended.panel = Some(args.get(i).context("--panel needs a rail label")?.clone());
            }
            "--screenshot" => {
                i += 1;
                unattended.screenshot = Some(PathBuf::from(
                    args.get(i).context("--screenshot needs a PNG path")?,
                ));
            }
            other => {
                return Err(bad_input(anyhow::anyhow!(
                    "unknown option '{other}'\n\n{USAGE}"
                )));
            }
        }
        i += 1;
    }
    if !has_display() {
        println!(
            "No display (neither DISPLAY nor WAYLAND_DISPLAY is set), so the studio cannot open a window.\nRunning {} headless instead.",
            project.display()
        );
        return cmd_run(&[project.display().to_string()]);
    }
    studio::launch(studio::LaunchOptions {
        project,
        exit_after_first_frame,
        unattended,
    })
    .map_err(internal)?;
    Ok(Exit::Success)
}

fn cmd_read(args: &[String]) -> anyhow::Result<()> {
    let [file] = args else {
        bail!("read needs exactly one file\n\n{USAGE}");
    };
    let summary = catalog::read_summary(Path::new(file))?;
    println!("{}", serde_json::to_string_pretty(&summary)?);
    Ok(())
}

/// `new <folder> --goal "…"`: every file in the folder read, each recognised one given its
/// role, project.json written beside the data (never over an existing one).
fn cmd_new(args: &[String]) -> anyhow::Result<()> {
    let (folder, goal) = match args {
        [folder, flag, goal] if flag == "--goal" => (folder, goal),
        _ => bail!("new needs a folder and --goal \"<the question>\"\n\n{USAGE}"),
    };
    let dir = Path::new(folder);
    let files = catalog::new_project::scan_folder(dir)?;
    for f in &files {
        say(&format!(
            "{:<40} {:<32} {}",
            f.path.display(),
            f.format,
            f.role.as_deref().unwrap_or("-")
        ));
    }
    let path = catalog::new_project::write_project(dir, goal, &files)?;
    say(&format!("Wrote {}", path.display()));
    Ok(())
}

fn cmd_models() -> anyhow::Result<()> {
    let settings = llm::Settings::from_env();
    println!("{}", settings.describe_configuration());
    match settings.check() {
        Ok(answer) => {
            println!("The endpoint answered: {answer}");
            Ok(())
        }
        Err(why) => {
            println!("No model will be used: {why}");
            Ok(())
        }
    }
}

/// Answers on the terminal: approvals and questions are prompts; without a terminal every
/// request gets its safe default (stop, the default option, decline).
struct Terminal;

fn prompt(line: &str) -> Option<String> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    print!("{line}");
    std::io::stdout().flush().ok()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).ok()?;
    Some(answer.trim().to_lowercase())
}

impl Interaction for Terminal {
    fn approve(&self, r: &ApprovalRequest) -> Option<Verdict> {
        println!("\nNext step {}: {} — {}", r.step, r.label, r.reason);
        loop {
            let a = prompt("  [p]roceed, [s]kip or s[t]op? ")?;
            match a.as_str() {
                "p" | "proceed" | "y" | "yes" => return Some(Verdict::Proceed),
                "s" | "skip" => return Some(Verdict::Skip),
                "t" | "stop" | "q" => return Some(Verdict::Stop),
                _ => println!("  Please answer p, s or t."),
            }
        }
    }

    fn ask(&self, q: &QuestionRequest) -> Option<String> {
        println!("\nQuestion: {}", q.question);
        for (i, o) in q.options.iter().enumerate() {
            let mark = if o.id == q.default { " (default)" } else { "" };
            println!("  {}. {}{mark} — {}", i + 1, o.label, o.detail);
        }
        let a = prompt("  Your choice (number, Enter for the default): ")?;
        if a.is_empty() {
            return Some(q.default.clone());
        }
        a.parse::<usize>()
            .ok()
            .and_then(|n| q.options.get(n.wrapping_sub(1)))
            .map(|o| o.id.clone())
    }

    fn review_script(&self, r: &ScriptRequest) -> Option<ScriptAnswer> {
        println!(
            "\nA script was written for this run. Purpose: {}",
            r.purpose
        );
        for (k, p) in &r.inputs {
            println!("  reads {k}: {p}");
        }
        println!("  protections: {}", r.protections.join(", "));
        println!("----- code -----\n{}\n----------------", r.code);
        let a = prompt("  Type 'run' to run it; anything else declines: ")?;
        Some(ScriptAnswer {
            run: a == "run",
            edited_source: None,
        })
    }
}

fn print_event(e: &Event) {
    match e {
        Event::StepStarted {
            step,
            label,
            reason,
            ..
        } => {
            println!("▶ {step:>2}. {label} — {reason}");
        }
        Event::StepFinished {
            step,
            label,
            status,
            summary,
            error,
            seconds,
            ..
        } => {
            let mark = match status {
                hydrogeo_studio::runtime::StepStatus::Ok => "✓",
                hydrogeo_studio::runtime::StepStatus::Skipped => "↷",
                hydrogeo_studio::runtime::StepStatus::Blocked => "⊘",
                _ => "✗",
            };
            let text = if error.is_empty() { summary } else { error };
            println!("{mark} {step:>2}. {label} ({seconds:.1} s): {text}");
        }
        Event::Warning { text } => println!("  ! {text}"),
        Event::NoteHeard { response, .. } => println!("  note read: {response}"),
        Event::RunEnded {
            status, reasons, ..
        } => {
            println!("Run {status}.");
            for r in reasons {
                println!("  - {r}");
            }
        }
        _ => {}
    }
}

fn cmd_run(args: &[String]) -> Result<Exit, Failure> {
    let mut project_path: Option<PathBuf> = None;
    let mut out: Option<PathBuf> = None;
    let mut mode = Mode::Auto;
    let mut max_steps = None;
    let mut flexible = false;
    let mut part: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--part" => {
                i += 1;
                part = Some(catalog::cluster::parse_part(
                    args.get(i).context("--part needs i/N (e.g. 0/3)")?,
                )?);
            }
            "--out" => {
                i += 1;
                out = Some(PathBuf::from(args.get(i).context("--out needs a folder")?));
            }
            "--step-by-step" => mode = Mode::StepByStep,
            "--flexible" => flexible = true,
            "--max-steps" => {
                i += 1;
                max_steps = Some(
                    args.get(i)
                        .context("--max-steps needs a number")?
                        .parse::<usize>()?,
                );
            }
            other if other.starts_with("--") => {
                return Err(bad_input(anyhow::anyhow!(
                    "unknown option '{other}'\n\n{USAGE}"
                )));
            }
            other => project_path = Some(PathBuf::from(other)),
        }
        i += 1;
    }
    let project_path = project_path.context("run needs a project file or folder")?;
    let how = How {
        mode,
        flexible,
        max_steps,
    };
    if let Some(c) = catalog::cluster::campaign::Campaign::find(&project_path) {
        return run_campaign_part(&c, part.unwrap_or((0, 1)), out, &how);
    }
    let project = Project::load(&project_path)?;
    let (mut spec, registry) = match part {
        Some((index, n)) => {
            let plan = catalog::cluster::plan(&project, n)?;
            catalog::cluster::part_spec(&project, &plan, index)?
        }
        None => (catalog::run_spec(project), catalog::registry()),
    };
    if let Some(o) = out {
        spec.runs_dir = o;
    }
    // A part's run folder goes under `part-<i>-of-<N>/`, so the parts of one split sit side
    // by side and a re-run of a part sits beside its earlier run (the merge takes the newest).
    if let Some((index, n)) = part {
        spec.runs_dir = spec.runs_dir.join(format!("part-{index}-of-{n}"));
    }
    let outcome = execute(spec, &registry, &how)?;
    // The last line: the run's final status (the one result.json and the report state) and
    // its folder.
    println!("{}: {}", outcome.status.word(), outcome.dir.display());
    if !outcome.unwritten.is_empty() {
        return Err(internal(anyhow::anyhow!(
            "the run in {} ended, but its folder does not say so: {}",
            outcome.dir.display(),
            outcome.unwritten.join("; ")
        )));
    }
    Ok(match outcome.status {
        hydrogeo_studio::runtime::run_folder::RunStatus::Success => Exit::Success,
        _ => Exit::Incomplete,
    })
}

/// How `run` runs: the mode and step limits given on its command line.
struct How {
    mode: Mode,
    flexible: bool,
    max_steps: Option<usize>,
}

/// Run `spec` with the terminal as the person and the model from the environment (or the
/// tools' dependency order without one).
fn execute(
    mut spec: hydrogeo_studio::runtime::session::RunSpec,
    registry: &hydrogeo_studio::runtime::Registry,
    how: &How,
) -> Result<hydrogeo_studio::runtime::session::RunOutcome, Failure> {
    spec.mode = how.mode;
    spec.flexible = how.flexible;
    if how.flexible {
        spec.max_steps = hydrogeo_studio::runtime::toolbox::flexible_max_steps(spec.max_steps);
    }
    if let Some(n) = how.max_steps {
        spec.max_steps = n;
    }
    spec.interaction = Some(Arc::new(Terminal));
    spec.listeners.push(Box::new(print_event));
    let settings = llm::Settings::from_env();
    let mut decider = settings.decider();
    if let Some(why) = settings.why_no_model() {
        println!("No model: {why}. The run follows the tools' dependency order.");
    }
    run(
        spec,
        registry,
        decider
            .as_deref_mut()
            .map(|d| d as &mut dyn hydrogeo_studio::runtime::Decide),
    )
    .map_err(internal)
}

/// `run CAMPAIGN [--part i/N]`: every project of the part run whole, one after another, each
/// in `OUT/part-<i>-of-<N>/<project>/`, then the part folder that lists them (the whole
/// campaign is part 0/1).
fn run_campaign_part(
    c: &catalog::cluster::campaign::Campaign,
    (index, n): (usize, usize),
    out: Option<PathBuf>,
    how: &How,
) -> Result<Exit, Failure> {
    let plan = c.plan(n)?;
    let out = out
        .unwrap_or_else(|| c.dir.join("runs"))
        .join(format!("part-{index}-of-{n}"));
    let mut run_one = |file: &Path, runs_dir: &Path| -> catalog::cluster::campaign::ProjectRun {
        let project = Project::load(file).map_err(|e| e.to_string())?;
        println!("Campaign project {}", file.display());
        let mut spec = catalog::run_spec(project);
        spec.runs_dir = runs_dir.to_path_buf();
        let outcome =
            execute(spec, &catalog::registry(), how).map_err(|f| format!("{:#}", f.error))?;
        println!("{}: {}", outcome.status.word(), outcome.dir.display());
        if !outcome.unwritten.is_empty() {
            return Err(format!(
                "the run in {} ended, but its folder does not say so: {}",
                outcome.dir.display(),
                outcome.unwritten.join("; ")
            ));
        }
        Ok((outcome.status, outcome.dir))
    };
    let (status, dir) = catalog::cluster::campaign::run_part(c, &plan, index, &out, &mut run_one)
        .map_err(internal)?;
    println!("{}: {}", status.word(), dir.display());
    Ok(match status {
        hydrogeo_studio::runtime::run_folder::RunStatus::Success => Exit::Success,
        _ => Exit::Incomplete,
    })
}

/// The project path and `--parts N` of `parts` and `slurm`, with the other options left.
fn project_and_parts(args: &[String], what: &str) -> anyhow::Result<(PathBuf, usize, Vec<String>)> {
    let mut project = None;
    let mut n = None;
    let mut rest = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--parts" => {
                i += 1;
                let text = args.get(i).context("--parts needs a number")?;
                n = Some(text.parse::<usize>().with_context(|| {
                    format!("--parts: expected a whole number of parts, found '{text}'")
                })?);
            }
            // `--option=value` is `--option value`.
            other if other.starts_with("--") && other.contains('=') => {
                let (o, v) = other.split_once('=').unwrap_or((other, ""));
                rest.push(o.to_string());
                rest.push(v.to_string());
            }
            other if other.starts_with("--") => {
                rest.push(other.to_string());
                if let Some(v) = args.get(i + 1).filter(|_| other != "--dry-run") {
                    rest.push(v.clone());
                    i += 1;
                }
            }
            other if project.is_none() => project = Some(PathBuf::from(other)),
            other => bail!("{what}: unexpected argument '{other}'\n\n{USAGE}"),
        }
        i += 1;
    }
    Ok((
        project.with_context(|| format!("{what} needs a project file or folder"))?,
        n.with_context(|| format!("{what} needs --parts N"))?,
        rest,
    ))
}

/// `parts PROJECT --parts N`: the split as JSON.
fn cmd_parts(args: &[String]) -> anyhow::Result<()> {
    let (project, n, rest) = project_and_parts(args, "parts")?;
    if let Some(o) = rest.first() {
        bail!("parts: unknown option '{o}'\n\n{USAGE}");
    }
    let plan = match catalog::cluster::campaign::Campaign::find(&project) {
        Some(c) => c.plan(n)?,
        None => catalog::cluster::plan(&Project::load(&project)?, n)?,
    };
    println!("{}", serde_json::to_string_pretty(&plan)?);
    Ok(())
}

/// `merge DIR... --out DIR`: one run folder from the parts.
fn cmd_merge(args: &[String]) -> Result<Exit, Failure> {
    let mut dirs = Vec::new();
    let mut out = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--out" => {
                i += 1;
                out = Some(PathBuf::from(args.get(i).context("--out needs a folder")?));
            }
            other if other.starts_with("--") => {
                return Err(bad_input(anyhow::anyhow!(
                    "unknown option '{other}'\n\n{USAGE}"
                )));
            }
            other => dirs.push(PathBuf::from(other)),
        }
        i += 1;
    }
    if dirs.is_empty() {
        return Err(bad_input(anyhow::anyhow!(
            "merge needs the parts' run folders (or folders holding them)\n\n{USAGE}"
        )));
    }
    let out = out.context("merge needs --out DIR")?;
    let outcome = catalog::cluster::merge::merge(&dirs, &out).map_err(|e| match e {
        catalog::cluster::merge::MergeError::Write { .. } => internal(e),
        _ => bad_input(e),
    })?;
    for n in &outcome.not_delivered {
        println!("  - not delivered: {n}");
    }
    println!("{}: {}", outcome.status.word(), outcome.dir.display());
    Ok(match outcome.status {
        hydrogeo_studio::runtime::run_folder::RunStatus::Success => Exit::Success,
        _ => Exit::Incomplete,
    })
}

/// `slurm PROJECT --parts N …`: the batch scripts, written and (without --dry-run) submitted.
fn cmd_slurm(args: &[String]) -> Result<Exit, Failure> {
    use catalog::cluster::slurm;
    let (project_path, n, rest) = project_and_parts(args, "slurm")?;
    // The split is checked here, before anything is written or submitted. A campaign's
    // tasks are named by its folder, a project's by its file.
    let (target, base) = match catalog::cluster::campaign::Campaign::find(&project_path) {
        Some(c) => {
            c.plan(n)?;
            (c.dir.clone(), c.dir.clone())
        }
        None => {
            let project = Project::load(&project_path)?;
            catalog::cluster::plan(&project, n)?;
            (
                std::fs::canonicalize(&project.file)
                    .with_context(|| format!("{}", project.file.display()))?,
                project.dir.clone(),
            )
        }
    };
    let mut opts = slurm::SlurmOptions {
        program: std::env::current_exe().map_err(internal)?,
        project: target,
        n_parts: n,
        partition: None,
        time: None,
        cpus: None,
        extra: Vec::new(),
        dir: PathBuf::new(),
    };
    let mut dry_run = false;
    let mut out = None;
    let mut i = 0;
    while i < rest.len() {
        let value = || {
            rest.get(i + 1)
                .cloned()
                .context(format!("{} needs a value", rest[i]))
        };
        match rest[i].as_str() {
            "--dry-run" => {
                dry_run = true;
                i += 1;
                continue;
            }
            "--partition" => opts.partition = Some(value()?),
            "--time" => opts.time = Some(value()?),
            "--cpus" => {
                let v = value()?;
                opts.cpus = Some(v.parse::<usize>().with_context(|| {
                    format!("--cpus: expected a whole number of CPUs, found '{v}'")
                })?);
            }
            "--sbatch-arg" => opts.extra.push(value()?),
            "--out" => out = Some(PathBuf::from(value()?)),
            other => {
                return Err(bad_input(anyhow::anyhow!(
                    "unknown option '{other}'\n\n{USAGE}"
                )));
            }
        }
        i += 2;
    }
    opts.dir = match out {
        Some(o) => std::path::absolute(&o).map_err(internal)?,
        None => {
            let stamp = hydrogeo_studio::runtime::run_folder::RunFolder::create(
                &base.join("runs"),
                "slurm",
            )
            .map_err(internal)?;
            std::path::absolute(&stamp.dir).map_err(internal)?
        }
    };
    let (job, merge) = slurm::write_scripts(&opts).map_err(|e| match e {
        slurm::SlurmError::Value { .. } => bad_input(e),
        _ => internal(e),
    })?;
    println!("Wrote {}", job.display());
    println!("Wrote {}", merge.display());
    let merged = slurm::merged_dir(&opts.dir);
    if dry_run {
        println!(
            "Dry run: nothing submitted. Submit with `sbatch {}`, then `sbatch --dependency=afterany:<its job id> {}`; the merged run will be under {}.",
            job.display(),
            merge.display(),
            merged.display()
        );
        return Ok(Exit::Success);
    }
    let (array, merge_id) = slurm::submit(&job, &merge).map_err(internal)?;
    println!(
        "Submitted the parts as array job {array} (tasks 0-{})",
        n - 1
    );
    println!("Submitted the merge as job {merge_id} (after every task, afterany:{array})");
    println!("The merged run will be under {}", merged.display());
    println!("Follow it with `squeue -j {array},{merge_id}` and `sacct -j {array},{merge_id}`.");
    Ok(Exit::Success)
}
