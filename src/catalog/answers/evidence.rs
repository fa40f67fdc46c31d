//! Each method's evidence for a question, read from the run's products with the methods'
//! interpretation functions (`methods::*::interpret`), and what was not used and why.

use serde_json::{Value, json};

use super::answer::Evidence;
use super::settings::AnswerSettings;
use crate::catalog::ert::{ErtModel, ErtSettings};
use crate::catalog::gpr::{GprProcessed, VelocityOrigin};
use crate::catalog::kit::format::num;
use crate::catalog::kit::methods::{ERT, GPR, MT, SEISMIC, TDEM};
use crate::catalog::kit::{held, keys, product_path};
use crate::catalog::mt::{MtInversions, MtSites, SiteData};
use crate::catalog::seismic::SeismicModel;
use crate::methods::depth::{DepthEstimate, DepthProfile};
use crate::methods::ert::interpret as ert_interp;
use crate::methods::gpr::interpret::flat_reflector;
use crate::methods::mt::interpret::{self as mt_interp, SitePlace};
use crate::methods::seismic::interpret as seis_interp;
use crate::methods::sounding_depth::{self, LayeredSounding};
use crate::methods::tdem::interpret as tdem_interp;
use crate::methods::tdem::pipeline::TdemInversion;
use crate::runtime::RunContext;

/// Evidence gathered for one question: the values, each method's profile (for the figure
/// and the tables) and a sentence per method present but not used.
#[derive(Debug, Default)]
pub struct Gathered {
    /// One entry per method that gave a value.
    pub evidence: Vec<Evidence>,
    /// `(method, profile)` for each that gave one along the line.
    pub profiles: Vec<(String, DepthProfile)>,
    /// `(method, why not)` for each method with a result that gave no value.
    pub not_used: Vec<(String, String)>,
}

impl Gathered {
    /// Record an estimate (its profile written as a CSV table beside the run's products).
    fn add(&mut self, ctx: &RunContext, method: &str, product: &str, name: &str, e: DepthEstimate) {
        let file = product_path(ctx, &format!("{name}.csv"))
            .ok()
            .filter(|p| std::fs::write(p, e.profile.to_csv()).is_ok())
            .map(|p| p.display().to_string());
        self.evidence.push(Evidence {
            method: method.into(),
            value: e.depth_m,
            uncertainty: e.uncertainty_m,
            how: format!(
                "{} on {} profiles, x {}–{} m; resolution {} m, spread along the line {} m",
                e.how,
                e.profile.len(),
                num(e.x_range_m.0),
                num(e.x_range_m.1),
                num(e.resolution_m),
                num(e.spread_m)
            ),
            product: product.into(),
            file,
        });
        self.profiles.push((method.into(), e.profile));
    }

    /// A water table from layered soundings ([`sounding_depth::water_table`]), or why not.
    fn layered(
        &mut self,
        ctx: &RunContext,
        method: &str,
        product: &str,
        soundings: &[LayeredSounding],
        max_depth_m: f64,
    ) {
        match sounding_depth::water_table(soundings, method, max_depth_m) {
            Ok(e) => self.add(
                ctx,
                method,
                product,
                &format!("answer_water_table_{}", method.to_ascii_lowercase()),
                e,
            ),
            Err(why) => self.not_used.push((method.into(), why)),
        }
    }

    /// The `details` JSON: each profile's table and what was not used.
    pub fn details(&self) -> Value {
        json!({
            "profiles": self.profiles.iter().map(|(m, p)| json!({"method": m, "x_m": p.x_m, "depth_m": p.depth_m, "z_m": p.z_m})).collect::<Vec<_>>(),
            "not_used": self.not_used.iter().map(|(m, w)| json!({"method": m, "why": w})).collect::<Vec<_>>(),
        })
    }
}

/// The baseline resistivity and coverage of the ERT model, if there is one.
fn ert_baseline(ctx: &RunContext) -> Option<&ErtModel> {
    held::<ErtModel>(ctx, keys::INVERSION_RESULTS)
}

/// The water table from every method that can read it.
pub fn water_table(ctx: &RunContext, s: &AnswerSettings) -> anyhow::Result<Gathered> {
    let mut g = Gathered::default();
    if let Some(m) = held::<SeismicModel>(ctx, keys::SEISMIC_RESULTS) {
        match seis_interp::water_table(&m.inversion, s.water_table_velocity_m_per_s) {
            Some(e) => g.add(
                ctx,
                SEISMIC.prose,
                keys::SEISMIC_RESULTS,
                "answer_water_table_seismic",
                e,
            ),
            None => g.not_used.push((
                SEISMIC.prose.into(),
                format!(
                    "no ray-covered {}–{} m/s contour in the velocity model",
                    s.water_table_velocity_m_per_s.0, s.water_table_velocity_m_per_s.1
                ),
            )),
        }
    }
    if let Some(m) = ert_baseline(ctx) {
        let cov = ErtSettings::read(ctx)?.coverage_threshold;
        let steps = m.steps();
        let spread = spread_m(m);
        match steps.first().and_then(|st| {
            ert_interp::water_table(m.section(), st.rho_ohm_m, m.coverage(), cov, 0.25 * spread)
        }) {
            Some(e) => g.add(
                ctx,
                ERT.prose,
                keys::INVERSION_RESULTS,
                "answer_water_table_ert",
                e,
            ),
            None => g.not_used.push((
                ERT.prose.into(),
                "no downward resistivity decrease of 20 % or more in the covered model".into(),
            )),
        }
    }
    if let Some(p) = held::<GprProcessed>(ctx, keys::GPR_RESULTS) {
        gpr_reflector(&mut g, p, s);
    }
    let max_depth = s.sounding_water_table_max_depth_m;
    if let Some(inv) = held::<TdemInversion>(ctx, keys::TDEM_RESULTS) {
        let soundings = tdem_interp::layered_soundings(inv);
        g.layered(ctx, TDEM.prose, keys::TDEM_RESULTS, &soundings, max_depth);
    }
    if let Some(inv) = held::<MtInversions>(ctx, keys::MT_RESULTS) {
        let soundings = mt_soundings(ctx, inv);
        g.layered(ctx, MT.prose, keys::MT_RESULTS, &soundings, max_depth);
    }
    Ok(g)
}

/// The MT sites as layered soundings, placed by the coordinates their files give.
fn mt_soundings(ctx: &RunContext, inv: &MtInversions) -> Vec<LayeredSounding> {
    let places: Vec<(String, SitePlace)> = held::<MtSites>(ctx, keys::MT_DATA)
        .map(|d| {
            d.sites
                .iter()
                .map(|site| {
                    let place = match &site.data {
                        SiteData::Transfer(tf) => SitePlace {
                            lat_lon_deg: tf.latitude_deg.zip(tf.longitude_deg),
                            elevation_m: tf.elevation_m,
                        },
                        SiteData::Table(_) => SitePlace::default(),
                    };
                    (site.site.clone(), place)
                })
                .collect()
        })
        .unwrap_or_default();
    let place_of = |name: &str| {
        places
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| *p)
            .unwrap_or_default()
    };
    let origin = inv.sites.iter().find_map(|s| place_of(&s.site).lat_lon_deg);
    inv.sites
        .iter()
        .enumerate()
        .filter_map(|(i, s)| mt_interp::layered_sounding(s, place_of(&s.site), origin, i))
        .collect()
}

/// The electrode spread of the ERT line, m.
fn spread_m(m: &ErtModel) -> f64 {
    let e = &m.section().electrodes_xz;
    match (e.first(), e.last()) {
        (Some(a), Some(b)) => (b[0] - a[0]).abs(),
        _ => 0.0,
    }
}

/// The share of traces a reflector must be carried by to count as continuous.
pub const MIN_CONTINUITY: f64 = 0.6;

/// The relative velocity error `σv/v` for a velocity of this origin and the words that say
/// where it came from (settings docs give the defaults' sources).
fn velocity_error(origin: VelocityOrigin, s: &AnswerSettings) -> (f64, &'static str, String) {
    let given = |what: &'static str| {
        (
            s.gpr_velocity_relative_sigma,
            what,
            format!(
                "{:.0} % (answers_params.gpr_velocity_relative_sigma: the project gives the velocity without its error)",
                100.0 * s.gpr_velocity_relative_sigma
            ),
        )
    };
    match origin {
        VelocityOrigin::UserVelocity => given("the velocity the project gives"),
        VelocityOrigin::UserPermittivity => given("the permittivity the project gives"),
        VelocityOrigin::HeaderPermittivity => (
            s.gpr_header_velocity_relative_sigma,
            "the file header's permittivity (an instrument setting, not measured)",
            format!(
                "{:.0} % (answers_params.gpr_header_velocity_relative_sigma: a header εr is a guess)",
                100.0 * s.gpr_header_velocity_relative_sigma
            ),
        ),
        VelocityOrigin::Semblance => (
            s.gpr_velocity_relative_sigma,
            "a semblance analysis of the gather",
            format!(
                "{:.0} % (answers_params.gpr_velocity_relative_sigma: the semblance pick states no error)",
                100.0 * s.gpr_velocity_relative_sigma
            ),
        ),
        VelocityOrigin::None => (0.0, "no velocity", "none".into()),
    }
}

/// The GPR line's strongest flat reflector as water-table evidence; its uncertainty combines
/// the reflection's half-width with the velocity's depth error `d · σv/v`
/// (`methods::gpr::interpret`).
fn gpr_reflector(g: &mut Gathered, p: &GprProcessed, s: &AnswerSettings) {
    let (rel, origin, rel_words) = velocity_error(p.velocity_origin, s);
    let Some(r) = flat_reflector(&p.processed, s.gpr_min_depth_m, rel) else {
        g.not_used.push((
            GPR.prose.into(),
            p.processed
                .why_two_way_time
                .clone()
                .unwrap_or_else(|| "no reflector below the direct wave".into()),
        ));
        return;
    };
    let window_end_m = p.processed.vertical_axis().last().copied().unwrap_or(0.0);
    if r.cut_by_window {
        g.not_used.push((
            GPR.prose.into(),
            format!(
                "the strongest flat event ({} m) is cut by the end of the {} m window (its lower flank is not recorded, and gain makes flat late events there): the water table may lie below what the line reaches",
                num(r.depth_m),
                num(window_end_m)
            ),
        ));
        return;
    }
    if r.continuity < MIN_CONTINUITY {
        g.not_used.push((
            GPR.prose.into(),
            format!(
                "the strongest flat event ({} m) is carried by only {:.0} % of the traces (at least {:.0} % make a continuous reflector); the water table may lie below the {} m the line reaches",
                num(r.depth_m),
                100.0 * r.continuity,
                100.0 * MIN_CONTINUITY,
                num(window_end_m)
            ),
        ));
        return;
    }
    let mut profile = DepthProfile::default();
    profile.push(r.x_range_m.0, r.depth_m, f64::NAN);
    profile.push(r.x_range_m.1, r.depth_m, f64::NAN);
    g.evidence.push(Evidence {
        method: GPR.prose.into(),
        value: r.depth_m,
        uncertainty: r.uncertainty_m,
        how: format!(
            "the strongest flat reflector of the stacked line (carried by {:.0} % of the traces, x {}–{} m), converted to depth with {origin} ({}); uncertainty √(h² + (d·σv/v)²) of the reflection's half-width h = {} m and the velocity's depth error {} m, σv/v = {rel_words}",
            100.0 * r.continuity,
            num(r.x_range_m.0),
            num(r.x_range_m.1),
            p.velocity_sentence,
            num(r.half_width_m),
            num(r.velocity_error_m)
        ),
        product: keys::GPR_RESULTS.into(),
        file: None,
    });
    g.profiles.push((GPR.prose.into(), profile));
}

/// The bedrock from the seismic model.
pub fn bedrock(ctx: &RunContext, s: &AnswerSettings) -> Gathered {
    let mut g = Gathered::default();
    if let Some(m) = held::<SeismicModel>(ctx, keys::SEISMIC_RESULTS) {
        match seis_interp::bedrock(&m.inversion, s.bedrock_velocity_m_per_s) {
            Some(e) => g.add(
                ctx,
                SEISMIC.prose,
                keys::SEISMIC_RESULTS,
                "answer_bedrock_seismic",
                e,
            ),
            None => g.not_used.push((
                SEISMIC.prose.into(),
                format!(
                    "no ray-covered {:.0} m/s contour in the velocity model",
                    s.bedrock_velocity_m_per_s
                ),
            )),
        }
    }
    if ert_baseline(ctx).is_some() {
        g.not_used.push((
            ERT.prose.into(),
            "reading bedrock from the ERT gradient is not implemented in this version".into(),
        ));
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A velocity given without its error is taken to the settings' stated default (10 %,
    /// 25 % for a header permittivity) and the words say which setting it was; with no
    /// velocity there is no depth, so no error either. 4.1 m at 10 % is 0.41 m of depth
    /// error (depth = v·t/2 scales with v).
    #[test]
    fn a_velocity_without_its_error_gets_the_stated_default() {
        let s = AnswerSettings::default();
        let (rel, _, words) = velocity_error(VelocityOrigin::UserVelocity, &s);
        assert_eq!(rel, 0.10);
        assert!(words.contains("gpr_velocity_relative_sigma"), "{words}");
        let (rel, origin, words) = velocity_error(VelocityOrigin::HeaderPermittivity, &s);
        assert_eq!(rel, 0.25);
        assert!(origin.contains("not measured") && words.contains("header"));
        assert_eq!(velocity_error(VelocityOrigin::None, &s).0, 0.0);
        let custom = AnswerSettings {
            gpr_velocity_relative_sigma: 0.05,
            ..s
        };
        assert_eq!(
            velocity_error(VelocityOrigin::UserPermittivity, &custom).0,
            0.05
        );
        assert!((4.1 * velocity_error(VelocityOrigin::UserVelocity, &s).0 - 0.41).abs() < 1e-12);
    }
}
