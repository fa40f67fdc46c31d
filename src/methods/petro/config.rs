//! The `petrophysical_params` setting as people write it, turned into a [`PetroPrior`] whose
//! provenance (user / partial / default) is exact.
//!
//! Accepted form (every key optional, unknown keys refused with the valid ones named):
//!
//! ```json
//! { "relationship": "archie",
//!   "porosity": [0.35, 0.03],               // [mean, std] of a normal distribution
//!   "cementation_exponent_m": [1.8, 0.1],   // also "cementation_m"
//!   "saturation_exponent_n": [2.0, 0.1],    // also "saturation_n"
//!   "tortuosity_a": 1.0,                    // a plain number is a fixed value
//!   "fluid_resistivity_ohm_m": {"kind": "log_normal", "median": 20, "sigma_ln": 0.1},
//!   "surface_conductivity_s_per_m": 0.0,
//!   "source": "laboratory measurements on core" }
//! ```
//!
//! Also accepted: `m`, `n`, `a` / `tortuosity`, `rho_w` / `fluid_resistivity`, `[value]` for a
//! fixed value, `n_realizations` and `seed`. ERT, TDEM and MT all read the setting through
//! [`PetroConfig::from_json`], so one project setting means the same for every method.
//!
//! Naming the relationship is itself information: `"archie"` means σ_s = 0 (Archie 1942 has
//! no surface conduction) and, unless `a` is given, a = 1 (the law as usually written,
//! F = φ^−m); both are then counted as given by the user, and a note says they were implied.
//! `"waxman_smits"` (Waxman & Smits 1968) takes the surface conduction from the user or the
//! generic default.

use serde::{Deserialize, Serialize};

use super::monte_carlo::{
    DEFAULT_REALIZATIONS, DEFAULT_SEED, Distribution, MonteCarloOptions, PetroPrior, PriorSource,
    UserPetroParams,
};

/// The parameter keys of the setting, with their aliases.
const PARAM_KEYS: &[&str] = &[
    "porosity",
    "cementation_exponent_m",
    "cementation_m",
    "m",
    "saturation_exponent_n",
    "saturation_n",
    "n",
    "tortuosity_a",
    "tortuosity",
    "a",
    "fluid_resistivity_ohm_m",
    "rho_w",
    "fluid_resistivity",
    "surface_conductivity_s_per_m",
];

/// The setting's other keys.
const OTHER_KEYS: &[&str] = &["relationship", "source", "n_realizations", "seed"];

/// One parameter as written: a fixed number, `[mean, std]` (normal) or a distribution object.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamSpec {
    /// A fixed value.
    Value(f64),
    /// Mean and standard deviation of a normal distribution.
    MeanStd([f64; 2]),
    /// `[value]`: a fixed value.
    Single([f64; 1]),
    /// A distribution object (`{"kind": "normal" | "log_normal" | "uniform" | "fixed", …}`).
    Dist(Distribution),
}

impl ParamSpec {
    /// The distribution it stands for.
    pub fn distribution(self) -> Distribution {
        match self {
            ParamSpec::Value(value) => Distribution::Fixed { value },
            ParamSpec::MeanStd([mean, std]) => Distribution::Normal { mean, std },
            ParamSpec::Single([value]) => Distribution::Fixed { value },
            ParamSpec::Dist(d) => d,
        }
    }
}

/// The petrophysical relationship named in the setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relationship {
    /// Archie (1942): no surface conduction.
    #[serde(alias = "Archie", alias = "ARCHIE")]
    Archie,
    /// Waxman & Smits (1968): with surface conduction B·Qv.
    #[serde(
        alias = "waxman-smits",
        alias = "Waxman-Smits",
        alias = "Waxman_Smits",
        alias = "waxman smits",
        alias = "Waxman Smits"
    )]
    WaxmanSmits,
}

/// The `petrophysical_params` setting (module docs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PetroConfig {
    /// The relationship, when named.
    pub relationship: Option<Relationship>,
    /// Porosity φ (fraction).
    pub porosity: Option<ParamSpec>,
    /// Cementation exponent m.
    #[serde(alias = "cementation_m", alias = "m")]
    pub cementation_exponent_m: Option<ParamSpec>,
    /// Saturation exponent n.
    #[serde(alias = "saturation_n", alias = "n")]
    pub saturation_exponent_n: Option<ParamSpec>,
    /// Tortuosity a.
    #[serde(alias = "tortuosity", alias = "a")]
    pub tortuosity_a: Option<ParamSpec>,
    /// Pore-water resistivity ρw, Ω·m.
    #[serde(alias = "rho_w", alias = "fluid_resistivity")]
    pub fluid_resistivity_ohm_m: Option<ParamSpec>,
    /// Surface conduction B·Qv, S/m.
    pub surface_conductivity_s_per_m: Option<ParamSpec>,
    /// Where the numbers come from, in the user's words (printed with the prior).
    pub source: Option<String>,
    /// Monte Carlo realizations (default [`DEFAULT_REALIZATIONS`]).
    pub n_realizations: Option<usize>,
    /// Seed of the generator (default [`DEFAULT_SEED`]).
    pub seed: Option<u64>,
}

impl PetroConfig {
    /// Whether nothing was given (every conversion then runs on generic defaults).
    pub fn is_empty(&self) -> bool {
        self.relationship.is_none()
            && self.porosity.is_none()
            && self.cementation_exponent_m.is_none()
            && self.saturation_exponent_n.is_none()
            && self.tortuosity_a.is_none()
            && self.fluid_resistivity_ohm_m.is_none()
            && self.surface_conductivity_s_per_m.is_none()
    }

    /// The setting as found in a configuration (`None` or null: nothing given). Every method
    /// reads `petrophysical_params` through this one parser, so a project's setting means the
    /// same for ERT, TDEM and MT. An unknown key is refused with the valid keys named, and a
    /// value that is not a parameter is refused with the key and the value found.
    pub fn from_json(value: Option<&serde_json::Value>) -> Result<Self, String> {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return Ok(Self::default());
        };
        let obj = value
            .as_object()
            .ok_or_else(|| format!("petrophysical_params: expected an object, found {value}"))?;
        for (k, v) in obj {
            if !PARAM_KEYS.contains(&k.as_str()) && !OTHER_KEYS.contains(&k.as_str()) {
                return Err(format!(
                    "petrophysical_params: unknown key '{k}'; valid keys: {}, {}",
                    PARAM_KEYS.join(", "),
                    OTHER_KEYS.join(", ")
                ));
            }
            if PARAM_KEYS.contains(&k.as_str())
                && serde_json::from_value::<ParamSpec>(v.clone()).is_err()
            {
                return Err(format!(
                    "petrophysical_params.{k}: expected a number, [mean, std] or a distribution \
                     such as {{\"kind\": \"normal\", \"mean\": .., \"std\": ..}}, found {v}"
                ));
            }
            if k == "relationship" && serde_json::from_value::<Relationship>(v.clone()).is_err() {
                return Err(format!(
                    "petrophysical_params.relationship = {v}: the implemented ones are archie, waxman_smits"
                ));
            }
        }
        serde_json::from_value(value.clone()).map_err(|e| format!("petrophysical_params: {e}"))
    }

    /// What the user gave, plus what the named relationship implies, with a note on every
    /// implied value: `"archie"` fixes σ_s = 0 and, without a, a = 1 (module docs).
    pub fn user_params(&self) -> (UserPetroParams, Vec<String>) {
        let d = |p: Option<ParamSpec>| p.map(ParamSpec::distribution);
        let mut given = UserPetroParams {
            porosity: d(self.porosity),
            cementation_m: d(self.cementation_exponent_m),
            saturation_n: d(self.saturation_exponent_n),
            tortuosity_a: d(self.tortuosity_a),
            fluid_resistivity_ohm_m: d(self.fluid_resistivity_ohm_m),
            surface_conductivity_s_per_m: d(self.surface_conductivity_s_per_m),
        };
        let mut notes = Vec::new();
        if self.relationship == Some(Relationship::Archie) {
            if given.surface_conductivity_s_per_m.is_none() {
                given.surface_conductivity_s_per_m = Some(Distribution::Fixed { value: 0.0 });
                notes.push(
                    "Surface conduction set to 0 S/m: implied by the Archie relationship given."
                        .into(),
                );
            }
            if given.tortuosity_a.is_none() {
                given.tortuosity_a = Some(Distribution::Fixed { value: 1.0 });
                notes.push(
                    "Tortuosity a = 1: Archie's law as usually written (F = φ^-m), since the \
                     Archie relationship was given without a."
                        .into(),
                );
            }
        }
        (given, notes)
    }

    /// The prior of region `name`: what the user gave (and what the named relationship
    /// implies, [`Self::user_params`]), the rest from `defaults`; with notes on every implied
    /// value.
    pub fn prior(&self, name: &str, defaults: &PetroPrior) -> (PetroPrior, Vec<String>) {
        let (given, notes) = self.user_params();
        (PetroPrior::from_user(name, &given, defaults), notes)
    }

    /// Realizations and seed: this setting's, else `n_realizations` from elsewhere in the
    /// configuration, else the defaults.
    pub fn monte_carlo(&self, n_realizations: Option<usize>) -> MonteCarloOptions {
        MonteCarloOptions {
            n_realizations: self
                .n_realizations
                .or(n_realizations)
                .unwrap_or(DEFAULT_REALIZATIONS),
            seed: self.seed.unwrap_or(DEFAULT_SEED),
        }
    }

    /// One sentence on where the prior came from, for summaries and reports.
    pub fn provenance(&self, prior: &PetroPrior) -> String {
        let source = self
            .source
            .as_deref()
            .map(|s| format!(" (source given: {s})"))
            .unwrap_or_default();
        match prior.source() {
            PriorSource::User => format!("every parameter given by the user{source}"),
            PriorSource::Partial => format!(
                "partly given by the user{source}; the parameters not given are generic defaults"
            ),
            PriorSource::Default => "GENERIC DEFAULTS: no petrophysical relationship was given \
                 for this site, so the water content rests on assumed parameters"
                .to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example project's setting (src/example/mod.rs): Archie with φ, m, n and ρw as
    /// [mean, std] pairs reads into a prior that is entirely the user's (a and σ_s implied).
    #[test]
    fn the_example_setting_is_a_user_prior() {
        let v = serde_json::json!({
            "relationship": "archie",
            "porosity": [0.35, 0.03],
            "cementation_exponent_m": [1.8, 0.1],
            "saturation_exponent_n": [2.0, 0.1],
            "fluid_resistivity_ohm_m": [20.0, 2.0],
            "source": "laboratory measurements on core"
        });
        let c: PetroConfig = serde_json::from_value(v).unwrap();
        let (p, notes) = c.prior("sand", &PetroPrior::default_regolith("sand"));
        assert_eq!(p.source(), PriorSource::User);
        assert_eq!(
            p.porosity.dist,
            Distribution::Normal {
                mean: 0.35,
                std: 0.03
            }
        );
        assert_eq!(
            p.surface_conductivity_s_per_m.dist,
            Distribution::Fixed { value: 0.0 }
        );
        assert_eq!(notes.len(), 2);
        assert!(c.provenance(&p).contains("laboratory measurements on core"));
    }

    /// Nothing given: the default prior, said loudly; one parameter given: partial. Aliases,
    /// plain numbers and distribution objects are accepted; an unknown key names the valid
    /// ones.
    #[test]
    fn partial_default_and_refused_settings() {
        let c = PetroConfig::default();
        assert!(c.is_empty());
        let (p, _) = c.prior("x", &PetroPrior::default_regolith("x"));
        assert_eq!(p.source(), PriorSource::Default);
        assert!(c.provenance(&p).starts_with("GENERIC DEFAULTS"));
        let c: PetroConfig = serde_json::from_value(serde_json::json!({
            "cementation_m": 1.5,
            "fluid_resistivity_ohm_m": {"kind": "log_normal", "median": 30.0, "sigma_ln": 0.2}
        }))
        .unwrap();
        let (p, notes) = c.prior("x", &PetroPrior::default_regolith("x"));
        assert_eq!(p.source(), PriorSource::Partial);
        assert!(notes.is_empty());
        assert_eq!(p.cementation_m.dist, Distribution::Fixed { value: 1.5 });
        let e = serde_json::from_value::<PetroConfig>(serde_json::json!({"porosty": 0.3}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("porosity"), "{e}");
        assert_eq!(c.monte_carlo(Some(200)).n_realizations, 200);
        assert_eq!(c.monte_carlo(None).n_realizations, DEFAULT_REALIZATIONS);
    }
}
