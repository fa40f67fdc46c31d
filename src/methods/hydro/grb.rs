//! MODFLOW 6 binary grid files (`.dis.grb`, `.disv.grb`, `.disu.grb`).
//!
//! Format (MODFLOW 6 *Description of Input and Output* ("mf6io", the guide shipped with each
//! release), appendix "Binary Grid File"): four text lines of 50 characters,
//!
//! ```text
//! GRID DIS | GRID DISV | GRID DISU
//! VERSION  n
//! NTXT     n      (number of definition lines)
//! LENTXT   n      (characters of each definition line)
//! ```
//!
//! then NTXT lines of LENTXT characters, one per array, `NAME TYPE NDIM n dims…` (`NCELLS
//! INTEGER NDIM 0 # 800`, `BOTM DOUBLE NDIM 1 800`, `VERTICES DOUBLE NDIM 2 2 156`; a line
//! starting with `#` is a comment), then the arrays in that order, little-endian, INTEGER as
//! 4 bytes, SINGLE 4, DOUBLE 8, CHARACTER one byte per character (`CRS`), a scalar
//! (NDIM 0) as one value. DIS defines NCELLS, NLAY, NROW, NCOL, NJA, XORIGIN, YORIGIN,
//! ANGROT, DELR, DELC, TOP, BOTM, IA, JA, IDOMAIN, ICELLTYPE; DISV NCELLS, NLAY, NCPL, NVERT,
//! NJAVERT, NJA, XORIGIN, YORIGIN, ANGROT, TOP, BOTM, VERTICES, CELLX, CELLY, IAVERT,
//! JAVERT, IA, JA, IDOMAIN, ICELLTYPE; DISU NODES, NJA, XORIGIN, YORIGIN, ANGROT, TOP, BOT,
//! IA, JA, ICELLTYPE (IDOMAIN and the vertices when the model has them). IA and JA are the
//! 1-based compressed-row connectivity (IA has NCELLS + 1 entries, IA(1) = 1 and
//! IA(NCELLS+1) = NJA + 1; JA holds cell numbers). Lengths are in the model's length unit,
//! ANGROT in degrees counter-clockwise about (XORIGIN, YORIGIN).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::error::{HydroError, quoted_bytes};
use crate::methods::io::read_bytes;
use crate::methods::shared::bytes::Bytes;

/// Characters of each of the four first lines.
pub const HEADER_LINE: usize = 50;
/// Largest NTXT or LENTXT taken as real.
const MAX_TEXT: usize = 100_000;

/// The grid's discretization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridType {
    /// Structured layers, rows and columns.
    Dis,
    /// Layers of cells given by vertices.
    Disv,
    /// Unstructured nodes.
    Disu,
}

impl GridType {
    /// `"DIS"`, `"DISV"` or `"DISU"`.
    pub fn name(self) -> &'static str {
        match self {
            GridType::Dis => "DIS",
            GridType::Disv => "DISV",
            GridType::Disu => "DISU",
        }
    }
}

/// The values of one array, as stored (SINGLE widened to `f64`).
#[derive(Debug, Clone, PartialEq)]
pub enum GrbValues {
    /// INTEGER.
    Integer(Vec<i32>),
    /// SINGLE or DOUBLE.
    Real(Vec<f64>),
    /// CHARACTER.
    Text(String),
}

/// One array of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct GrbArray {
    /// The name on its definition line.
    pub name: String,
    /// The type word (`INTEGER`, `SINGLE`, `DOUBLE`, `CHARACTER`).
    pub kind: String,
    /// The dimensions as written (empty for a scalar).
    pub dims: Vec<usize>,
    /// Byte offset of its first value.
    pub offset: usize,
    /// The values.
    pub values: GrbValues,
}

/// The horizontal layout, by grid type.
#[derive(Debug, Clone, PartialEq)]
pub enum GridShape {
    /// DIS.
    Dis {
        /// Rows.
        nrow: usize,
        /// Columns.
        ncol: usize,
        /// Column widths along a row (NCOL values), in the model's length unit.
        delr: Vec<f64>,
        /// Row widths along a column (NROW values), in the model's length unit.
        delc: Vec<f64>,
    },
    /// DISV.
    Disv {
        /// Cells per layer.
        ncpl: usize,
        /// Vertices `(x, y)`, model coordinates (NVERT).
        vertices: Vec<[f64; 2]>,
        /// Cell centre x (NCPL).
        cellx: Vec<f64>,
        /// Cell centre y (NCPL).
        celly: Vec<f64>,
        /// 1-based index into JAVERT of each cell's first vertex (NCPL + 1).
        iavert: Vec<i32>,
        /// 1-based vertex numbers of the cells (NJAVERT).
        javert: Vec<i32>,
    },
    /// DISU.
    Disu,
}

/// A MODFLOW 6 grid as the binary grid file describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct GrbFile {
    /// The file as the caller named it.
    pub file: PathBuf,
    /// DIS, DISV or DISU.
    pub grid_type: GridType,
    /// The VERSION line's number.
    pub version: i64,
    /// Cells (NCELLS; DISU: NODES).
    pub ncells: usize,
    /// Layers (`None` for DISU).
    pub nlay: Option<usize>,
    /// Connections (NJA).
    pub nja: usize,
    /// X of the grid's origin (lower-left corner), model coordinates.
    pub xorigin: f64,
    /// Y of the grid's origin.
    pub yorigin: f64,
    /// Rotation about the origin, degrees counter-clockwise.
    pub angrot: f64,
    /// Top of the upper layer (DIS: NROW × NCOL, DISV: NCPL; DISU: every node).
    pub top: Vec<f64>,
    /// Bottom of every cell (NCELLS).
    pub botm: Vec<f64>,
    /// 1-based compressed-row index (NCELLS + 1).
    pub ia: Vec<i32>,
    /// 1-based connected cells (NJA).
    pub ja: Vec<i32>,
    /// IDOMAIN of every cell (> 0 active); `None` when the file has none (DISU).
    pub idomain: Option<Vec<i32>>,
    /// ICELLTYPE when present.
    pub icelltype: Option<Vec<i32>>,
    /// The horizontal layout.
    pub shape: GridShape,
    /// Every array in file order, with its offset.
    pub arrays: Vec<GrbArray>,
    /// What the reader noticed.
    pub notes: Vec<String>,
}

struct Parser<'a> {
    path: &'a Path,
    bytes: &'a [u8],
}

impl Parser<'_> {
    /// A text line of `len` bytes at `off`, trimmed; refused when it holds non-text bytes.
    fn line(&self, off: usize, len: usize, place: &str) -> Result<String, HydroError> {
        let Some(raw) = Bytes::le(self.bytes).slice(off, len) else {
            return Err(HydroError::truncated(
                self.path,
                place,
                off,
                format!("a {len}-character text line"),
                self.bytes.len(),
            ));
        };
        let texty = |c: &u8| (0x20..0x7f).contains(c) || matches!(c, b'\n' | b'\r' | b'\t' | 0);
        if !raw.iter().all(texty) {
            return Err(HydroError::field(
                self.path,
                place,
                off,
                format!("a {len}-character text line"),
                quoted_bytes(raw.get(..raw.len().min(60)).unwrap_or(raw)),
            ));
        }
        Ok(String::from_utf8_lossy(raw)
            .trim_matches(|c: char| c.is_whitespace() || c == '\0')
            .to_string())
    }

    /// `KEY value` of a header line.
    fn keyed(&self, n: usize, key: &str) -> Result<String, HydroError> {
        let off = n * HEADER_LINE;
        let place = format!("header line {}", n + 1);
        let line = self.line(off, HEADER_LINE, &place)?;
        let mut t = line.split_whitespace();
        match (t.next(), t.next()) {
            (Some(k), Some(v)) if k.eq_ignore_ascii_case(key) => Ok(v.to_string()),
            _ => Err(HydroError::field(
                self.path,
                place,
                off,
                format!("'{key} <value>'"),
                quoted_bytes(line.as_bytes()),
            )),
        }
    }

    fn count(&self, n: usize, key: &str) -> Result<usize, HydroError> {
        let v = self.keyed(n, key)?;
        v.parse::<usize>()
            .ok()
            .filter(|c| (1..=MAX_TEXT).contains(c))
            .ok_or_else(|| {
                HydroError::field(
                    self.path,
                    format!("header line {}", n + 1),
                    n * HEADER_LINE,
                    format!("{key} a whole number from 1 to {MAX_TEXT}"),
                    quoted_bytes(v.as_bytes()),
                )
            })
    }
}

/// Read a MODFLOW 6 binary grid file.
pub fn read_grb(path: &Path) -> Result<GrbFile, HydroError> {
    let bytes = read_bytes(path)?;
    parse_grb(path, &bytes)
}

/// Parse the bytes of a binary grid file (`path` only names it in messages).
pub fn parse_grb(path: &Path, bytes: &[u8]) -> Result<GrbFile, HydroError> {
    let p = Parser { path, bytes };
    let kind = p.keyed(0, "GRID")?;
    let grid_type = match kind.to_ascii_uppercase().as_str() {
        "DIS" => GridType::Dis,
        "DISV" => GridType::Disv,
        "DISU" => GridType::Disu,
        _ => {
            return Err(HydroError::field(
                path,
                "header line 1",
                0,
                "'GRID DIS', 'GRID DISV' or 'GRID DISU'",
                quoted_bytes(kind.as_bytes()),
            ));
        }
    };
    let version_text = p.keyed(1, "VERSION")?;
    let version = version_text.parse::<i64>().map_err(|_| {
        HydroError::field(
            path,
            "header line 2",
            HEADER_LINE,
            "VERSION a whole number",
            quoted_bytes(version_text.as_bytes()),
        )
    })?;
    let ntxt = p.count(2, "NTXT")?;
    let lentxt = p.count(3, "LENTXT")?;
    let defs_at = 4 * HEADER_LINE;
    // Both at most MAX_TEXT: the product cannot overflow.
    if defs_at + ntxt * lentxt > bytes.len() {
        return Err(HydroError::truncated(
            path,
            "the definition lines",
            defs_at,
            format!("NTXT × LENTXT = {ntxt} × {lentxt} characters of definitions"),
            bytes.len(),
        ));
    }
    struct Def {
        name: String,
        kind: String,
        dims: Vec<usize>,
        line_at: usize,
    }
    let mut defs: Vec<Def> = Vec::new();
    for i in 0..ntxt {
        let at = defs_at + i * lentxt;
        let place = format!("definition line {}", i + 1);
        let line = p.line(at, lentxt, &place)?;
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        let bad = |what: &str| {
            HydroError::field(
                path,
                place.clone(),
                at,
                format!("'NAME TYPE NDIM n dims…' ({what})"),
                quoted_bytes(line.as_bytes()),
            )
        };
        if t.len() < 4 || !t[2].eq_ignore_ascii_case("NDIM") {
            return Err(bad("four words at least, the third NDIM"));
        }
        let kind = t[1].to_ascii_uppercase();
        if !["INTEGER", "SINGLE", "DOUBLE", "CHARACTER"].contains(&kind.as_str()) {
            return Err(bad("TYPE INTEGER, SINGLE, DOUBLE or CHARACTER"));
        }
        let ndim = t[3]
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= 3)
            .ok_or_else(|| bad("NDIM 0 to 3"))?;
        let dims: Vec<usize> = if ndim == 0 {
            Vec::new()
        } else {
            t.get(4..4 + ndim)
                .ok_or_else(|| bad("NDIM dimensions after NDIM"))?
                .iter()
                .map(|d| {
                    d.parse::<usize>()
                        .map_err(|_| bad("whole-number dimensions"))
                })
                .collect::<Result<_, _>>()?
        };
        defs.push(Def {
            name: t[0].to_ascii_uppercase(),
            kind,
            dims,
            line_at: at,
        });
    }
    let b = Bytes::le(bytes);
    let mut at = defs_at + ntxt * lentxt;
    let mut arrays: Vec<GrbArray> = Vec::with_capacity(defs.len());
    for d in defs {
        let count = d.dims.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
        let size = match d.kind.as_str() {
            "DOUBLE" => 8,
            "CHARACTER" => 1,
            _ => 4,
        };
        let need = count.and_then(|c| c.checked_mul(size));
        let fits = need
            .and_then(|n| at.checked_add(n))
            .is_some_and(|end| end <= bytes.len());
        let (Some(count), Some(need), true) = (count, need, fits) else {
            return Err(HydroError::truncated(
                path,
                format!(
                    "array {} (defined at byte {})",
                    quoted_bytes(d.name.as_bytes()),
                    d.line_at
                ),
                at,
                format!(
                    "{} {} values ({} bytes)",
                    count.map_or("more than addressable".into(), |c| c.to_string()),
                    d.kind,
                    need.map_or("more than addressable".into(), |n| n.to_string())
                ),
                bytes.len(),
            ));
        };
        // In bounds below: `fits` checked at + need <= len.
        let values = match d.kind.as_str() {
            "INTEGER" => {
                GrbValues::Integer((0..count).map(|i| b.i32(at + 4 * i).unwrap_or(0)).collect())
            }
            "SINGLE" => GrbValues::Real(
                (0..count)
                    .map(|i| b.f32(at + 4 * i).map_or(f64::NAN, f64::from))
                    .collect(),
            ),
            "DOUBLE" => GrbValues::Real(
                (0..count)
                    .map(|i| b.f64(at + 8 * i).unwrap_or(f64::NAN))
                    .collect(),
            ),
            _ => GrbValues::Text(
                b.slice(at, count)
                    .map(|s| String::from_utf8_lossy(s).trim().to_string())
                    .unwrap_or_default(),
            ),
        };
        arrays.push(GrbArray {
            name: d.name,
            kind: d.kind,
            dims: d.dims,
            offset: at,
            values,
        });
        at += need;
    }
    let mut notes = Vec::new();
    if at < bytes.len() {
        notes.push(format!(
            "{} bytes after the last array were not read",
            bytes.len() - at
        ));
    }
    Grid {
        path,
        arrays: &arrays,
    }
    .build(grid_type, version, notes)
    .map(|mut g| {
        g.arrays = arrays;
        g
    })
}

struct Grid<'a> {
    path: &'a Path,
    arrays: &'a [GrbArray],
}

impl Grid<'_> {
    fn find(&self, name: &str) -> Option<&GrbArray> {
        self.arrays.iter().find(|a| a.name == name)
    }

    fn missing(&self, name: &str, grid: GridType) -> HydroError {
        HydroError::field(
            self.path,
            "the definition lines",
            4 * HEADER_LINE,
            format!("an array {name} (a {} grid file defines it)", grid.name()),
            "no such definition",
        )
    }

    fn ints(&self, name: &str, grid: GridType) -> Result<(&Vec<i32>, usize), HydroError> {
        let a = self.find(name).ok_or_else(|| self.missing(name, grid))?;
        match &a.values {
            GrbValues::Integer(v) => Ok((v, a.offset)),
            _ => Err(HydroError::field(
                self.path,
                format!("array {name}"),
                a.offset,
                "an INTEGER array",
                a.kind.clone(),
            )),
        }
    }

    fn reals(&self, name: &str, grid: GridType) -> Result<(&Vec<f64>, usize), HydroError> {
        let a = self.find(name).ok_or_else(|| self.missing(name, grid))?;
        match &a.values {
            GrbValues::Real(v) => Ok((v, a.offset)),
            _ => Err(HydroError::field(
                self.path,
                format!("array {name}"),
                a.offset,
                "a SINGLE or DOUBLE array",
                a.kind.clone(),
            )),
        }
    }

    /// A positive integer scalar.
    fn size(&self, name: &str, grid: GridType) -> Result<usize, HydroError> {
        let (v, off) = self.ints(name, grid)?;
        match v.as_slice() {
            [n] if *n >= 1 => Ok(*n as usize),
            _ => Err(HydroError::field(
                self.path,
                format!("array {name}"),
                off,
                format!("{name}, one integer of at least 1"),
                format!("{v:?}"),
            )),
        }
    }

    fn scalar(&self, name: &str, grid: GridType) -> Result<f64, HydroError> {
        let (v, off) = self.reals(name, grid)?;
        match v.as_slice() {
            [x] if x.is_finite() => Ok(*x),
            _ => Err(HydroError::field(
                self.path,
                format!("array {name}"),
                off,
                format!("{name}, one finite real"),
                format!("{v:?}"),
            )),
        }
    }

    fn check_len<T>(
        &self,
        name: &str,
        v: &[T],
        off: usize,
        n: usize,
        what: &str,
    ) -> Result<(), HydroError> {
        if v.len() == n {
            Ok(())
        } else {
            Err(HydroError::field(
                self.path,
                format!("array {name}"),
                off,
                format!("{n} values ({what})"),
                format!("{} values", v.len()),
            ))
        }
    }

    fn int_array(
        &self,
        name: &str,
        grid: GridType,
        n: usize,
        what: &str,
    ) -> Result<Vec<i32>, HydroError> {
        let (v, off) = self.ints(name, grid)?;
        self.check_len(name, v, off, n, what)?;
        Ok(v.clone())
    }

    fn real_array(
        &self,
        name: &str,
        grid: GridType,
        n: usize,
        what: &str,
    ) -> Result<Vec<f64>, HydroError> {
        let (v, off) = self.reals(name, grid)?;
        self.check_len(name, v, off, n, what)?;
        Ok(v.clone())
    }

    /// A compressed-row index: `ia(1) = 1`, non-decreasing, `ia(n+1) = nnz + 1`, and every
    /// `ja` in `1..=max_ja`.
    fn check_crs(
        &self,
        (ia_name, ia): (&str, &[i32]),
        (ja_name, ja): (&str, &[i32]),
        max_ja: usize,
    ) -> Result<(), HydroError> {
        let ia_off = self.find(ia_name).map_or(0, |a| a.offset);
        let ja_off = self.find(ja_name).map_or(0, |a| a.offset);
        let nnz = ja.len();
        for (i, w) in ia.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(HydroError::field(
                    self.path,
                    format!("array {ia_name}, entry {}", i + 2),
                    ia_off + 4 * (i + 1),
                    format!("a non-decreasing index (at least {})", w[0]),
                    w[1].to_string(),
                ));
            }
        }
        let first_ok = ia.first() == Some(&1);
        let last_ok = ia.last().is_some_and(|&l| l as i64 == nnz as i64 + 1);
        if !first_ok || !last_ok {
            return Err(HydroError::field(
                self.path,
                format!("array {ia_name}"),
                ia_off,
                format!(
                    "{ia_name}(1) = 1 and its last entry {} ({ja_name} + 1)",
                    nnz + 1
                ),
                format!(
                    "{} … {}",
                    ia.first().copied().unwrap_or(0),
                    ia.last().copied().unwrap_or(0)
                ),
            ));
        }
        if let Some((i, v)) = ja
            .iter()
            .enumerate()
            .find(|(_, v)| !(1..=max_ja as i64).contains(&(**v as i64)))
        {
            return Err(HydroError::field(
                self.path,
                format!("array {ja_name}, entry {}", i + 1),
                ja_off + 4 * i,
                format!("a 1-based number from 1 to {max_ja}"),
                v.to_string(),
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        grid: GridType,
        version: i64,
        notes: Vec<String>,
    ) -> Result<GrbFile, HydroError> {
        let (ncells, nlay) = match grid {
            GridType::Disu => (self.size("NODES", grid)?, None),
            _ => (self.size("NCELLS", grid)?, Some(self.size("NLAY", grid)?)),
        };
        let nja = self.size("NJA", grid)?;
        let xorigin = self.scalar("XORIGIN", grid)?;
        let yorigin = self.scalar("YORIGIN", grid)?;
        let angrot = self.scalar("ANGROT", grid)?;
        let layers = nlay.unwrap_or(1);
        let (shape, ncpl) = match grid {
            GridType::Dis => {
                let nrow = self.size("NROW", grid)?;
                let ncol = self.size("NCOL", grid)?;
                let cells = nrow.checked_mul(ncol).and_then(|c| c.checked_mul(layers));
                if cells != Some(ncells) {
                    let off = self.find("NCELLS").map_or(0, |a| a.offset);
                    return Err(HydroError::field(
                        self.path,
                        "array NCELLS",
                        off,
                        format!("NLAY × NROW × NCOL = {layers} × {nrow} × {ncol}"),
                        ncells.to_string(),
                    ));
                }
                let delr = self.real_array("DELR", grid, ncol, "NCOL")?;
                let delc = self.real_array("DELC", grid, nrow, "NROW")?;
                (
                    GridShape::Dis {
                        nrow,
                        ncol,
                        delr,
                        delc,
                    },
                    nrow * ncol,
                )
            }
            GridType::Disv => {
                let ncpl = self.size("NCPL", grid)?;
                let nvert = self.size("NVERT", grid)?;
                let njavert = self.size("NJAVERT", grid)?;
                if ncpl.checked_mul(layers) != Some(ncells) {
                    let off = self.find("NCELLS").map_or(0, |a| a.offset);
                    return Err(HydroError::field(
                        self.path,
                        "array NCELLS",
                        off,
                        format!("NLAY × NCPL = {layers} × {ncpl}"),
                        ncells.to_string(),
                    ));
                }
                let flat =
                    self.real_array("VERTICES", grid, nvert.saturating_mul(2), "2 × NVERT")?;
                let vertices = flat.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
                let cellx = self.real_array("CELLX", grid, ncpl, "NCPL")?;
                let celly = self.real_array("CELLY", grid, ncpl, "NCPL")?;
                let iavert = self.int_array("IAVERT", grid, ncpl + 1, "NCPL + 1")?;
                let javert = self.int_array("JAVERT", grid, njavert, "NJAVERT")?;
                self.check_crs(("IAVERT", &iavert), ("JAVERT", &javert), nvert)?;
                (
                    GridShape::Disv {
                        ncpl,
                        vertices,
                        cellx,
                        celly,
                        iavert,
                        javert,
                    },
                    ncpl,
                )
            }
            GridType::Disu => (GridShape::Disu, ncells),
        };
        let top = self.real_array("TOP", grid, ncpl, "the cells of the top layer")?;
        let botm_name = if grid == GridType::Disu {
            "BOT"
        } else {
            "BOTM"
        };
        let botm = self.real_array(botm_name, grid, ncells, "NCELLS")?;
        let ia = self.int_array("IA", grid, ncells + 1, "NCELLS + 1")?;
        let ja = self.int_array("JA", grid, nja, "NJA")?;
        self.check_crs(("IA", &ia), ("JA", &ja), ncells)?;
        let idomain = match (grid, self.find("IDOMAIN")) {
            (GridType::Disu, None) => None,
            _ => Some(self.int_array("IDOMAIN", grid, ncells, "NCELLS")?),
        };
        let icelltype = match self.find("ICELLTYPE") {
            None => None,
            Some(_) => Some(self.int_array("ICELLTYPE", grid, ncells, "NCELLS")?),
        };
        Ok(GrbFile {
            file: self.path.to_path_buf(),
            grid_type: grid,
            version,
            ncells,
            nlay,
            nja,
            xorigin,
            yorigin,
            angrot,
            top,
            botm,
            ia,
            ja,
            idomain,
            icelltype,
            shape,
            arrays: Vec::new(),
            notes,
        })
    }
}

impl GrbFile {
    /// Cells with IDOMAIN > 0 (all when the file has no IDOMAIN).
    pub fn n_active(&self) -> usize {
        self.idomain
            .as_ref()
            .map_or(self.ncells, |d| d.iter().filter(|v| **v > 0).count())
    }

    /// The JSON `hydrogeo-studio read` prints.
    pub fn summary(&self) -> Value {
        let range = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if lo <= hi {
                json!([lo, hi])
            } else {
                Value::Null
            }
        };
        let mut grid = json!({
            "type": self.grid_type.name(),
            "ncells": self.ncells,
            "nlay": self.nlay,
            "nja": self.nja,
            "xorigin": self.xorigin,
            "yorigin": self.yorigin,
            "angrot_deg": self.angrot,
        });
        match &self.shape {
            GridShape::Dis {
                nrow,
                ncol,
                delr,
                delc,
            } => {
                grid["nrow"] = json!(nrow);
                grid["ncol"] = json!(ncol);
                grid["delr_range"] = range(delr);
                grid["delc_range"] = range(delc);
            }
            GridShape::Disv { ncpl, vertices, .. } => {
                grid["ncpl"] = json!(ncpl);
                grid["nvert"] = json!(vertices.len());
            }
            GridShape::Disu => {}
        }
        json!({
            "method": "hydro",
            "file": self.file.display().to_string(),
            "format": "mf6_grb",
            "format_name": "MODFLOW 6 binary grid file",
            "format_guessed": false,
            "version": self.version,
            "grid": grid,
            "length_unit": "the model's length unit",
            "top_range": range(&self.top),
            "botm_range": range(&self.botm),
            "n_active": self.n_active(),
            "n_inactive": self.ncells - self.n_active().min(self.ncells),
            "arrays": self.arrays.iter().map(|a| a.name.clone()).collect::<Vec<_>>(),
            "notes": self.notes,
        })
    }
}

/// Test and example support: the bytes of a DIS binary grid file of `nlay × nrow × ncol`
/// cells with these spacings and elevations, `IDOMAIN` 1 everywhere but `inactive` (0-based
/// cell numbers), and the six-neighbour connectivity.
#[allow(clippy::too_many_arguments)]
pub fn write_dis_grb(
    (nlay, nrow, ncol): (usize, usize, usize),
    (xorigin, yorigin, angrot): (f64, f64, f64),
    delr: &[f64],
    delc: &[f64],
    top: &[f64],
    botm: &[f64],
    inactive: &[usize],
) -> Vec<u8> {
    let ncells = nlay * nrow * ncol;
    let mut ia = vec![1i32];
    let mut ja = Vec::new();
    for k in 0..nlay {
        for i in 0..nrow {
            for j in 0..ncol {
                let n = (k * nrow + i) * ncol + j;
                ja.push(n as i32 + 1);
                let mut near = Vec::new();
                if k > 0 {
                    near.push(n - nrow * ncol);
                }
                if i > 0 {
                    near.push(n - ncol);
                }
                if j > 0 {
                    near.push(n - 1);
                }
                if j + 1 < ncol {
                    near.push(n + 1);
                }
                if i + 1 < nrow {
                    near.push(n + ncol);
                }
                if k + 1 < nlay {
                    near.push(n + nrow * ncol);
                }
                ja.extend(near.iter().map(|m| *m as i32 + 1));
                ia.push(ja.len() as i32 + 1);
            }
        }
    }
    let idomain: Vec<i32> = (0..ncells)
        .map(|c| i32::from(!inactive.contains(&c)))
        .collect();
    let defs: Vec<String> = vec![
        format!("NCELLS INTEGER NDIM 0 # {ncells}"),
        format!("NLAY INTEGER NDIM 0 # {nlay}"),
        format!("NROW INTEGER NDIM 0 # {nrow}"),
        format!("NCOL INTEGER NDIM 0 # {ncol}"),
        format!("NJA INTEGER NDIM 0 # {}", ja.len()),
        format!("XORIGIN DOUBLE NDIM 0 # {xorigin}"),
        format!("YORIGIN DOUBLE NDIM 0 # {yorigin}"),
        format!("ANGROT DOUBLE NDIM 0 # {angrot}"),
        format!("DELR DOUBLE NDIM 1 {ncol}"),
        format!("DELC DOUBLE NDIM 1 {nrow}"),
        format!("TOP DOUBLE NDIM 1 {}", nrow * ncol),
        format!("BOTM DOUBLE NDIM 1 {ncells}"),
        format!("IA INTEGER NDIM 1 {}", ncells + 1),
        format!("JA INTEGER NDIM 1 {}", ja.len()),
        format!("IDOMAIN INTEGER NDIM 1 {ncells}"),
    ];
    let mut out = Vec::new();
    let mut line = |s: &str, n: usize| {
        let mut l = format!("{s:<w$}", w = n - 1).into_bytes();
        l.truncate(n - 1);
        l.push(b'\n');
        out.extend_from_slice(&l);
    };
    line("GRID DIS", HEADER_LINE);
    line("VERSION 1", HEADER_LINE);
    line(&format!("NTXT {}", defs.len()), HEADER_LINE);
    line("LENTXT 100", HEADER_LINE);
    for d in &defs {
        line(d, 100);
    }
    let ints = |out: &mut Vec<u8>, v: &[i32]| v.iter().for_each(|x| out.extend(x.to_le_bytes()));
    let reals = |out: &mut Vec<u8>, v: &[f64]| v.iter().for_each(|x| out.extend(x.to_le_bytes()));
    ints(
        &mut out,
        &[
            ncells as i32,
            nlay as i32,
            nrow as i32,
            ncol as i32,
            ja.len() as i32,
        ],
    );
    reals(&mut out, &[xorigin, yorigin, angrot]);
    reals(&mut out, delr);
    reals(&mut out, delc);
    reals(&mut out, top);
    reals(&mut out, botm);
    ints(&mut out, &ia);
    ints(&mut out, &ja);
    ints(&mut out, &idomain);
    out
}
