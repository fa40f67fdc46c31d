//! The gravity / magnetic settings of a project (`gravmag_params`, `gravmag_kind`,
//! `magnetic_field`), read into typed structs. A panel's edits are layered over these, never
//! instead of them. Every key is a number or a switch (`runtime::recovery` may change them,
//! as declared by the tools).

#[allow(unused_imports)]
use super::*;

/// The input role of the station table.
pub const DATA_ROLE: &str = keys::GRAVMAG_FILE;

/// The processing and inversion settings ([`GravMagParams`]).
pub const PARAMS_KEY: &str = keys::GRAVMAG_PARAMS;

/// The declared field kind (text, see [`parse_kind`]).
pub const KIND_KEY: &str = keys::GRAVMAG_KIND;

/// The inducing field for magnetics ([`MagneticFieldParams`]).
pub const FIELD_KEY: &str = keys::MAGNETIC_FIELD;

/// The settings of `invert_gravmag` (`gravmag_params`). Every field has a default; an
/// unknown key is an error naming the valid ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GravMagParams {
    /// Degree of the regional polynomial trend removed before the inversion (0–3).
    pub trend_degree: usize,
    /// At most this many block-averaged stations are inverted.
    pub max_stations: usize,
    /// Height of the stations above the flat mesh top when the table has no z, m.
    pub station_height_m: f64,
    /// Node spacing of the maps, m; default: from the mean station spacing.
    pub grid_spacing_m: Option<f64>,
    /// Horizontal core cell of the mesh, m; default: from the station extent and spacing.
    pub core_cell_m: Option<f64>,
    /// Depth of the mesh core below its top, m; default: half the station extent.
    pub core_depth_m: Option<f64>,
    /// Padding cells on each side and below the core.
    pub padding_cells: usize,
    /// Relative part of the data standard deviation (0.03 = 3 %).
    pub relative_error: f64,
    /// Absolute floor of the standard deviation of gravity data, mGal; default 1 % of the
    /// largest |residual|.
    pub error_floor_mgal: Option<f64>,
    /// Absolute floor of the standard deviation of magnetic data, nT; default 1 % of the
    /// largest |residual|.
    pub error_floor_nt: Option<f64>,
    /// The χ² the β search aims for.
    pub target_chi2: f64,
    /// Accepted distance of χ² from the target.
    pub chi2_tolerance: f64,
    /// At most this many exact solves in the β search.
    pub max_solves: usize,
    /// Smoothness length scale, m; default four times the smallest horizontal cell.
    pub length_scale_m: Option<f64>,
    /// Exponent of the depth weighting; default 1 for gravity, 2 for magnetics.
    pub depth_weighting_exponent: Option<f64>,
    /// Use sensitivity-based weighting instead of depth weighting.
    pub sensitivity_weighting: bool,
    /// Bounds of the density contrast, g/cm³; default ±1.
    pub density_bounds_g_per_cc: Option<[f64; 2]>,
    /// Bounds of the susceptibility, SI; default ±0.5.
    pub susceptibility_bounds_si: Option<[f64; 2]>,
    /// A fixed β instead of the search.
    pub beta: Option<f64>,
}

impl Default for GravMagParams {
    fn default() -> Self {
        let d = TableInversionOptions::default();
        GravMagParams {
            trend_degree: d.trend_degree,
            max_stations: d.max_stations,
            station_height_m: d.station_height_m,
            grid_spacing_m: None,
            core_cell_m: None,
            core_depth_m: None,
            padding_cells: d.mesh.padding_cells,
            relative_error: d.inversion.relative_error,
            error_floor_mgal: None,
            error_floor_nt: None,
            target_chi2: d.inversion.target_chi2,
            chi2_tolerance: d.inversion.chi2_tolerance,
            max_solves: d.inversion.max_solves,
            length_scale_m: None,
            depth_weighting_exponent: None,
            sensitivity_weighting: false,
            density_bounds_g_per_cc: None,
            susceptibility_bounds_si: None,
            beta: None,
        }
    }
}

impl GravMagParams {
    /// Refuse settings the chain cannot use, saying which and why.
    pub fn validate(&self) -> Result<(), String> {
        let positive = |name: &str, v: Option<f64>| match v {
            Some(x) if !(x.is_finite() && x > 0.0) => Err(format!(
                "{PARAMS_KEY}.{name} must be a positive number; found {x}"
            )),
            _ => Ok(()),
        };
        if self.trend_degree > 3 {
            return Err(format!(
                "{PARAMS_KEY}.trend_degree must be 0, 1, 2 or 3; found {}",
                self.trend_degree
            ));
        }
        if self.max_stations < 3 {
            return Err(format!(
                "{PARAMS_KEY}.max_stations must be at least 3; found {}",
                self.max_stations
            ));
        }
        if !(self.station_height_m.is_finite() && self.station_height_m >= 0.0) {
            return Err(format!(
                "{PARAMS_KEY}.station_height_m must be 0 or more; found {}",
                self.station_height_m
            ));
        }
        positive("grid_spacing_m", self.grid_spacing_m)?;
        positive("core_cell_m", self.core_cell_m)?;
        positive("core_depth_m", self.core_depth_m)?;
        positive("error_floor_mgal", self.error_floor_mgal)?;
        positive("error_floor_nt", self.error_floor_nt)?;
        positive("length_scale_m", self.length_scale_m)?;
        positive("depth_weighting_exponent", self.depth_weighting_exponent)?;
        positive("beta", self.beta)?;
        if !(self.relative_error.is_finite() && (0.0..1.0).contains(&self.relative_error)) {
            return Err(format!(
                "{PARAMS_KEY}.relative_error is a fraction in [0, 1) (0.03 = 3 %); found {}",
                self.relative_error
            ));
        }
        if !(self.target_chi2.is_finite() && self.target_chi2 > 0.0) {
            return Err(format!(
                "{PARAMS_KEY}.target_chi2 must be positive; found {}",
                self.target_chi2
            ));
        }
        if !(self.chi2_tolerance.is_finite() && self.chi2_tolerance > 0.0) {
            return Err(format!(
                "{PARAMS_KEY}.chi2_tolerance must be positive; found {}",
                self.chi2_tolerance
            ));
        }
        if !(1..=20).contains(&self.max_solves) {
            return Err(format!(
                "{PARAMS_KEY}.max_solves must be 1 to 20; found {}",
                self.max_solves
            ));
        }
        if self.padding_cells > 12 {
            return Err(format!(
                "{PARAMS_KEY}.padding_cells must be 0 to 12; found {}",
                self.padding_cells
            ));
        }
        for (name, b) in [
            ("density_bounds_g_per_cc", self.density_bounds_g_per_cc),
            ("susceptibility_bounds_si", self.susceptibility_bounds_si),
        ] {
            if let Some([lo, hi]) = b
                && !(lo.is_finite() && hi.is_finite() && lo < hi)
            {
                return Err(format!(
                    "{PARAMS_KEY}.{name} must be [lower, upper] with lower < upper; found [{lo}, {hi}]"
                ));
            }
        }
        Ok(())
    }

    /// The method options for a table of `family`, with the inducing field `field`.
    pub fn options(&self, family: Family, field: Option<InducingField>) -> TableInversionOptions {
        let d = TableInversionOptions::default();
        let weighting = if self.sensitivity_weighting {
            Some(Weighting::Sensitivity)
        } else {
            self.depth_weighting_exponent.map(|e| Weighting::Depth {
                exponent: e,
                z0_m: None,
            })
        };
        let (error_floor, bounds) = match family {
            Family::Gravity => (
                self.error_floor_mgal,
                // g/cm³ → kg/m³.
                self.density_bounds_g_per_cc
                    .map(|[a, b]| (a * 1000.0, b * 1000.0)),
            ),
            Family::Magnetic => (
                self.error_floor_nt,
                self.susceptibility_bounds_si.map(|[a, b]| (a, b)),
            ),
        };
        TableInversionOptions {
            trend_degree: self.trend_degree,
            max_stations: self.max_stations,
            station_height_m: self.station_height_m,
            grid: GridOptions {
                spacing_m: self.grid_spacing_m,
                ..d.grid
            },
            mesh: MeshOptions {
                core_cell_m: self.core_cell_m,
                core_depth_m: self.core_depth_m,
                padding_cells: self.padding_cells,
                ..d.mesh
            },
            inversion: InversionOptions {
                relative_error: self.relative_error,
                error_floor,
                target_chi2: self.target_chi2,
                chi2_tolerance: self.chi2_tolerance,
                max_solves: self.max_solves,
                length_scale_m: self.length_scale_m,
                weighting,
                bounds,
                beta: self.beta,
                ..d.inversion
            },
            inducing_field: field,
        }
    }
}

/// The inducing geomagnetic field (`magnetic_field`): all three values or none.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MagneticFieldParams {
    /// Total intensity |F|, nT.
    pub intensity_nt: Option<f64>,
    /// Inclination, degrees below the horizontal (−90 to 90).
    pub inclination_deg: Option<f64>,
    /// Declination, degrees east of north.
    pub declination_deg: Option<f64>,
}

impl MagneticFieldParams {
    /// The field, `None` when nothing was given; an error for a partial or impossible field.
    pub fn field(&self) -> Result<Option<InducingField>, String> {
        match (
            self.intensity_nt,
            self.inclination_deg,
            self.declination_deg,
        ) {
            (None, None, None) => Ok(None),
            (Some(f), Some(i), Some(d)) => {
                if !(f.is_finite() && f > 0.0) {
                    return Err(format!(
                        "{FIELD_KEY}.intensity_nt must be positive (about 25 000 to 65 000 nT on Earth); found {f}"
                    ));
                }
                if !(i.is_finite() && (-90.0..=90.0).contains(&i)) {
                    return Err(format!(
                        "{FIELD_KEY}.inclination_deg must be between −90 and 90; found {i}"
                    ));
                }
                if !d.is_finite() {
                    return Err(format!("{FIELD_KEY}.declination_deg must be a number"));
                }
                Ok(Some(InducingField {
                    intensity_nt: f,
                    inclination_deg: i,
                    declination_deg: d,
                }))
            }
            _ => Err(format!(
                "{FIELD_KEY} needs all of intensity_nt, inclination_deg and declination_deg (the IGRF values at the survey), not some of them"
            )),
        }
    }
}

/// The kinds `gravmag_kind` accepts, with the words that name them.
pub(super) const KIND_WORDS: &[(&str, Quantity)] = &[
    ("gravity", Quantity::GravityUnspecified),
    ("bouguer", Quantity::BouguerAnomaly),
    ("bouguer_anomaly", Quantity::BouguerAnomaly),
    ("free_air", Quantity::FreeAirAnomaly),
    ("free_air_anomaly", Quantity::FreeAirAnomaly),
    ("gravity_disturbance", Quantity::GravityDisturbance),
    ("observed_gravity", Quantity::ObservedGravity),
    ("magnetic", Quantity::MagneticUnspecified),
    ("magnetics", Quantity::MagneticUnspecified),
    ("tmi", Quantity::TotalFieldAnomaly),
    ("total_field_anomaly", Quantity::TotalFieldAnomaly),
];

/// The kind named by `text` (case and `-`/space insensitive): `gravity`, `bouguer`,
/// `free_air`, `gravity_disturbance`, `observed_gravity`, `magnetic`, `tmi`,
/// `total_field_anomaly`; an error lists them.
pub fn parse_kind(text: &str) -> Result<FieldKind, String> {
    let key = text.trim().to_lowercase().replace(['-', ' '], "_");
    KIND_WORDS
        .iter()
        .find(|(w, _)| *w == key)
        .map(|(_, q)| FieldKind::of(*q))
        .ok_or_else(|| {
            format!(
                "{KIND_KEY} \"{text}\" is not a kind this studio knows; use one of {}",
                KIND_WORDS
                    .iter()
                    .map(|(w, _)| *w)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// The `gravmag_kind` word for a quantity (the option id of the kind question).
pub fn kind_word(q: Quantity) -> &'static str {
    match q {
        Quantity::BouguerAnomaly => "bouguer",
        Quantity::FreeAirAnomaly => "free_air",
        Quantity::GravityDisturbance => "gravity_disturbance",
        Quantity::ObservedGravity => "observed_gravity",
        Quantity::GravityUnspecified => "gravity",
        Quantity::TotalFieldAnomaly => "tmi",
        Quantity::MagneticUnspecified => "magnetic",
    }
}

/// The kind declared in the settings, if any.
/// The kind the project setting `gravmag_kind` declares (`None`: not set); an error for a
/// value that is not a kind ([`parse_kind`]). The panel uses it too.
pub fn declared_kind(ctx: &RunContext) -> anyhow::Result<Option<FieldKind>> {
    match ctx.config.get(KIND_KEY) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => parse_kind(s).map(Some).map_err(|e| anyhow!(e)),
        Some(other) => bail!(
            "the setting {KIND_KEY} must be text such as \"gravity\" or \"tmi\"; found {other}"
        ),
    }
}

/// The inversion's settings of a run or a project (`gravmag_params`), an unknown key named.
pub fn params(ctx: &RunContext) -> anyhow::Result<GravMagParams> {
    Ok(ctx.params(PARAMS_KEY)?)
}

/// The inducing field of a run or a project (`magnetic_field`), an unknown key named.
pub fn field_params(ctx: &RunContext) -> anyhow::Result<MagneticFieldParams> {
    Ok(ctx.params(FIELD_KEY)?)
}
