//! Electrode and topography tables: rows `x z`, `x y z`, optionally with a leading index
//! column (1, 2, 3, … — detected and dropped), optionally with a header row naming the
//! columns (`x,y,z`, `x z`, `id x y z`, …). Separators: comma, semicolon, tab or blanks.
//! Empty fields read as 0 (noted).
//!
//! Without a header, two columns are `x z`, three are `x y z` — except that a third column
//! that is all zero after a varying second column is read as `x z 0` (elevation in the
//! second column), which is a guess and noted as such.

use super::super::survey::{Electrode, Survey};
use super::{numbered_lines, parse_index};
use crate::methods::io::{self, ReadError, parse_f64};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A table of electrode positions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElectrodeTable {
    /// The electrodes in file order.
    pub electrodes: Vec<Electrode>,
    /// How the columns were read, and any guess.
    pub notes: Vec<String>,
    /// True when the column meaning was guessed.
    pub guessed: bool,
}

fn split(line: &str) -> Vec<&str> {
    if line.contains(',') || line.contains(';') {
        line.split([',', ';']).map(str::trim).collect()
    } else {
        io::fields(line)
    }
}

/// Read an electrode/topography table from a file.
pub fn read_electrode_table(path: &Path) -> Result<ElectrodeTable, ReadError> {
    let text = super::decode_text(&io::read_bytes(path)?);
    parse_electrode_table(path, &text)
}

/// Parse an electrode/topography table.
pub fn parse_electrode_table(path: &Path, text: &str) -> Result<ElectrodeTable, ReadError> {
    let lines = numbered_lines(text);
    let content: Vec<(usize, &str)> = lines
        .iter()
        .copied()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    let Some(&(first_no, first)) = content.first() else {
        return Err(ReadError::malformed(
            path,
            1,
            "electrode rows 'x z' or 'x y z'",
            "",
        ));
    };
    let mut notes = Vec::new();
    let mut guessed = false;
    let first_fields = split(first);
    let has_header = first_fields
        .iter()
        .any(|t| !t.is_empty() && parse_f64(t).is_none());
    let header: Option<Vec<String>> = has_header.then(|| {
        first_fields
            .iter()
            .map(|t| t.trim().to_ascii_lowercase())
            .collect()
    });
    let rows = if has_header {
        &content[1..]
    } else {
        &content[..]
    };
    let mut table: Vec<Vec<f64>> = Vec::new();
    let mut empties = 0;
    for &(no, l) in rows {
        let f = split(l);
        let mut v = Vec::with_capacity(f.len());
        for t in &f {
            if t.is_empty() {
                empties += 1;
                v.push(0.0);
            } else {
                v.push(parse_f64(t).ok_or_else(|| ReadError::malformed(path, no, "a number", *t))?);
            }
        }
        if v.is_empty() || v.len() > 5 {
            return Err(ReadError::malformed(path, no, "2 to 4 numbers per row", l));
        }
        if let Some(prev) = table.first()
            && prev.len() != v.len()
        {
            return Err(ReadError::malformed(
                path,
                no,
                format!("{} columns like the first row", prev.len()),
                l,
            ));
        }
        table.push(v);
    }
    if table.is_empty() {
        return Err(ReadError::malformed(
            path,
            first_no,
            "at least one electrode row",
            first,
        ));
    }
    if empties > 0 {
        notes.push(format!("{empties} empty fields read as 0"));
    }
    let ncol = table[0].len();
    // Column roles.
    let (ix, iy, iz): (usize, Option<usize>, Option<usize>) = if let Some(h) = &header {
        let c = |n: &[&str]| h.iter().position(|x| n.contains(&x.as_str()));
        let x = c(&["x", "x_m", "x (m)", "x(m)"])
            .ok_or_else(|| ReadError::malformed(path, first_no, "a header naming x", first))?;
        (
            x,
            c(&["y", "y_m", "y (m)", "y(m)"]),
            c(&["z", "z_m", "z (m)", "z(m)", "elevation", "elev"]),
        )
    } else {
        let index_col = ncol >= 3
            && table
                .iter()
                .enumerate()
                .all(|(k, r)| parse_index(&r[0].to_string()) == Some(k as i64 + 1));
        let off = usize::from(index_col);
        if index_col {
            notes.push("first column runs 1, 2, 3, …: read as an index column and dropped".into());
        }
        match ncol - off {
            1 => (off, None, None),
            2 => (off, None, Some(off + 1)),
            _ => {
                let third_zero = table.iter().all(|r| r[off + 2] == 0.0);
                let second_varies = table.iter().any(|r| r[off + 1] != table[0][off + 1]);
                if third_zero && second_varies {
                    guessed = true;
                    notes.push("three columns without a header, the third all zero: read as x, elevation, 0 (a guess)".into());
                    (off, None, Some(off + 1))
                } else {
                    (off, Some(off + 1), Some(off + 2))
                }
            }
        }
    };
    let electrodes = table
        .iter()
        .map(|r| Electrode {
            x_m: r.get(ix).copied().unwrap_or(0.0),
            y_m: iy.and_then(|i| r.get(i).copied()).unwrap_or(0.0),
            z_m: iz.and_then(|i| r.get(i).copied()).unwrap_or(0.0),
            label: None,
        })
        .collect();
    Ok(ElectrodeTable {
        electrodes,
        notes,
        guessed,
    })
}

/// Replace a survey's electrode positions with a table's (same count required; labels kept).
pub fn apply_electrode_table(
    survey: &mut Survey,
    table: &ElectrodeTable,
    table_path: &Path,
) -> Result<(), ReadError> {
    if table.electrodes.len() != survey.electrodes.len() {
        return Err(ReadError::format(
            table_path,
            format!(
                "the table has {} electrodes, the survey {}",
                table.electrodes.len(),
                survey.electrodes.len()
            ),
        ));
    }
    for (e, t) in survey.electrodes.iter_mut().zip(&table.electrodes) {
        e.x_m = t.x_m;
        e.y_m = t.y_m;
        e.z_m = t.z_m;
    }
    survey
        .notes
        .push(format!("electrode positions from {}", table_path.display()));
    survey.notes.extend(table.notes.iter().cloned());
    Ok(())
}
