//! The only way to load, invert and evaluate ERT data: the catalog's tools and the ERT panel
//! both call these functions, with the same settings (the panel's edits layered over the
//! project's), so a step in a run and the panel's Run button make the same model.

#[allow(unused_imports)]
use super::*;
use std::sync::atomic::AtomicBool;

/// Progress of a long computation: (fraction 0–1, what it is doing).
pub type Progress<'a> = &'a mut dyn FnMut(f64, &str);

/// The ERT files of a run or a project: the data files (a series in time order) and the
/// electrode table.
#[derive(Debug, Clone, PartialEq)]
pub struct ErtInputs {
    /// `ert_files` (or the one `ert_file`).
    pub files: Vec<PathBuf>,
    /// `electrode_file`, when given.
    pub electrodes: Option<PathBuf>,
}

impl ErtInputs {
    /// The ERT inputs of `ctx`, or an error naming the role to give.
    pub fn of(ctx: &RunContext) -> anyhow::Result<Self> {
        let files = survey_files(ctx);
        if files.is_empty() {
            return Err(anyhow!(
                "no ERT file given: add one under the input role 'ert_files' (or 'ert_file')"
            ));
        }
        Ok(ErtInputs {
            files,
            electrodes: ctx.input_path(keys::ELECTRODE_FILE),
        })
    }
}

/// Every ERT survey the project names (`ert_files`, then `ert_file`), in order, without
/// duplicates (seed 001, `survey_files`): a file named twice — the same path, or two spellings
/// of it — is read once.
pub fn survey_files(ctx: &RunContext) -> Vec<PathBuf> {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for p in ctx
        .input_paths(keys::ERT_FILES)
        .into_iter()
        .chain(ctx.input_paths(keys::ERT_FILE))
    {
        let id = p.canonicalize().unwrap_or_else(|_| p.clone());
        if !seen.contains(&id) {
            seen.push(id);
            out.push(p);
        }
    }
    out
}

/// The surveys that read, and each file that did not with its reader's message (file, line,
/// expected, found — quoted content escaped).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The surveys read, in time order.
    pub set: SurveySet,
    /// `(file, why)` for each file that could not be read.
    pub unread: Vec<(PathBuf, String)>,
}

/// Read every ERT file with `instrument` (and the electrode table when given). One bad file
/// never sinks the others: it is listed in [`Loaded::unread`]; only when no file reads is it
/// an error, naming each file and why.
pub fn load(inputs: &ErtInputs, instrument: Instrument) -> anyhow::Result<Loaded> {
    let mut surveys = Vec::new();
    let mut unread = Vec::new();
    for p in &inputs.files {
        match &inputs.electrodes {
            Some(e) => read_survey_with_electrodes(p, instrument, e),
            None => read_survey(p, instrument),
        }
        .map_or_else(
            |e: ReadError| unread.push((p.clone(), e.to_string())),
            |s| surveys.push(s),
        );
    }
    if surveys.is_empty() {
        let whys: Vec<&str> = unread.iter().map(|(_, w)| w.as_str()).collect();
        return Err(anyhow!("no ERT file could be read: {}", whys.join("; ")));
    }
    Ok(Loaded {
        set: SurveySet::new(surveys),
        unread,
    })
}

/// Invert one survey (with seismic interfaces as boundaries when given).
pub fn invert_one(
    survey: &Survey,
    params: &InversionParams,
    interfaces: &[Interface],
    progress: Progress,
    cancel: &AtomicBool,
) -> anyhow::Result<InversionResult> {
    surface_line_only(std::slice::from_ref(survey))?;
    invert_survey(survey, params, interfaces, progress, cancel).map_err(|e| anyhow!("{e}"))
}

/// The inversion here is 2D under a surface line: any other electrode layout (a ring,
/// boreholes, an areal grid) is refused with what the layout is, before any mesh is built.
pub fn surface_line_only(surveys: &[Survey]) -> anyhow::Result<()> {
    for s in surveys {
        if let Some(why) = s.layout().refusal() {
            let name = s
                .source_file
                .as_ref()
                .map_or_else(|| "the survey".to_string(), |p| p.display().to_string());
            return Err(anyhow!("not inverted: {name}: {why}"));
        }
    }
    Ok(())
}

/// Invert two or more surveys of one line with the time-lapse scheme of `settings`.
pub fn invert_series(
    surveys: &[Survey],
    settings: &ErtSettings,
    progress: Progress,
    cancel: &AtomicBool,
) -> anyhow::Result<TimeLapseResult> {
    surface_line_only(surveys)?;
    let every: Vec<usize> = (1..surveys.len()).collect();
    invert_time_lapse_epochs(
        surveys,
        settings.epochs.as_deref().unwrap_or(&every),
        settings.time_lapse_method,
        &settings.inversion,
        settings.temporal_regularization,
        progress,
        cancel,
    )
    .map_err(|e| anyhow!("{e}"))
}

/// The model of a survey set: one survey inverted alone, two or more as a time-lapse series —
/// what `invert_ert` or `invert_time_lapse` would make of them.
pub fn invert(
    set: &SurveySet,
    settings: &ErtSettings,
    progress: Progress,
    cancel: &AtomicBool,
) -> anyhow::Result<ErtModel> {
    match set.surveys.as_slice() {
        [] => Err(anyhow!("the ERT data hold no survey")),
        [one] => invert_one(one, &settings.inversion, &[], progress, cancel)
            .map(|r| ErtModel::Single(Box::new(r))),
        many => invert_series(many, settings, progress, cancel)
            .map(|r| ErtModel::TimeLapse(Box::new(r))),
    }
}

/// Re-run the inversion `model` came from with another λ.
pub(super) fn rerun(
    ctx: &RunContext,
    set: &SurveySet,
    model: &ErtModel,
    lambda: f64,
) -> Result<ErtModel, InversionError> {
    let params = InversionParams {
        lambda,
        ..model.params().clone()
    };
    let cancel = ctx.cancel_flag();
    let mut pr = |f: f64, d: &str| ctx.progress(f, &format!("retry with λ {lambda:.3}: {d}"));
    Ok(match model {
        ErtModel::Single(_) => {
            let s = set
                .surveys
                .first()
                .ok_or_else(|| InversionError::BadParams("the ERT data hold no survey".into()))?;
            ErtModel::Single(Box::new(invert_survey(s, &params, &[], &mut pr, &cancel)?))
        }
        ErtModel::TimeLapse(r) => ErtModel::TimeLapse(Box::new(invert_time_lapse_epochs(
            &set.surveys,
            &epochs_of(ctx, set)?,
            r.method,
            &params,
            r.alpha,
            &mut pr,
            &cancel,
        )?)),
    })
}

/// The later surveys the run inverts (`time_lapse_epochs`, else every one).
fn epochs_of(ctx: &RunContext, set: &SurveySet) -> Result<Vec<usize>, InversionError> {
    Ok(time_lapse_epochs(ctx)
        .map_err(|e| InversionError::BadParams(format!("{e:#}")))?
        .unwrap_or_else(|| (1..set.surveys.len()).collect()))
}

/// The prior of each region of a section: the generic sediment defaults above an interface
/// (and everywhere when there is none), the bedrock defaults below it; user values replace
/// the defaults everywhere.
pub(crate) fn priors(
    cfg: &PetroConfig,
    section: &ModelSection,
) -> anyhow::Result<(Vec<PetroPrior>, Vec<usize>)> {
    use crate::methods::ert::mesh::MARKER_BELOW;
    let (user, _implied) = cfg.user_params();
    let given = user != UserPetroParams::default();
    let make = |name: &str, d: PetroPrior| {
        if given {
            PetroPrior::from_user(name, &user, &d)
        } else {
            d
        }
    };
    if section.interfaces.is_empty() {
        Ok((
            vec![make("sediment", PetroPrior::default_regolith("sediment"))],
            vec![0; section.n_params()],
        ))
    } else {
        Ok((
            vec![
                make(
                    "above the interface",
                    PetroPrior::default_regolith("above the interface"),
                ),
                make(
                    "below the interface",
                    PetroPrior::default_bedrock("below the interface"),
                ),
            ],
            section
                .param_region
                .iter()
                .map(|r| usize::from(*r == MARKER_BELOW))
                .collect(),
        ))
    }
}

/// Interfaces from the seismic structure as polylines for the mesh.
pub fn interfaces_from(lines: &[InterfaceLine]) -> Vec<Interface> {
    lines
        .iter()
        .filter(|l| l.x_m.len() >= 2 && l.x_m.len() == l.z_m.len())
        .map(|l| Interface {
            points: l.x_m.iter().zip(&l.z_m).map(|(x, z)| [*x, *z]).collect(),
        })
        .collect()
}

/// The one interface the structural constraint uses (seed 001, `interface_coords`): the line
/// traced at `threshold_m_per_s`, or — when the seismic step traced exactly one — that one,
/// since a run that extracted one interface meant that one. `None` when neither holds.
pub fn interface_coords(lines: &[InterfaceLine], threshold_m_per_s: f64) -> Option<&InterfaceLine> {
    let matches = |l: &&InterfaceLine| {
        (l.velocity_m_per_s - threshold_m_per_s).abs() <= 1e-9 * threshold_m_per_s.abs().max(1.0)
    };
    lines
        .iter()
        .find(matches)
        .or_else(|| (lines.len() == 1).then(|| &lines[0]))
}

/// Water content of every time step of `model`: Archie / Waxman–Smits with Monte Carlo over
/// the petrophysical prior of each region (`n_realizations` draws each).
pub fn water_content(
    model: &ErtModel,
    cfg: &PetroConfig,
    n_realizations: usize,
) -> anyhow::Result<Vec<WaterContent>> {
    let (pri, region) = priors(cfg, model.section())?;
    let opts = MonteCarloOptions {
        n_realizations,
        seed: cfg.seed.unwrap_or(crate::methods::petro::DEFAULT_SEED),
    };
    model
        .steps()
        .iter()
        .map(|s| {
            petro_water_content(
                &WaterContentInput {
                    resistivity_ohm_m: s.rho_ohm_m,
                    resistivity_sigma_ln: None,
                    region_of_cell: Some(&region),
                },
                &pri,
                &opts,
            )
            .map_err(|e| anyhow!("{e}"))
        })
        .collect()
}
