//! Water content with uncertainty: Monte Carlo over the petrophysical parameters.
//!
//! Each realization draws one parameter set per region (a region is an ERT marker region, a
//! TDEM/MT layer, or the whole model) and, when the caller gives one, a log-normal
//! perturbation of each cell's resistivity; every cell is converted with Waxman–Smits (Archie
//! when the surface term is zero). Per cell we report mean, population standard deviation and
//! the P10/P50/P90 percentiles (numpy's default linear interpolation) of θ = φ·S and of S.
//!
//! Reproducibility: realization r draws its parameters from stream r of
//! [`Xoshiro256StarStar::for_stream`], and cell c draws its resistivity perturbations from a
//! stream of its own, so the numbers depend only on the seed — not on the thread count or the
//! order in which rayon visits the cells.
//!
//! Honesty rules (peer-studio §3.3): the prior is stated as the 5–95 % range of the draws that
//! were actually used and classified `user | partial | default`; a conversion that rests on
//! default parameters says so loudly; the reliability ratio (mean σ over the range of the mean
//! map) decides whether the map is called resolved (< 0.25), qualitative only (0.25–0.5) or
//! not distinguishable (≥ 0.5).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::PetroError;
use super::relations::{Archie, WaxmanSmits, waxman_smits_saturation};
use super::rng::Xoshiro256StarStar;

/// The fewest realizations a conversion may use (peer-studio §3.3: one draw once gave σ = 0).
pub const MIN_REALIZATIONS: usize = 50;
/// The default number of realizations.
pub const DEFAULT_REALIZATIONS: usize = 100;
/// The default seed.
pub const DEFAULT_SEED: u64 = 7;

/// How one parameter is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Distribution {
    /// Always this value.
    Fixed {
        /// The value.
        value: f64,
    },
    /// Normal, redrawn until inside the parameter's physical range (a truncated normal).
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        std: f64,
    },
    /// Log-normal: ln X ~ N(ln median, sigma_ln²).
    LogNormal {
        /// The median (= exp of the mean of ln X).
        median: f64,
        /// Standard deviation of ln X.
        sigma_ln: f64,
    },
    /// Uniform on \[low, high\].
    Uniform {
        /// Lower bound.
        low: f64,
        /// Upper bound.
        high: f64,
    },
}

impl Distribution {
    fn draw(&self, rng: &mut Xoshiro256StarStar, range: (f64, f64)) -> f64 {
        let inside = |x: f64| x.is_finite() && x >= range.0 && x <= range.1;
        let raw = |rng: &mut Xoshiro256StarStar| match *self {
            Distribution::Fixed { value } => value,
            Distribution::Normal { mean, std } => mean + std * rng.next_normal(),
            Distribution::LogNormal { median, sigma_ln } => {
                median * (sigma_ln * rng.next_normal()).exp()
            }
            Distribution::Uniform { low, high } => low + (high - low) * rng.next_f64(),
        };
        // Truncation by redrawing; a distribution that almost never lands inside the range
        // is clamped after 1000 tries (validated priors never get there).
        let mut x = raw(rng);
        for _ in 0..1000 {
            if inside(x) {
                return x;
            }
            x = raw(rng);
        }
        x.clamp(range.0, range.1)
    }

    fn is_valid(&self) -> bool {
        match *self {
            Distribution::Fixed { value } => value.is_finite(),
            Distribution::Normal { mean, std } => mean.is_finite() && std.is_finite() && std >= 0.0,
            Distribution::LogNormal { median, sigma_ln } => {
                median.is_finite() && median > 0.0 && sigma_ln.is_finite() && sigma_ln >= 0.0
            }
            Distribution::Uniform { low, high } => {
                low.is_finite() && high.is_finite() && high >= low
            }
        }
    }

    /// The central value (mean, median or midpoint) for one-line descriptions.
    pub fn centre(&self) -> f64 {
        match *self {
            Distribution::Fixed { value } => value,
            Distribution::Normal { mean, .. } => mean,
            Distribution::LogNormal { median, .. } => median,
            Distribution::Uniform { low, high } => 0.5 * (low + high),
        }
    }
}

/// One petrophysical parameter: its distribution and whether the user gave it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// How it is drawn.
    pub dist: Distribution,
    /// True when the user (not a default) supplied it.
    pub from_user: bool,
}

impl Param {
    /// A parameter the user gave.
    pub fn user(dist: Distribution) -> Self {
        Param {
            dist,
            from_user: true,
        }
    }

    /// A parameter filled with a generic default.
    pub fn default_value(dist: Distribution) -> Self {
        Param {
            dist,
            from_user: false,
        }
    }
}

/// The petrophysical prior of one region (or layer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PetroPrior {
    /// Region name for the summary ("regolith", "layer 3", "marker 2").
    pub name: String,
    /// Porosity φ (fraction); drawn within \[0.001, 0.999\].
    pub porosity: Param,
    /// Cementation exponent m; drawn within \[0.5, 5\].
    pub cementation_m: Param,
    /// Saturation exponent n; drawn within \[1.05, 6\] (n > 1 keeps Waxman–Smits unique).
    pub saturation_n: Param,
    /// Tortuosity a; drawn within \[0.1, 10\].
    pub tortuosity_a: Param,
    /// Pore-water resistivity ρw (Ω·m); drawn within \[1e-3, 1e5\].
    pub fluid_resistivity_ohm_m: Param,
    /// Surface conduction B·Qv (S/m); drawn within \[0, 10\]; zero means Archie.
    pub surface_conductivity_s_per_m: Param,
}

/// The physical range each parameter is drawn within (see [`PetroPrior`]).
const RANGES: [(&str, (f64, f64)); 6] = [
    ("porosity", (1e-3, 0.999)),
    ("cementation_m", (0.5, 5.0)),
    ("saturation_n", (1.05, 6.0)),
    ("tortuosity_a", (0.1, 10.0)),
    ("fluid_resistivity_ohm_m", (1e-3, 1e5)),
    ("surface_conductivity_s_per_m", (0.0, 10.0)),
];

impl PetroPrior {
    /// Generic unconsolidated-sediment defaults (peer-studio §3.3, "regolith"): φ 0.42 ± 0.05,
    /// m 1.3 ± 0.1, n 2.1 ± 0.1, a = 1, ρw = 20 Ω·m, B·Qv 0.005 ± 0.005 S/m. Every parameter
    /// is marked as a default.
    pub fn default_regolith(name: &str) -> Self {
        let d = Param::default_value;
        PetroPrior {
            name: name.to_string(),
            porosity: d(Distribution::Normal {
                mean: 0.42,
                std: 0.05,
            }),
            cementation_m: d(Distribution::Normal {
                mean: 1.3,
                std: 0.1,
            }),
            saturation_n: d(Distribution::Normal {
                mean: 2.1,
                std: 0.1,
            }),
            tortuosity_a: d(Distribution::Fixed { value: 1.0 }),
            fluid_resistivity_ohm_m: d(Distribution::Fixed { value: 20.0 }),
            surface_conductivity_s_per_m: d(Distribution::Normal {
                mean: 0.005,
                std: 0.005,
            }),
        }
    }

    /// Generic bedrock defaults (peer-studio §3.3): φ 0.25 ± 0.15, m 1.9 ± 0.2, n 1.7 ± 0.2,
    /// a = 1, ρw = 20 Ω·m, no surface conduction. Every parameter is marked as a default.
    pub fn default_bedrock(name: &str) -> Self {
        let d = Param::default_value;
        PetroPrior {
            name: name.to_string(),
            porosity: d(Distribution::Normal {
                mean: 0.25,
                std: 0.15,
            }),
            cementation_m: d(Distribution::Normal {
                mean: 1.9,
                std: 0.2,
            }),
            saturation_n: d(Distribution::Normal {
                mean: 1.7,
                std: 0.2,
            }),
            tortuosity_a: d(Distribution::Fixed { value: 1.0 }),
            fluid_resistivity_ohm_m: d(Distribution::Fixed { value: 20.0 }),
            surface_conductivity_s_per_m: d(Distribution::Fixed { value: 0.0 }),
        }
    }

    /// A prior from the parameters the user gave, the rest taken from `defaults` (and marked
    /// as defaults), so that the source is classified user / partial / default correctly.
    pub fn from_user(name: &str, given: &UserPetroParams, defaults: &PetroPrior) -> Self {
        let pick = |u: Option<Distribution>, d: Param| match u {
            Some(dist) => Param::user(dist),
            None => Param::default_value(d.dist),
        };
        PetroPrior {
            name: name.to_string(),
            porosity: pick(given.porosity, defaults.porosity),
            cementation_m: pick(given.cementation_m, defaults.cementation_m),
            saturation_n: pick(given.saturation_n, defaults.saturation_n),
            tortuosity_a: pick(given.tortuosity_a, defaults.tortuosity_a),
            fluid_resistivity_ohm_m: pick(
                given.fluid_resistivity_ohm_m,
                defaults.fluid_resistivity_ohm_m,
            ),
            surface_conductivity_s_per_m: pick(
                given.surface_conductivity_s_per_m,
                defaults.surface_conductivity_s_per_m,
            ),
        }
    }

    fn params(&self) -> [(&'static str, &Param); 6] {
        [
            (RANGES[0].0, &self.porosity),
            (RANGES[1].0, &self.cementation_m),
            (RANGES[2].0, &self.saturation_n),
            (RANGES[3].0, &self.tortuosity_a),
            (RANGES[4].0, &self.fluid_resistivity_ohm_m),
            (RANGES[5].0, &self.surface_conductivity_s_per_m),
        ]
    }

    /// `user` when every parameter came from the user, `default` when none did, else
    /// `partial`.
    pub fn source(&self) -> PriorSource {
        let given = self.params().iter().filter(|(_, p)| p.from_user).count();
        match given {
            0 => PriorSource::Default,
            6 => PriorSource::User,
            _ => PriorSource::Partial,
        }
    }

    fn validate(&self) -> Result<(), PetroError> {
        for (name, p) in self.params() {
            if !p.dist.is_valid() {
                return Err(PetroError::InvalidInput(format!(
                    "region \"{}\": the distribution of {name} is not valid ({:?})",
                    self.name, p.dist
                )));
            }
        }
        Ok(())
    }

    /// The central value of each parameter ([`Distribution::centre`]), in the order
    /// porosity, m, n, a, ρw (Ω·m), B·Qv (S/m).
    pub fn centres(&self) -> [f64; 6] {
        self.params().map(|(_, p)| p.dist.centre())
    }

    /// `n` draws of the six parameters (order of [`Self::centres`]), each within its
    /// physical range, from the generator seeded with `seed` (the same draws every time).
    pub fn draws(&self, n: usize, seed: u64) -> Vec<[f64; 6]> {
        let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
        (0..n).map(|_| self.draw(&mut rng)).collect()
    }

    fn draw(&self, rng: &mut Xoshiro256StarStar) -> [f64; 6] {
        let mut out = [0.0; 6];
        for (i, (_, p)) in self.params().iter().enumerate() {
            out[i] = p.dist.draw(rng, RANGES[i].1);
        }
        out
    }
}

/// The petrophysical parameters a user (or a config key such as `petrophysical_params`)
/// gave; every field is optional and unknown keys are refused, naming the valid ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UserPetroParams {
    /// Porosity φ.
    pub porosity: Option<Distribution>,
    /// Cementation exponent m.
    pub cementation_m: Option<Distribution>,
    /// Saturation exponent n.
    pub saturation_n: Option<Distribution>,
    /// Tortuosity a.
    pub tortuosity_a: Option<Distribution>,
    /// Pore-water resistivity ρw, Ω·m.
    pub fluid_resistivity_ohm_m: Option<Distribution>,
    /// Surface conduction B·Qv, S/m.
    pub surface_conductivity_s_per_m: Option<Distribution>,
}

/// Where a prior came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorSource {
    /// Every parameter given by the user.
    User,
    /// Some given, the rest generic defaults.
    Partial,
    /// No petrophysical relationship given: generic defaults throughout.
    Default,
}

/// What the map of mean water content can support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reliability {
    /// Ratio < 0.25: the pattern stands out of the uncertainty.
    Resolved,
    /// 0.25 ≤ ratio < 0.5: the pattern can be described qualitatively only.
    QualitativeOnly,
    /// Ratio ≥ 0.5: differences are not distinguishable from the uncertainty.
    NotDistinguishable,
    /// Fewer than two cells, or a uniform mean map: there is no pattern to judge.
    NotApplicable,
}

impl Reliability {
    /// The class of a reliability ratio (peer-studio §3.3 thresholds).
    pub fn of(ratio: f64) -> Reliability {
        if ratio < 0.25 {
            Reliability::Resolved
        } else if ratio < 0.5 {
            Reliability::QualitativeOnly
        } else {
            Reliability::NotDistinguishable
        }
    }
}

/// The cells to convert.
#[derive(Debug, Clone, Copy)]
pub struct WaterContentInput<'a> {
    /// Bulk resistivity per cell (or layer), Ω·m.
    pub resistivity_ohm_m: &'a [f64],
    /// Optional log-normal uncertainty of each cell's resistivity (standard deviation of
    /// ln ρ), e.g. from the inversion; `None` treats the resistivities as exact.
    pub resistivity_sigma_ln: Option<&'a [f64]>,
    /// Region index of each cell into the `priors` slice; `None` puts every cell in region 0.
    pub region_of_cell: Option<&'a [usize]>,
}

/// How many realizations and which seed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MonteCarloOptions {
    /// Realizations (raised to [`MIN_REALIZATIONS`] with a note when fewer are asked for).
    pub n_realizations: usize,
    /// Seed of the generator.
    pub seed: u64,
}

impl Default for MonteCarloOptions {
    fn default() -> Self {
        MonteCarloOptions {
            n_realizations: DEFAULT_REALIZATIONS,
            seed: DEFAULT_SEED,
        }
    }
}

/// Mean, population standard deviation and percentiles per cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellStatistics {
    /// Mean over realizations.
    pub mean: Vec<f64>,
    /// Population standard deviation (ddof = 0).
    pub std: Vec<f64>,
    /// 10th percentile.
    pub p10: Vec<f64>,
    /// Median.
    pub p50: Vec<f64>,
    /// 90th percentile.
    pub p90: Vec<f64>,
}

/// The 5–95 % range of the draws of one parameter in one region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamRange {
    /// Region name.
    pub region: String,
    /// Parameter name (with unit).
    pub parameter: String,
    /// 5th percentile of the draws.
    pub p5: f64,
    /// 95th percentile of the draws.
    pub p95: f64,
    /// Whether the user gave it.
    pub from_user: bool,
}

/// The water-content conversion of a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaterContent {
    /// Cells converted.
    pub n_cells: usize,
    /// Realizations used.
    pub n_realizations: usize,
    /// Seed used.
    pub seed: u64,
    /// Volumetric water content θ = φ·S (m³/m³) per cell.
    pub water_content: CellStatistics,
    /// Saturation S per cell (after clipping to ≤ 1).
    pub saturation: CellStatistics,
    /// Per cell, the share of realizations in which S > 1 had to be clipped to 1 (the rock
    /// conducts more than the assumed brine-saturated rock would).
    pub clipped_share: Vec<f64>,
    /// Relation per region: `archie` or `waxman_smits`.
    pub relation_by_region: Vec<String>,
    /// The prior as the 5–95 % range of the actual draws, per region and parameter.
    pub prior_ranges: Vec<ParamRange>,
    /// Overall source of the prior: `user` only if every region is user-given.
    pub prior_source: PriorSource,
    /// True when any parameter is a generic default.
    pub defaults_used: bool,
    /// Mean σ(θ) over the range of the mean θ map; `None` when the map is uniform or has
    /// fewer than two cells.
    pub reliability_ratio: Option<f64>,
    /// The verdict from the ratio.
    pub reliability: Reliability,
    /// What a reader must know, the loud default warning first when defaults were used.
    pub notes: Vec<String>,
}

/// Convert resistivities to water content with Monte Carlo uncertainty (module docs).
///
/// Errors on empty input, a non-positive or non-finite resistivity, a region index outside
/// `priors`, mismatched lengths or an invalid distribution.
pub fn water_content(
    input: &WaterContentInput<'_>,
    priors: &[PetroPrior],
    options: &MonteCarloOptions,
) -> Result<WaterContent, PetroError> {
    let rho = input.resistivity_ohm_m;
    let n_cells = rho.len();
    if n_cells == 0 {
        return Err(PetroError::InvalidInput("no cells to convert".into()));
    }
    if priors.is_empty() {
        return Err(PetroError::InvalidInput(
            "no petrophysical prior given".into(),
        ));
    }
    for p in priors {
        p.validate()?;
    }
    if let Some((i, &r)) = rho
        .iter()
        .enumerate()
        .find(|(_, r)| !(r.is_finite() && **r > 0.0))
    {
        return Err(PetroError::InvalidInput(format!(
            "cell {i}: resistivity must be finite and > 0 Ω·m, got {r}"
        )));
    }
    if let Some(sig) = input.resistivity_sigma_ln {
        if sig.len() != n_cells {
            return Err(PetroError::InvalidInput(format!(
                "{} resistivity uncertainties for {n_cells} cells",
                sig.len()
            )));
        }
        if let Some((i, s)) = sig
            .iter()
            .enumerate()
            .find(|(_, s)| !(s.is_finite() && **s >= 0.0))
        {
            return Err(PetroError::InvalidInput(format!(
                "cell {i}: resistivity uncertainty (σ of ln ρ) must be finite and ≥ 0, got {s}"
            )));
        }
    }
    if let Some(reg) = input.region_of_cell {
        if reg.len() != n_cells {
            return Err(PetroError::InvalidInput(format!(
                "{} region indices for {n_cells} cells",
                reg.len()
            )));
        }
        if let Some((i, r)) = reg.iter().enumerate().find(|(_, r)| **r >= priors.len()) {
            return Err(PetroError::InvalidInput(format!(
                "cell {i}: region {r} has no prior ({} priors given)",
                priors.len()
            )));
        }
    }

    let mut notes = Vec::new();
    let n_real = if options.n_realizations < MIN_REALIZATIONS {
        notes.push(format!(
            "{} realizations were asked for; raised to the minimum of {MIN_REALIZATIONS}.",
            options.n_realizations
        ));
        MIN_REALIZATIONS
    } else {
        options.n_realizations
    };

    // Parameter draws: realization r, region k → 6 numbers, from stream r.
    let n_regions = priors.len();
    let draws: Vec<[f64; 6]> = (0..n_real)
        .flat_map(|r| {
            let mut rng = Xoshiro256StarStar::for_stream(options.seed, r as u64);
            priors
                .iter()
                .map(move |p| p.draw(&mut rng))
                .collect::<Vec<_>>()
        })
        .collect();
    let params_of = |r: usize, k: usize| draws[r * n_regions + k];

    let region = |c: usize| input.region_of_cell.map_or(0, |reg| reg[c]);
    // Cells draw their resistivity perturbations from streams after the realization streams.
    let cell_stream_base = 1u64 << 40;
    let per_cell: Vec<Result<CellResult, PetroError>> = (0..n_cells)
        .into_par_iter()
        .map(|c| {
            let k = region(c);
            let sigma_ln = input.resistivity_sigma_ln.map_or(0.0, |s| s[c]);
            let mut rng = Xoshiro256StarStar::for_stream(options.seed, cell_stream_base + c as u64);
            let mut theta = Vec::with_capacity(n_real);
            let mut sat = Vec::with_capacity(n_real);
            let mut clipped = 0usize;
            for r in 0..n_real {
                let [phi, m, n, a, rw, bqv] = params_of(r, k);
                let rho_c = if sigma_ln > 0.0 {
                    rho[c] * (sigma_ln * rng.next_normal()).exp()
                } else {
                    rho[c]
                };
                let ws = WaxmanSmits {
                    archie: Archie { a, m, n },
                    surface_conductivity_s_per_m: bqv,
                };
                let s = waxman_smits_saturation(rho_c, phi, rw, &ws)?.saturation;
                let s = if s > 1.0 {
                    clipped += 1;
                    1.0
                } else {
                    s
                };
                sat.push(s);
                theta.push(phi * s);
            }
            Ok(CellResult {
                theta: stats(&mut theta),
                sat: stats(&mut sat),
                clipped_share: clipped as f64 / n_real as f64,
            })
        })
        .collect();
    let mut cells = Vec::with_capacity(n_cells);
    for c in per_cell {
        cells.push(c?);
    }
    let collect = |f: &dyn Fn(&CellResult) -> Stat| {
        let s: Vec<Stat> = cells.iter().map(f).collect();
        CellStatistics {
            mean: s.iter().map(|x| x.mean).collect(),
            std: s.iter().map(|x| x.std).collect(),
            p10: s.iter().map(|x| x.p10).collect(),
            p50: s.iter().map(|x| x.p50).collect(),
            p90: s.iter().map(|x| x.p90).collect(),
        }
    };
    let water = collect(&|c: &CellResult| c.theta);
    let saturation = collect(&|c: &CellResult| c.sat);
    let clipped_share: Vec<f64> = cells.iter().map(|c| c.clipped_share).collect();

    // The prior as the 5–95 % range of the draws actually used.
    let labels = [
        "porosity φ",
        "cementation exponent m",
        "saturation exponent n",
        "tortuosity a",
        "pore-water resistivity ρw (Ω·m)",
        "surface conduction B·Qv (S/m)",
    ];
    let mut prior_ranges = Vec::new();
    let mut relation_by_region = Vec::new();
    for (k, p) in priors.iter().enumerate() {
        for (i, (_, param)) in p.params().iter().enumerate() {
            let mut v: Vec<f64> = (0..n_real).map(|r| params_of(r, k)[i]).collect();
            v.sort_by(f64::total_cmp);
            prior_ranges.push(ParamRange {
                region: p.name.clone(),
                parameter: labels[i].to_string(),
                p5: percentile_sorted(&v, 5.0),
                p95: percentile_sorted(&v, 95.0),
                from_user: param.from_user,
            });
        }
        let has_surface = (0..n_real).any(|r| params_of(r, k)[5] > 0.0);
        relation_by_region.push(
            if has_surface {
                "waxman_smits"
            } else {
                "archie"
            }
            .to_string(),
        );
    }

    // Prior source over the regions that hold cells.
    let used: Vec<usize> = {
        let mut u: Vec<usize> = (0..n_cells).map(region).collect();
        u.sort_unstable();
        u.dedup();
        u
    };
    let sources: Vec<PriorSource> = used.iter().map(|&k| priors[k].source()).collect();
    let prior_source = if sources.iter().all(|s| *s == PriorSource::User) {
        PriorSource::User
    } else if sources.iter().all(|s| *s == PriorSource::Default) {
        PriorSource::Default
    } else {
        PriorSource::Partial
    };
    let defaults_used = prior_source != PriorSource::User;
    let range_text = |k: usize, only_defaults: bool| -> String {
        prior_ranges
            .iter()
            .filter(|r| r.region == priors[k].name && (!only_defaults || !r.from_user))
            .map(|r| {
                if (r.p95 - r.p5).abs() <= 1e-12 * r.p5.abs().max(1e-300) {
                    format!("{} {}", r.parameter, sig(r.p5))
                } else {
                    format!("{} {}–{}", r.parameter, sig(r.p5), sig(r.p95))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    match prior_source {
        PriorSource::Default => notes.insert(
            0,
            format!(
                "DEFAULT PARAMETERS: Water content was produced, but it is not reliable: no \
                 petrophysical relationship was given, so the conversion used generic default \
                 parameters - {}. These ranges (5–95 % of the draws) are assumptions, not values \
                 measured for this site.",
                used.iter()
                    .map(|&k| format!("{}: {}", priors[k].name, range_text(k, false)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ),
        PriorSource::Partial => notes.insert(
            0,
            format!(
                "PARTLY DEFAULT PARAMETERS: some petrophysical parameters were not given and were \
                 filled with generic defaults - {}. Those ranges (5–95 % of the draws) are \
                 assumptions, not values measured for this site.",
                used.iter()
                    .filter(|&&k| priors[k].source() != PriorSource::User)
                    .map(|&k| format!("{}: {}", priors[k].name, range_text(k, true)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ),
        PriorSource::User => notes.push(format!(
            "Petrophysical parameters as given by the user (5–95 % of the draws): {}.",
            used.iter()
                .map(|&k| format!("{}: {}", priors[k].name, range_text(k, false)))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }

    let (reliability_ratio, reliability) = reliability_of(&water.mean, &water.std);
    match (reliability, reliability_ratio) {
        (Reliability::NotApplicable, _) => notes.push(
            "The reliability ratio does not apply: fewer than two cells, or a uniform mean map."
                .into(),
        ),
        (Reliability::Resolved, Some(r)) => notes.push(format!(
            "Reliability ratio {r:.2} (< 0.25): the water-content pattern is resolved."
        )),
        (Reliability::QualitativeOnly, Some(r)) => notes.push(format!(
            "Reliability ratio {r:.2} (0.25–0.5): the water-content pattern is qualitative only."
        )),
        (_, r) => notes.push(format!(
            "Reliability ratio {:.2} (≥ 0.5): the differences are not distinguishable from the \
             uncertainty; no moisture pattern is established.",
            r.unwrap_or(f64::INFINITY)
        )),
    }
    let n_clipped = clipped_share.iter().filter(|&&s| s > 0.0).count();
    if n_clipped > 0 {
        let worst = clipped_share.iter().copied().fold(0.0, f64::max);
        notes.push(format!(
            "In {n_clipped} of {n_cells} cells some realizations gave S > 1 (up to {:.0} % of \
             them), clipped to 1: those cells conduct more than brine-saturated rock with the \
             assumed parameters would.",
            100.0 * worst
        ));
    }

    Ok(WaterContent {
        n_cells,
        n_realizations: n_real,
        seed: options.seed,
        water_content: water,
        saturation,
        clipped_share,
        relation_by_region,
        prior_ranges,
        prior_source,
        defaults_used,
        reliability_ratio,
        reliability,
        notes,
    })
}

/// Reliability ratio = mean σ over the range (max − min) of the mean map (peer-studio §3.3).
pub fn reliability_of(mean: &[f64], std: &[f64]) -> (Option<f64>, Reliability) {
    if mean.len() < 2 {
        return (None, Reliability::NotApplicable);
    }
    let (lo, hi) = mean
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let range = hi - lo;
    if range.is_nan() || range <= 0.0 {
        return (None, Reliability::NotApplicable);
    }
    let mean_std = std.iter().sum::<f64>() / std.len() as f64;
    let ratio = mean_std / range;
    (Some(ratio), Reliability::of(ratio))
}

#[derive(Clone, Copy)]
struct Stat {
    mean: f64,
    std: f64,
    p10: f64,
    p50: f64,
    p90: f64,
}

struct CellResult {
    theta: Stat,
    sat: Stat,
    clipped_share: f64,
}

fn stats(v: &mut [f64]) -> Stat {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    v.sort_by(f64::total_cmp);
    Stat {
        mean,
        std: var.sqrt(),
        p10: percentile_sorted(v, 10.0),
        p50: percentile_sorted(v, 50.0),
        p90: percentile_sorted(v, 90.0),
    }
}

/// The q-th percentile of sorted data with linear interpolation between closest ranks
/// (numpy's default "linear" method: position (n − 1)·q/100).
pub fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let pos = (n - 1) as f64 * (q / 100.0).clamp(0.0, 1.0);
            let i = pos.floor() as usize;
            let frac = pos - i as f64;
            if i + 1 < n {
                sorted[i] + frac * (sorted[i + 1] - sorted[i])
            } else {
                sorted[n - 1]
            }
        }
    }
}

fn sig(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() >= 0.01 && x.abs() < 1e4 {
        format!("{:.3}", x)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{x:.2e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lognormal_prior(rw_median: f64, rw_sigma: f64) -> PetroPrior {
        let u = Param::user;
        PetroPrior {
            name: "test".into(),
            porosity: u(Distribution::Fixed { value: 0.3 }),
            cementation_m: u(Distribution::Fixed { value: 2.0 }),
            saturation_n: u(Distribution::Fixed { value: 2.0 }),
            tortuosity_a: u(Distribution::Fixed { value: 1.0 }),
            fluid_resistivity_ohm_m: u(Distribution::LogNormal {
                median: rw_median,
                sigma_ln: rw_sigma,
            }),
            surface_conductivity_s_per_m: u(Distribution::Fixed { value: 0.0 }),
        }
    }

    /// geophysics.md §5.7.3: log-normal ρw (σ_ln 0.2) and ρ (σ_ln 0.1), fixed φ, m, n: with
    /// 10⁵ draws the MC median of S is within 0.5 % of the exact log-normal median
    /// S₀ = (a·ρw₀/(φ^m·ρ₀))^(1/n), and the 16–84 % width within 2 % of the exact
    /// 2·sinh(σ_lnS)·S₀ with σ_lnS = √(0.2² + 0.1²)/n (log S is linear in log ρw, log ρ).
    #[test]
    fn monte_carlo_median_matches_the_exact_lognormal() {
        let prior = lognormal_prior(10.0, 0.2);
        let rho = [400.0];
        let sigma = [0.1];
        let input = WaterContentInput {
            resistivity_ohm_m: &rho,
            resistivity_sigma_ln: Some(&sigma),
            region_of_cell: None,
        };
        let opts = MonteCarloOptions {
            n_realizations: 100_000,
            seed: 2024,
        };
        let wc = water_content(&input, &[prior], &opts).unwrap();
        // S0 = (10 / (0.09 · 400))^(1/2) = 0.52705; no draw is clipped at S = 1 by more than
        // a negligible share (S = 1 is 3.9 σ above the median).
        let s0 = (10.0f64 / (0.3f64.powi(2) * 400.0)).sqrt();
        let med = wc.saturation.p50[0];
        eprintln!(
            "MC median of S {med} vs exact {s0}: relative {:e}",
            (med - s0) / s0
        );
        assert!(
            ((med - s0) / s0).abs() < 0.005,
            "median {med} vs exact {s0}"
        );
        let sigma_ln_s = (0.2f64.powi(2) + 0.1f64.powi(2)).sqrt() / 2.0;
        let exact_width = s0 * ((sigma_ln_s).exp() - (-sigma_ln_s).exp());
        // P16/P84 from the water-content distribution: θ = φ·S with φ fixed.
        assert!(wc.clipped_share[0] < 1e-3);
        let wc2 = water_content_percentiles(&input, &opts, 16.0, 84.0);
        let width = (wc2.1 - wc2.0) / 0.3;
        eprintln!(
            "MC 16–84 % width {width} vs exact {exact_width}: relative {:e}",
            (width - exact_width) / exact_width
        );
        assert!(
            ((width - exact_width) / exact_width).abs() < 0.02,
            "16–84 % width {width} vs exact {exact_width}"
        );
        assert_eq!(wc.prior_source, PriorSource::User);
        assert!(!wc.defaults_used);
    }

    /// Helper: the q1/q2 percentiles of θ for one cell, recomputed from the same streams.
    fn water_content_percentiles(
        input: &WaterContentInput<'_>,
        opts: &MonteCarloOptions,
        q1: f64,
        q2: f64,
    ) -> (f64, f64) {
        let prior = lognormal_prior(10.0, 0.2);
        let mut v = Vec::new();
        let mut cell_rng = Xoshiro256StarStar::for_stream(opts.seed, 1u64 << 40);
        for r in 0..opts.n_realizations {
            let mut rng = Xoshiro256StarStar::for_stream(opts.seed, r as u64);
            let [phi, m, n, a, rw, _] = prior.draw(&mut rng);
            let rho = input.resistivity_ohm_m[0]
                * (input.resistivity_sigma_ln.unwrap()[0] * cell_rng.next_normal()).exp();
            let s = super::super::relations::archie_saturation(rho, phi, rw, &Archie { a, m, n });
            v.push(phi * s.min(1.0));
        }
        v.sort_by(f64::total_cmp);
        (percentile_sorted(&v, q1), percentile_sorted(&v, q2))
    }

    #[test]
    fn seeded_runs_are_bit_reproducible_and_defaults_are_loud() {
        let rho: Vec<f64> = (0..40).map(|i| 5.0 * 1.15f64.powi(i)).collect();
        let regions: Vec<usize> = (0..40).map(|i| usize::from(i >= 20)).collect();
        let priors = [
            PetroPrior::default_regolith("regolith"),
            PetroPrior::default_bedrock("bedrock"),
        ];
        let input = WaterContentInput {
            resistivity_ohm_m: &rho,
            resistivity_sigma_ln: None,
            region_of_cell: Some(&regions),
        };
        let opts = MonteCarloOptions {
            n_realizations: 10, // raised to 50
            seed: 11,
        };
        let a = water_content(&input, &priors, &opts).unwrap();
        let b = water_content(&input, &priors, &opts).unwrap();
        assert_eq!(a.n_realizations, 50);
        for (x, y) in a.water_content.mean.iter().zip(&b.water_content.mean) {
            assert_eq!(x.to_bits(), y.to_bits());
        }
        for (x, y) in a.water_content.p90.iter().zip(&b.water_content.p90) {
            assert_eq!(x.to_bits(), y.to_bits());
        }
        assert_eq!(a.prior_source, PriorSource::Default);
        assert!(a.defaults_used);
        assert!(
            a.notes[0].starts_with("DEFAULT PARAMETERS"),
            "{}",
            a.notes[0]
        );
        assert!(a.notes[0].contains("regolith") && a.notes[0].contains("bedrock"));
        assert!(
            a.notes
                .iter()
                .any(|n| n.contains("raised to the minimum of 50"))
        );
        // Water content falls as resistivity rises (same region, same draws).
        assert!(a.water_content.mean[0] > a.water_content.mean[19]);
        // A different seed gives different numbers.
        let c = water_content(
            &input,
            &priors,
            &MonteCarloOptions {
                n_realizations: 50,
                seed: 12,
            },
        )
        .unwrap();
        assert_ne!(
            a.water_content.mean[5].to_bits(),
            c.water_content.mean[5].to_bits()
        );
        assert_eq!(a.relation_by_region, vec!["waxman_smits", "archie"]);
    }

    #[test]
    fn prior_ranges_are_the_draws_5_to_95_percent() {
        let mut prior = lognormal_prior(10.0, 0.2);
        prior.porosity = Param::default_value(Distribution::Uniform {
            low: 0.2,
            high: 0.4,
        });
        let rho = [100.0, 200.0];
        let input = WaterContentInput {
            resistivity_ohm_m: &rho,
            resistivity_sigma_ln: None,
            region_of_cell: None,
        };
        let wc = water_content(
            &input,
            &[prior],
            &MonteCarloOptions {
                n_realizations: 20_000,
                seed: 3,
            },
        )
        .unwrap();
        let phi = wc
            .prior_ranges
            .iter()
            .find(|r| r.parameter.starts_with("porosity"))
            .unwrap();
        // Uniform(0.2, 0.4): exact P5 = 0.21, P95 = 0.39; sampling error ~ 1e-3.
        assert!(
            (phi.p5 - 0.21).abs() < 3e-3 && (phi.p95 - 0.39).abs() < 3e-3,
            "{phi:?}"
        );
        assert!(!phi.from_user);
        let rw = wc
            .prior_ranges
            .iter()
            .find(|r| r.parameter.starts_with("pore-water"))
            .unwrap();
        // Log-normal median 10, σ 0.2: P5/P95 = 10·exp(∓1.6449·0.2) = 7.196 / 13.896.
        assert!(
            (rw.p5 - 7.196).abs() < 0.08 && (rw.p95 - 13.896).abs() < 0.15,
            "{rw:?}"
        );
        assert_eq!(wc.prior_source, PriorSource::Partial);
        assert!(wc.notes[0].starts_with("PARTLY DEFAULT"), "{}", wc.notes[0]);
        assert!(wc.notes[0].contains("porosity"));
    }

    #[test]
    fn user_parameters_merge_with_defaults_and_unknown_keys_are_refused() {
        let given: UserPetroParams = serde_json::from_str(
            r#"{"porosity": {"kind": "normal", "mean": 0.3, "std": 0.02},
                "fluid_resistivity_ohm_m": {"kind": "fixed", "value": 15.0}}"#,
        )
        .unwrap();
        let p = PetroPrior::from_user("aquifer", &given, &PetroPrior::default_regolith("x"));
        assert_eq!(p.source(), PriorSource::Partial);
        assert!(p.porosity.from_user && !p.cementation_m.from_user);
        assert_eq!(
            p.fluid_resistivity_ohm_m.dist,
            Distribution::Fixed { value: 15.0 }
        );
        let e = serde_json::from_str::<UserPetroParams>(
            r#"{"porosty": {"kind": "fixed", "value": 0.3}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("unknown field `porosty`") && e.contains("porosity"),
            "{e}"
        );
        let opts: MonteCarloOptions = serde_json::from_str(r#"{"seed": 3}"#).unwrap();
        assert_eq!(opts.n_realizations, DEFAULT_REALIZATIONS);
    }

    #[test]
    fn reliability_classes_follow_the_thresholds() {
        assert_eq!(
            reliability_of(&[0.1, 0.3], &[0.01, 0.03]).1,
            Reliability::Resolved
        );
        assert_eq!(
            reliability_of(&[0.1, 0.3], &[0.06, 0.06]).1,
            Reliability::QualitativeOnly
        );
        assert_eq!(
            reliability_of(&[0.1, 0.3], &[0.1, 0.1]).1,
            Reliability::NotDistinguishable
        );
        assert_eq!(reliability_of(&[0.1], &[0.1]).1, Reliability::NotApplicable);
        let (r, _) = reliability_of(&[0.1, 0.3, 0.2], &[0.02, 0.04, 0.03]);
        assert!((r.unwrap() - 0.15).abs() < 1e-15);
    }

    #[test]
    fn bad_input_is_an_error() {
        let prior = PetroPrior::default_regolith("r");
        let opts = MonteCarloOptions::default();
        let bad = [10.0, -1.0];
        let input = WaterContentInput {
            resistivity_ohm_m: &bad,
            resistivity_sigma_ln: None,
            region_of_cell: None,
        };
        let e = water_content(&input, std::slice::from_ref(&prior), &opts).unwrap_err();
        assert!(e.to_string().contains("cell 1"), "{e}");
        let good = [10.0, 20.0];
        let regions = [0usize, 3];
        let input = WaterContentInput {
            resistivity_ohm_m: &good,
            resistivity_sigma_ln: None,
            region_of_cell: Some(&regions),
        };
        let e = water_content(&input, &[prior], &opts).unwrap_err();
        assert!(e.to_string().contains("region 3"), "{e}");
    }

    #[test]
    fn percentiles_follow_numpy_linear() {
        let v = [1.0, 2.0, 3.0, 4.0];
        // numpy.percentile([1,2,3,4], [10, 50, 90]) = [1.3, 2.5, 3.7]
        assert!((percentile_sorted(&v, 10.0) - 1.3).abs() < 1e-15);
        assert!((percentile_sorted(&v, 50.0) - 2.5).abs() < 1e-15);
        assert!((percentile_sorted(&v, 90.0) - 3.7).abs() < 1e-15);
    }
}
