//! The MT products: the sites as read, their inversions and evaluations.

#[allow(unused_imports)]
use super::*;

/// One site as read: a full transfer function, or ρa/φ curves from a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SiteData {
    /// An impedance (or ρa/φ) transfer function from EDI, EMTF XML, Z-file, J-file or AVG.
    Transfer(Box<TransferFunction>),
    /// A ρa/φ table (Occam 1D layout or the benchmark CSV).
    Table(MtSounding),
}

/// One file read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtSite {
    /// The file.
    pub path: PathBuf,
    /// Site name (from the file, else the file stem).
    pub site: String,
    /// What was read.
    pub data: SiteData,
}

impl MtSite {
    /// Periods, s.
    pub fn period_s(&self) -> &[f64] {
        match &self.data {
            SiteData::Transfer(tf) => &tf.period_s,
            SiteData::Table(s) => &s.period_s,
        }
    }

    /// Format label and whether it was guessed.
    pub fn format(&self) -> (String, bool) {
        match &self.data {
            SiteData::Transfer(tf) => (tf.format.label().to_string(), tf.format_guessed),
            SiteData::Table(s) => (s.format_label.clone(), s.format_guessed),
        }
    }

    /// The acquisition date, when the file states one.
    pub fn acquired_date(&self) -> Option<&str> {
        match &self.data {
            SiteData::Transfer(tf) => tf.acquired_date.as_deref(),
            SiteData::Table(_) => None,
        }
    }

    /// The reader's notes.
    pub fn notes(&self) -> &[String] {
        match &self.data {
            SiteData::Transfer(tf) => &tf.notes,
            SiteData::Table(s) => &s.notes,
        }
    }
}

/// The sites of a run (`keys::MT_DATA`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtSites {
    /// Sites read, in file-name order.
    pub sites: Vec<MtSite>,
    /// Files that could not be read: (file, why).
    pub unreadable: Vec<(String, String)>,
}

/// The inversions of a run (`keys::MT_RESULTS`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtInversions {
    /// The settings actually used.
    pub params: MtParams,
    /// One per site, in the order of [`MtSites::sites`].
    pub sites: Vec<MtSiteInversion>,
    /// Sites that could not be inverted: (site, why).
    pub failed: Vec<(String, String)>,
}

/// The evaluations of a run (`keys::MT_EVALUATION`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MtEvaluations {
    /// One per inverted site.
    pub sites: Vec<mt::MtEvaluation>,
    /// Mean score over the sites.
    pub quality_score: f64,
    /// Every site passed.
    pub passed: bool,
    /// Sites where a 1D interpretation is not defensible.
    pub not_one_d: Vec<String>,
}
