//! The transfer function of one MT site as every reader returns it, and the quantities
//! derived from it (apparent resistivity, phase, determinant impedance).
//!
//! Units: the impedance is held in field units, (mV/km)/nT, whatever the file used; then
//! ρa = 0.2·T·|Z|² Ω·m (T in s) and φ = atan2(Im Z, Re Z). An impedance in ohms (SI, E/H)
//! converts by Z_field = Z_Ω / (1000·μ0) (E: 1 mV/km = 10⁻⁶ V/m; B = μ0·H, 1 nT = 10⁻⁹ T).

use num_complex::Complex64;
use serde::{Deserialize, Serialize};

/// Vacuum permeability used throughout, 4π·10⁻⁷ H/m (the value the oracles use).
pub const MU0: f64 = 4.0e-7 * std::f64::consts::PI;

/// One 2×2 impedance tensor `[[Zxx, Zxy], [Zyx, Zyy]]`.
pub type Tensor = [[Complex64; 2]; 2];

/// The file formats the readers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TfFormat {
    /// SEG EDI with impedance blocks (>ZXYR …).
    Edi,
    /// SEG EDI with apparent resistivity and phase blocks (>RHOXY, >PHSXY …).
    EdiRhoPhase,
    /// SEG EDI with cross-spectra (>=SPECTRASECT, >SPECTRA).
    EdiSpectra,
    /// EMTF XML (Kelbert 2020).
    EmtfXml,
    /// EMTF Z-file (.zmm, .zrr, .zss; Egbert).
    EmtfZFile,
    /// BIRRP J-file (Jones J-format).
    BirrpJFile,
    /// Zonge MTEdit AVG.
    ZongeAvg,
}

impl TfFormat {
    /// A human-readable name.
    pub fn label(self) -> &'static str {
        match self {
            TfFormat::Edi => "SEG EDI (impedance)",
            TfFormat::EdiRhoPhase => "SEG EDI (apparent resistivity and phase)",
            TfFormat::EdiSpectra => "SEG EDI (cross-spectra)",
            TfFormat::EmtfXml => "EMTF XML",
            TfFormat::EmtfZFile => "EMTF Z-file",
            TfFormat::BirrpJFile => "BIRRP J-file",
            TfFormat::ZongeAvg => "Zonge AVG",
        }
    }
}

/// A site's transfer function: impedance (field units) and tipper per period, ascending.
///
/// Missing values are NaN. Standard deviations are of the complex value (√variance);
/// NaN when the file gives none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferFunction {
    /// Site / station name from the file.
    pub site: String,
    /// What was read.
    pub format: TfFormat,
    /// True when the format was recognised by a weak signature rather than the extension.
    pub format_guessed: bool,
    /// Periods in seconds, ascending.
    pub period_s: Vec<f64>,
    /// Impedance per period, (mV/km)/nT; `None` when the file holds no impedance.
    #[serde(with = "ser::tensors")]
    pub z_mv_km_nt: Option<Vec<Tensor>>,
    /// Standard deviation of each impedance element, (mV/km)/nT.
    #[serde(with = "super::nanser::opt_tensors")]
    pub z_std_mv_km_nt: Option<Vec<[[f64; 2]; 2]>>,
    /// Tipper `[Tx, Ty]` per period (dimensionless); `None` when absent.
    #[serde(with = "ser::pairs")]
    pub tipper: Option<Vec<[Complex64; 2]>>,
    /// Standard deviation of each tipper element.
    #[serde(with = "super::nanser::opt_pairs")]
    pub tipper_std: Option<Vec<[f64; 2]>>,
    /// The impedance units the file declared (or "not stated").
    pub units_in_file: String,
    /// True when the units were inferred rather than stated and confirmed.
    pub units_guessed: bool,
    /// Latitude, longitude (degrees) and elevation (m) when the file gives them.
    pub latitude_deg: Option<f64>,
    /// Longitude in degrees.
    pub longitude_deg: Option<f64>,
    /// Elevation in m.
    pub elevation_m: Option<f64>,
    /// What the reader noticed: rotations not applied, masked values, conventions.
    pub notes: Vec<String>,
}

/// The impedance components and derived modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// Zxx.
    Xx,
    /// Zxy.
    Xy,
    /// Zyx.
    Yx,
    /// Zyy.
    Yy,
    /// The determinant impedance √(Zxx·Zyy − Zxy·Zyx).
    Det,
}

impl Component {
    fn index(self) -> Option<(usize, usize)> {
        match self {
            Component::Xx => Some((0, 0)),
            Component::Xy => Some((0, 1)),
            Component::Yx => Some((1, 0)),
            Component::Yy => Some((1, 1)),
            Component::Det => None,
        }
    }
}

/// Apparent resistivity from a field-unit impedance: ρa = 0.2·T·|Z|² (Ω·m).
pub fn rhoa_ohm_m(z: Complex64, period_s: f64) -> f64 {
    0.2 * period_s * z.norm_sqr()
}

/// Impedance phase φ = atan2(Im Z, Re Z) in degrees, in (−180°, 180°].
pub fn phase_deg(z: Complex64) -> f64 {
    z.im.atan2(z.re).to_degrees()
}

/// The determinant impedance Z_det = √(Zxx·Zyy − Zxy·Zyx) (principal root; Ranganayaki
/// 1984). For a 1D earth with the e^{+iωt} convention (Zyx = −Zxy, diagonals 0) it equals
/// Zxy.
pub fn z_det(z: &Tensor) -> Complex64 {
    (z[0][0] * z[1][1] - z[0][1] * z[1][0]).sqrt()
}

/// An impedance in ohms (E/H, SI) expressed in (mV/km)/nT: Z / (1000·μ0).
pub fn ohm_to_field(z_ohm: Complex64) -> Complex64 {
    z_ohm / (1000.0 * MU0)
}

/// An impedance in (mV/km)/nT expressed in ohms: Z·1000·μ0.
pub fn field_to_ohm(z_field: Complex64) -> Complex64 {
    z_field * (1000.0 * MU0)
}

impl TransferFunction {
    /// An empty transfer function of `format` (readers fill it).
    pub fn empty(format: TfFormat) -> Self {
        TransferFunction {
            site: String::new(),
            format,
            format_guessed: false,
            period_s: Vec::new(),
            z_mv_km_nt: None,
            z_std_mv_km_nt: None,
            tipper: None,
            tipper_std: None,
            units_in_file: "not stated".into(),
            units_guessed: false,
            latitude_deg: None,
            longitude_deg: None,
            elevation_m: None,
            notes: Vec::new(),
        }
    }

    /// Number of periods.
    pub fn n_periods(&self) -> usize {
        self.period_s.len()
    }

    /// The complex impedance of `component` per period (NaN where missing); `None` when
    /// the file holds no impedance.
    pub fn impedance(&self, component: Component) -> Option<Vec<Complex64>> {
        let z = self.z_mv_km_nt.as_ref()?;
        Some(
            z.iter()
                .map(|t| match component.index() {
                    Some((i, j)) => t[i][j],
                    None => z_det(t),
                })
                .collect(),
        )
    }

    /// Apparent resistivity (Ω·m) and phase (degrees, not folded) of `component`.
    pub fn rhoa_phase(&self, component: Component) -> Option<(Vec<f64>, Vec<f64>)> {
        let z = self.impedance(component)?;
        Some((
            z.iter()
                .zip(&self.period_s)
                .map(|(z, &t)| rhoa_ohm_m(*z, t))
                .collect(),
            z.iter().map(|z| phase_deg(*z)).collect(),
        ))
    }

    /// Standard deviation of |Z| for `component` per period (NaN when not given). For the
    /// determinant the mean of the two off-diagonal standard deviations is used, a first-order
    /// estimate for a near-1D tensor.
    pub fn impedance_std(&self, component: Component) -> Option<Vec<f64>> {
        let s = self.z_std_mv_km_nt.as_ref()?;
        Some(
            s.iter()
                .map(|t| match component.index() {
                    Some((i, j)) => t[i][j],
                    None => 0.5 * (t[0][1] + t[1][0]),
                })
                .collect(),
        )
    }

    /// Sort periods ascending (all arrays together) and drop periods that are not finite
    /// and positive; returns how many were dropped.
    pub fn sort_and_clean(&mut self) -> usize {
        let keep: Vec<usize> = {
            let mut idx: Vec<usize> = (0..self.period_s.len())
                .filter(|&i| self.period_s[i].is_finite() && self.period_s[i] > 0.0)
                .collect();
            idx.sort_by(|&a, &b| self.period_s[a].total_cmp(&self.period_s[b]));
            idx
        };
        let dropped = self.period_s.len() - keep.len();
        self.period_s = keep.iter().map(|&i| self.period_s[i]).collect();
        if let Some(z) = &mut self.z_mv_km_nt {
            *z = keep.iter().map(|&i| z[i]).collect();
        }
        if let Some(z) = &mut self.z_std_mv_km_nt {
            *z = keep.iter().map(|&i| z[i]).collect();
        }
        if let Some(t) = &mut self.tipper {
            *t = keep.iter().map(|&i| t[i]).collect();
        }
        if let Some(t) = &mut self.tipper_std {
            *t = keep.iter().map(|&i| t[i]).collect();
        }
        dropped
    }
}

/// Serde helpers: complex numbers as `[re, im]` pairs.
mod ser {
    use super::Tensor;
    use num_complex::Complex64;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    fn c(x: Complex64) -> [f64; 2] {
        [x.re, x.im]
    }
    fn z(p: [Option<f64>; 2]) -> Complex64 {
        Complex64::new(p[0].unwrap_or(f64::NAN), p[1].unwrap_or(f64::NAN))
    }

    pub mod tensors {
        use super::*;
        type Plain = Vec<[[[f64; 2]; 2]; 2]>;

        pub fn serialize<S: Serializer>(v: &Option<Vec<Tensor>>, s: S) -> Result<S::Ok, S::Error> {
            v.as_ref()
                .map(|v| {
                    v.iter()
                        .map(|t| [[c(t[0][0]), c(t[0][1])], [c(t[1][0]), c(t[1][1])]])
                        .collect::<Plain>()
                })
                .serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Vec<Tensor>>, D::Error> {
            type In = Vec<[[[Option<f64>; 2]; 2]; 2]>;
            Ok(Option::<In>::deserialize(d)?.map(|v| {
                v.into_iter()
                    .map(|t| [[z(t[0][0]), z(t[0][1])], [z(t[1][0]), z(t[1][1])]])
                    .collect()
            }))
        }
    }

    pub mod pairs {
        use super::*;
        type Plain = Vec<[[f64; 2]; 2]>;

        pub fn serialize<S: Serializer>(
            v: &Option<Vec<[Complex64; 2]>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            v.as_ref()
                .map(|v| v.iter().map(|t| [c(t[0]), c(t[1])]).collect::<Plain>())
                .serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Vec<[Complex64; 2]>>, D::Error> {
            type In = Vec<[[Option<f64>; 2]; 2]>;
            Ok(Option::<In>::deserialize(d)?
                .map(|v| v.into_iter().map(|t| [z(t[0]), z(t[1])]).collect()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_units_and_ohms_agree_on_rhoa() {
        // ρa = |Z_Ω|²/(ωμ0) must equal 0.2·T·|Z_field|² for the same impedance.
        let z_ohm = Complex64::new(3.1e-3, 2.2e-3);
        let t = 12.5;
        let omega = 2.0 * std::f64::consts::PI / t;
        let rho_si = z_ohm.norm_sqr() / (omega * MU0);
        let rho_field = rhoa_ohm_m(ohm_to_field(z_ohm), t);
        assert!(((rho_si - rho_field) / rho_si).abs() < 1e-14);
        let back = field_to_ohm(ohm_to_field(z_ohm));
        assert!((back - z_ohm).norm() < 1e-18);
    }

    #[test]
    fn determinant_of_a_1d_tensor_is_zxy() {
        let zxy = Complex64::new(2.0, 2.0);
        let t = [
            [Complex64::new(0.0, 0.0), zxy],
            [-zxy, Complex64::new(0.0, 0.0)],
        ];
        assert!((z_det(&t) - zxy).norm() < 1e-15);
        assert!((phase_deg(zxy) - 45.0).abs() < 1e-12);
    }

    #[test]
    fn serde_round_trip_keeps_complex_values() {
        let mut tf = TransferFunction::empty(TfFormat::Edi);
        tf.period_s = vec![1.0];
        tf.z_mv_km_nt = Some(vec![[
            [Complex64::new(1.0, -2.0), Complex64::new(3.0, 4.0)],
            [Complex64::new(-5.0, 6.0), Complex64::new(7.0, 8.0)],
        ]]);
        tf.tipper = Some(vec![[Complex64::new(0.1, 0.2), Complex64::new(0.3, 0.4)]]);
        let json = serde_json::to_string(&tf).unwrap();
        assert!(
            json.contains("[[[1.0,-2.0],[3.0,4.0]],[[-5.0,6.0],[7.0,8.0]]]"),
            "{json}"
        );
        let back: TransferFunction = serde_json::from_str(&json).unwrap();
        assert_eq!(back, tf);
        // Missing values (NaN) are written as null and read back as NaN.
        tf.z_mv_km_nt.as_mut().unwrap()[0][0][0] = Complex64::new(f64::NAN, f64::NAN);
        tf.z_std_mv_km_nt = Some(vec![[[f64::NAN, 0.1], [0.2, 0.3]]]);
        let json = serde_json::to_string(&tf).unwrap();
        let back: TransferFunction = serde_json::from_str(&json).unwrap();
        assert!(back.z_mv_km_nt.as_ref().unwrap()[0][0][0].re.is_nan());
        assert!(back.z_std_mv_km_nt.as_ref().unwrap()[0][0][0].is_nan());
        assert_eq!(back.z_std_mv_km_nt.as_ref().unwrap()[0][1][1], 0.3);
    }
}
