//! One ERT survey as every reader returns it: electrodes in metres, quadrupoles with 0-based
//! electrode indices, and whichever data columns the file held, with units in their names.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The file formats the readers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// pyGIMLi/BERT unified data format (`.dat`, `.ohm`, `.shm`).
    Unified,
    /// E4D survey file (`.srv`; also E4D files saved as `.ohm`).
    E4dSrv,
    /// IRIS Syscal Pro text/CSV export (Prosys II/III).
    SyscalCsv,
    /// IRIS Syscal Pro binary `.bin`.
    SyscalBin,
    /// ABEM Lund / Terrameter SAS `.ohm` (ERIGRAPH) export.
    AbemLund,
    /// ABEM Terrameter LS / LS2 tab-separated ASCII export (`.txt`, "Export data").
    AbemLs,
    /// Res2DInv input `.dat` (standard arrays and the general array).
    Res2dinv,
    /// MPT DAS-1 `.Data` export.
    Das1,
    /// AGI SuperSting `.stg`.
    Sting,
    /// R2/cR2 `protocol.dat`.
    R2Protocol,
    /// GF Instruments ARES II `.2dm`.
    AresII,
    /// Lippmann 4-Point Light `.tx0`.
    Lippmann,
    /// Electra `.ele`.
    Electra,
    /// OhmPi CSV.
    OhmPi,
    /// BGS PRIME `.tab`.
    BgsPrime,
    /// Plain CSV `a,b,m,n,R[,err]` (with an electrode table).
    PlainCsv,
}

impl Format {
    /// Short human name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Unified => "pyGIMLi/BERT unified data format",
            Format::E4dSrv => "E4D survey file",
            Format::SyscalCsv => "Syscal Pro CSV export",
            Format::SyscalBin => "Syscal Pro binary",
            Format::AbemLund => "ABEM Lund (.ohm)",
            Format::AbemLs => "ABEM Terrameter LS (.txt export)",
            Format::Res2dinv => "Res2DInv input file",
            Format::Das1 => "MPT DAS-1",
            Format::Sting => "AGI SuperSting (.stg)",
            Format::R2Protocol => "R2 protocol.dat",
            Format::AresII => "GF Instruments ARES II (.2dm)",
            Format::Lippmann => "Lippmann (.tx0)",
            Format::Electra => "Electra (.ele)",
            Format::OhmPi => "OhmPi CSV",
            Format::BgsPrime => "BGS PRIME (.tab)",
            Format::PlainCsv => "plain CSV a,b,m,n,R",
        }
    }
}

/// One electrode, in metres (x along the line, y across it, z up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Electrode {
    /// Position along the line, m.
    pub x_m: f64,
    /// Position across the line, m (0 for a 2D line).
    pub y_m: f64,
    /// Elevation, m (positive up).
    pub z_m: f64,
    /// The instrument's own name for it when it has one ("9,1" = cable 9 electrode 1).
    pub label: Option<String>,
}

impl Electrode {
    /// An electrode at (x, y, z) without a label.
    pub fn at(x_m: f64, y_m: f64, z_m: f64) -> Self {
        Electrode {
            x_m,
            y_m,
            z_m,
            label: None,
        }
    }
}

/// A four-electrode measurement: current A, B and potential M, N, as 0-based indices into
/// [`Survey::electrodes`]; `None` = a remote (pole) electrode at infinity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Quadrupole {
    /// Current electrode A.
    pub a: Option<usize>,
    /// Current electrode B.
    pub b: Option<usize>,
    /// Potential electrode M.
    pub m: Option<usize>,
    /// Potential electrode N.
    pub n: Option<usize>,
}

impl Quadrupole {
    /// A quadrupole with four real electrodes.
    pub fn new(a: usize, b: usize, m: usize, n: usize) -> Self {
        Quadrupole {
            a: Some(a),
            b: Some(b),
            m: Some(m),
            n: Some(n),
        }
    }

    /// The reciprocal configuration (current and potential dipoles swapped).
    pub fn reciprocal(self) -> Self {
        Quadrupole {
            a: self.m,
            b: self.n,
            m: self.a,
            n: self.b,
        }
    }
}

/// When the survey was measured, and where that came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveyTime {
    /// Calendar year.
    pub year: i32,
    /// Month 1–12.
    pub month: u32,
    /// Day 1–31.
    pub day: u32,
    /// Time of day "hh:mm:ss" when known.
    pub time_of_day: Option<String>,
    /// Where the date was read ("header line 3", "file name").
    pub source: String,
}

impl SurveyTime {
    /// ISO-8601 date (and time when known).
    pub fn iso(&self) -> String {
        let d = format!("{:04}-{:02}-{:02}", self.year, self.month, self.day);
        match &self.time_of_day {
            Some(t) => format!("{d}T{t}"),
            None => d,
        }
    }
}

/// One survey: the electrodes, the quadrupoles and the data columns the file held.
///
/// Every per-datum column has one entry per quadrupole; a value the file did not give for
/// one datum is NaN (written as `null` in JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Survey {
    /// The file it was read from.
    pub source_file: Option<PathBuf>,
    /// The format it was read as.
    pub format: Format,
    /// True when the format was recognised by a signature that could be wrong.
    pub format_guessed: bool,
    /// Electrodes (x, y, z in m).
    pub electrodes: Vec<Electrode>,
    /// Quadrupoles (0-based electrode indices).
    pub quadrupoles: Vec<Quadrupole>,
    /// Transfer resistance ΔU/I, Ω.
    pub r_ohm: Option<Vec<f64>>,
    /// Apparent resistivity, Ω·m.
    pub rhoa_ohm_m: Option<Vec<f64>>,
    /// Voltage ΔU between M and N, V.
    pub u_v: Option<Vec<f64>>,
    /// Injected current, A.
    pub i_a: Option<Vec<f64>>,
    /// Relative error of R (or ρa), as a fraction (0.03 = 3 %).
    pub err: Option<Vec<f64>>,
    /// IP chargeability (or phase), in `ip_unit`.
    pub ip: Option<Vec<f64>>,
    /// Unit of `ip` ("mV/V", "mrad", "ms", "%").
    pub ip_unit: Option<String>,
    /// Geometric factor given by the file, m.
    pub k_m: Option<Vec<f64>>,
    /// Whether each datum is usable (the file's own flag, or a filter's verdict).
    pub valid: Vec<bool>,
    /// Extra topography points (x, z) given beside the electrodes, m.
    pub topography: Vec<[f64; 2]>,
    /// When it was measured, if the file or its name says so unambiguously.
    pub survey_time: Option<SurveyTime>,
    /// A date that was found but is ambiguous (day/month or month/day): a question for the
    /// user, never a guess.
    pub time_question: Option<String>,
    /// What the reader noticed and decided (conventions, guesses, skipped lines).
    pub notes: Vec<String>,
}

impl Survey {
    /// An empty survey of `format`.
    pub fn empty(format: Format) -> Self {
        Survey {
            source_file: None,
            format,
            format_guessed: false,
            electrodes: Vec::new(),
            quadrupoles: Vec::new(),
            r_ohm: None,
            rhoa_ohm_m: None,
            u_v: None,
            i_a: None,
            err: None,
            ip: None,
            ip_unit: None,
            k_m: None,
            valid: Vec::new(),
            topography: Vec::new(),
            survey_time: None,
            time_question: None,
            notes: Vec::new(),
        }
    }

    /// Number of quadrupoles.
    pub fn n_data(&self) -> usize {
        self.quadrupoles.len()
    }

    /// Number of electrodes.
    pub fn n_electrodes(&self) -> usize {
        self.electrodes.len()
    }

    /// Σ|R| over the data that have R, Ω (NaN skipped), as the oracles sum it.
    pub fn sum_abs_r_ohm(&self) -> Option<f64> {
        self.r_ohm
            .as_ref()
            .map(|r| r.iter().filter(|v| v.is_finite()).map(|v| v.abs()).sum())
    }

    /// Σρa over the data that have ρa, Ω·m (NaN skipped).
    pub fn sum_rhoa_ohm_m(&self) -> Option<f64> {
        self.rhoa_ohm_m
            .as_ref()
            .map(|r| r.iter().filter(|v| v.is_finite()).sum())
    }

    /// Transfer resistances: the `r` column, else u/i, else ρa/k (NaN where none applies).
    pub fn resistances_ohm(&self) -> Vec<f64> {
        let n = self.n_data();
        (0..n)
            .map(|i| {
                let pick = |c: &Option<Vec<f64>>| c.as_ref().and_then(|v| v.get(i).copied());
                if let Some(r) = pick(&self.r_ohm).filter(|r| r.is_finite()) {
                    return r;
                }
                if let (Some(u), Some(c)) = (pick(&self.u_v), pick(&self.i_a))
                    && u.is_finite()
                    && c.is_finite()
                    && c != 0.0
                {
                    return u / c;
                }
                if let (Some(rho), Some(k)) = (pick(&self.rhoa_ohm_m), pick(&self.k_m))
                    && rho.is_finite()
                    && k.is_finite()
                    && k != 0.0
                {
                    return rho / k;
                }
                f64::NAN
            })
            .collect()
    }

    /// How the electrodes are laid out (a surface line, a ring, boreholes, an areal grid).
    pub fn layout(&self) -> super::geometry::Layout {
        super::geometry::classify(&self.electrodes)
    }

    /// Whether all electrodes lie on one straight horizontal line (y and z constant).
    pub fn is_flat_line(&self) -> bool {
        let Some(first) = self.electrodes.first() else {
            return true;
        };
        self.electrodes
            .iter()
            .all(|e| (e.z_m - first.z_m).abs() < 1e-9 && (e.y_m - first.y_m).abs() < 1e-9)
    }

    /// Electrode positions in the 2D section plane: (distance along the line, elevation), m.
    ///
    /// For a line along x (constant y) this is (x, z). Otherwise the electrodes are projected
    /// on the straight line through the first and last electrode (horizontal distance from
    /// the first), which is what a 2.5D model assumes.
    pub fn line_positions(&self) -> Vec<[f64; 2]> {
        let Some(first) = self.electrodes.first() else {
            return Vec::new();
        };
        let constant_y = self
            .electrodes
            .iter()
            .all(|e| (e.y_m - first.y_m).abs() < 1e-9);
        if constant_y {
            return self.electrodes.iter().map(|e| [e.x_m, e.z_m]).collect();
        }
        let last = self.electrodes.last().unwrap_or(first);
        let (dx, dy) = (last.x_m - first.x_m, last.y_m - first.y_m);
        let len = dx.hypot(dy);
        let (ux, uy) = if len > 0.0 {
            (dx / len, dy / len)
        } else {
            (1.0, 0.0)
        };
        self.electrodes
            .iter()
            .map(|e| [(e.x_m - first.x_m) * ux + (e.y_m - first.y_m) * uy, e.z_m])
            .collect()
    }

    /// Remote poles at infinity the data use: one for a remote current electrode (B absent
    /// in some quadrupole), one for a remote potential electrode (N absent). They are not
    /// electrodes of the model; tools that place them at a far position (ResIPy at ±999999)
    /// count them as electrodes.
    pub fn n_remote_poles(&self) -> usize {
        let b = self
            .quadrupoles
            .iter()
            .any(|q| q.a.is_some() && q.b.is_none());
        let n = self
            .quadrupoles
            .iter()
            .any(|q| q.m.is_some() && q.n.is_none());
        usize::from(b) + usize::from(n)
    }

    /// Every data column present, by its unified-format token.
    pub fn columns(&self) -> Vec<&'static str> {
        let mut c = vec!["a", "b", "m", "n"];
        for (tok, col) in [
            ("r", &self.r_ohm),
            ("rhoa", &self.rhoa_ohm_m),
            ("u", &self.u_v),
            ("i", &self.i_a),
            ("err", &self.err),
            ("ip", &self.ip),
            ("k", &self.k_m),
        ] {
            if col.is_some() {
                c.push(tok);
            }
        }
        c
    }

    /// Keep only the data where `keep[i]` is true (all columns together).
    pub fn retain_data(&mut self, keep: &[bool]) {
        let filt_q: Vec<Quadrupole> = self
            .quadrupoles
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(q, _)| *q)
            .collect();
        self.quadrupoles = filt_q;
        let f = |v: &mut Option<Vec<f64>>| {
            if let Some(col) = v.as_mut() {
                *col = col
                    .iter()
                    .zip(keep)
                    .filter(|(_, k)| **k)
                    .map(|(x, _)| *x)
                    .collect();
            }
        };
        f(&mut self.r_ohm);
        f(&mut self.rhoa_ohm_m);
        f(&mut self.u_v);
        f(&mut self.i_a);
        f(&mut self.err);
        f(&mut self.ip);
        f(&mut self.k_m);
        self.valid = self
            .valid
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(x, _)| *x)
            .collect();
    }

    /// The JSON summary `hydrogeo-studio read` prints: format (and whether it was a guess),
    /// counts, ranges with units, survey time, notes.
    pub fn summary(&self) -> serde_json::Value {
        let range = |v: &Option<Vec<f64>>| {
            v.as_ref().and_then(|v| {
                let fin: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
                if fin.is_empty() {
                    return None;
                }
                let lo = fin.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = fin.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                Some(serde_json::json!([lo, hi]))
            })
        };
        let line = self.line_positions();
        let xs: Vec<f64> = line.iter().map(|p| p[0]).collect();
        let zs: Vec<f64> = self.electrodes.iter().map(|e| e.z_m).collect();
        serde_json::json!({
            "method": "ert",
            "file": self.source_file.as_ref().map(|p| p.display().to_string()),
            "format": self.format,
            "format_name": self.format.name(),
            "format_guessed": self.format_guessed,
            "n_electrodes": self.n_electrodes(),
            "n_data": self.n_data(),
            "n_valid": self.valid.iter().filter(|v| **v).count(),
            "n_remote_poles": self.n_remote_poles(),
            "columns": self.columns(),
            "electrode_line_range_m": range(&Some(xs)),
            "electrode_z_range_m": range(&Some(zs)),
            "r_range_ohm": range(&self.r_ohm),
            "rhoa_range_ohm_m": range(&self.rhoa_ohm_m),
            "err_range_fraction": range(&self.err),
            "ip_range": range(&self.ip),
            "ip_unit": self.ip_unit,
            "sum_abs_r_ohm": self.sum_abs_r_ohm(),
            "n_topography_points": self.topography.len(),
            "electrode_layout": self.layout(),
            "electrode_layout_words": self.layout().describe(),
            "survey_time": self.survey_time.as_ref().map(SurveyTime::iso),
            "survey_time_source": self.survey_time.as_ref().map(|t| t.source.clone()),
            "time_question": self.time_question,
            "notes": self.notes,
        })
    }
}

/// Several surveys of one line over time (time-lapse), in time order when known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveySet {
    /// The surveys.
    pub surveys: Vec<Survey>,
    /// What was noticed when putting them together (different electrodes, missing dates).
    pub notes: Vec<String>,
}

impl SurveySet {
    /// Put surveys together, sorted by survey time when every one has a time (otherwise in
    /// the order given, with a note saying so).
    pub fn new(mut surveys: Vec<Survey>) -> Self {
        let mut notes = Vec::new();
        if surveys.iter().all(|s| s.survey_time.is_some()) {
            surveys.sort_by_key(|s| s.survey_time.as_ref().map(SurveyTime::iso));
        } else if surveys.len() > 1 {
            notes.push(
                "not every survey has a known date; kept in the order the files were given"
                    .to_string(),
            );
        }
        if let Some(first) = surveys.first() {
            let n = first.n_electrodes();
            for s in &surveys[1..] {
                if s.n_electrodes() != n {
                    notes.push(format!(
                        "{} has {} electrodes, the first survey {}",
                        s.source_file
                            .as_ref()
                            .map(|p| p.display().to_string())
                            .unwrap_or_default(),
                        s.n_electrodes(),
                        n
                    ));
                }
            }
        }
        SurveySet { surveys, notes }
    }
}
