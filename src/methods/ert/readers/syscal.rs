//! IRIS Syscal Pro: the Prosys text/CSV export and the binary `.bin` file.
//!
//! CSV: one header row; electrode positions in metres (`Spa.1`–`Spa.4` = A B M N in Prosys II,
//! `xA (m)` … and optional `yA (m)`, `zA (m)` in Prosys III), `Vp`/`VMN (mV)` in mV,
//! `In`/`IAB (mA)` in mA, `Rho` in Ω·m, `Dev.` in %, `M` in mV/V. R = Vp/In (mV/mA = Ω).
//!
//! Binary (IRIS record layout, version word 0x80000002/3): a 4-byte version, 1-byte device
//! type, 1024-byte comment, then one little-endian record per quadrupole: el_array u16,
//! more_t_mesure i16, injection time f32, M delay f32, type_cp_xyz i16, ignored i16,
//! positions 12 × f32 (x of A B M N, then y, then z), Ps, Vp (mV), In (mA), ρ (Ω·m),
//! m (mV/V), dev (%) f32, 20 IP window times f32, 20 IP windows f32, 4 bytes of flags,
//! 12 name bytes, latitude, longitude, stacks, Rs-check f32; then 4 × f32 (Tx Vab, Tx bat,
//! Rx bat, temperature) when more_t_mesure ≥ 2, and an f64 date (days since 1899-12-30)
//! when it is 3.

use super::super::survey::{Format, Survey, SurveyTime};
use super::{PositionIndex, numbered_lines, set_date, value_or_nan};
use crate::methods::io::ReadError;
use std::path::Path;

/// Find a header column: the first whose normalised name (lower case, spaces removed)
/// equals or starts with one of `names`.
fn find(header: &[String], names: &[&str]) -> Option<usize> {
    for n in names {
        if let Some(i) = header.iter().position(|h| h == n) {
            return Some(i);
        }
    }
    for n in names {
        if let Some(i) = header.iter().position(|h| h.starts_with(n)) {
            return Some(i);
        }
    }
    None
}

fn norm(h: &str) -> String {
    h.trim()
        .to_ascii_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// Parse a Syscal CSV export.
pub fn parse_csv(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut it = lines.iter().filter(|(_, l)| !l.trim().is_empty());
    let (hno, header_line) = it
        .next()
        .ok_or_else(|| ReadError::malformed(path, 1, "a CSV header row", ""))?;
    let sep = if header_line.contains(',') {
        ','
    } else if header_line.contains(';') {
        ';'
    } else {
        '\t'
    };
    let header: Vec<String> = header_line.split(sep).map(norm).collect();
    let pos_cols = |axis: &str| -> Option<[usize; 4]> {
        let mut out = [0; 4];
        for (k, e) in ["a", "b", "m", "n"].iter().enumerate() {
            out[k] = find(&header, &[&format!("{axis}{e}(m)"), &format!("{axis}{e}")])?;
        }
        Some(out)
    };
    let xcols = if let Some(c) = (|| -> Option<[usize; 4]> {
        Some([
            find(&header, &["spa.1"])?,
            find(&header, &["spa.2"])?,
            find(&header, &["spa.3"])?,
            find(&header, &["spa.4"])?,
        ])
    })() {
        c
    } else {
        pos_cols("x").ok_or_else(|| {
            ReadError::malformed(
                path,
                *hno,
                "Syscal electrode columns Spa.1–Spa.4 or xA (m)…xN (m)",
                header_line,
            )
        })?
    };
    let ycols = pos_cols("y");
    let zcols = pos_cols("z");
    let vp = find(&header, &["vp", "vmn(mv)"]);
    let inn = find(&header, &["in", "iab(ma)"]);
    let rho = find(&header, &["rho", "rho(ohm.m)"]);
    let dev = find(&header, &["dev.", "dev.rho(%)"]);
    let m = header.iter().position(|h| h == "m" || h == "m(mv/v)");
    let k = find(&header, &["coef.k(m)"]);
    let date = find(&header, &["date"]);
    let (Some(vp), Some(inn)) = (vp, inn) else {
        return Err(ReadError::malformed(
            path,
            *hno,
            "Vp (mV) and In (mA) columns",
            header_line,
        ));
    };
    let mut s = Survey::empty(Format::SyscalCsv);
    let mut pos: Vec<[[f64; 3]; 4]> = Vec::new();
    let (mut r, mut u, mut i_a, mut rh, mut er, mut ip, mut kk) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut first_date: Option<String> = None;
    for (no, l) in it {
        let f: Vec<&str> = l.split(sep).collect();
        let num = |c: usize, what: &str| -> Result<f64, ReadError> {
            let tok = f.get(c).copied().unwrap_or("");
            value_or_nan(tok).ok_or_else(|| ReadError::malformed(path, *no, what, tok))
        };
        let mut p = [[0.0; 3]; 4];
        for e in 0..4 {
            p[e][0] = num(xcols[e], "an electrode position in m")?;
            if let Some(y) = ycols {
                p[e][1] = num(y[e], "an electrode y position in m")?;
            }
            if let Some(z) = zcols {
                p[e][2] = num(z[e], "an electrode z position in m")?;
            }
            if p[e].iter().any(|v| v.is_nan()) {
                return Err(ReadError::malformed(path, *no, "electrode positions", l));
            }
        }
        pos.push(p);
        let v = num(vp, "Vp in mV")?;
        let c = num(inn, "In in mA")?;
        r.push(if c != 0.0 { v / c } else { f64::NAN });
        u.push(v * 1e-3);
        i_a.push(c * 1e-3);
        if let Some(c) = rho {
            rh.push(num(c, "Rho in Ω·m")?);
        }
        if let Some(c) = dev {
            er.push(num(c, "Dev. in %")? * 0.01);
        }
        if let Some(c) = m {
            ip.push(num(c, "M in mV/V")?);
        }
        if let Some(c) = k {
            kk.push(num(c, "k in m")?);
        }
        if first_date.is_none()
            && let Some(c) = date
        {
            first_date = f.get(c).map(|t| t.trim().to_string());
        }
    }
    let (quadrupoles, electrodes) = PositionIndex::quadrupoles(&pos);
    s.quadrupoles = quadrupoles;
    if pos
        .iter()
        .flat_map(|p| p.iter())
        .any(|p| super::is_remote(p[0]))
    {
        s.notes
            .push("positions beyond ±9999 m read as remote (pole) electrodes".into());
    }
    s.electrodes = electrodes;
    s.notes.push("electrodes numbered by their positions along the line (the export gives positions, not numbers)".into());
    s.r_ohm = Some(r);
    s.u_v = Some(u);
    s.i_a = Some(i_a);
    if rho.is_some() {
        s.rhoa_ohm_m = Some(rh);
    }
    if dev.is_some() {
        s.err = Some(er);
        s.notes
            .push("err = Dev./100 (the instrument's stacking deviation, %)".into());
    }
    if m.is_some() {
        s.ip = Some(ip);
        s.ip_unit = Some("mV/V".into());
    }
    if k.is_some() {
        s.k_m = Some(kk);
    }
    if let Some(d) = first_date {
        let mut parts = d.split_whitespace();
        let day = parts.next().unwrap_or("");
        let tod = parts.next().map(|t| t.to_string());
        set_date(&mut s, day, tod, "Date column of the first row");
    }
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

const HEADER_LEN: usize = 5 + 1024;

fn record_len(more: i16) -> Option<usize> {
    match more {
        0 | 1 => Some(280),
        2 => Some(296),
        3 => Some(304),
        _ => None,
    }
}

/// The binary signature: version word 0x80000002 or 0x80000003 and a first record whose
/// `more_t_mesure` gives a record length that tiles the rest of the file.
pub fn looks_like_bin(bytes: &[u8]) -> bool {
    if bytes.len() < HEADER_LEN + 16 {
        return false;
    }
    let version = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    if !(0x8000_0002..=0x8000_0003).contains(&version) {
        return false;
    }
    let more = i16::from_le_bytes([bytes[HEADER_LEN + 2], bytes[HEADER_LEN + 3]]);
    record_len(more).is_some_and(|n| (bytes.len() - HEADER_LEN).is_multiple_of(n))
}

fn f32_at(b: &[u8], off: usize) -> f64 {
    b.get(off..off + 4)
        .map(|s| f32::from_le_bytes([s[0], s[1], s[2], s[3]]) as f64)
        .unwrap_or(f64::NAN)
}

/// Days since 1899-12-30 (OLE automation date) to a calendar date and time of day
/// (proleptic Gregorian; Fliegel & Van Flandern 1968 day-number algorithm).
fn ole_date(days: f64) -> Option<SurveyTime> {
    if !days.is_finite() || !(0.0..100_000.0).contains(&days) {
        return None;
    }
    let whole = days.floor();
    let jdn = whole as i64 + 2_415_019; // Julian day number of 1899-12-30 is 2415019
    let l = jdn + 68569;
    let n = 4 * l / 146_097;
    let l = l - (146_097 * n + 3) / 4;
    let i = 4000 * (l + 1) / 1_461_001;
    let l = l - 1461 * i / 4 + 31;
    let j = 80 * l / 2447;
    let day = l - 2447 * j / 80;
    let l = j / 11;
    let month = j + 2 - 12 * l;
    let year = 100 * (n - 49) + i + l;
    let secs = ((days - whole) * 86_400.0).round() as i64;
    Some(SurveyTime {
        year: year as i32,
        month: month as u32,
        day: day as u32,
        time_of_day: Some(format!(
            "{:02}:{:02}:{:02}",
            secs / 3600,
            (secs / 60) % 60,
            secs % 60
        )),
        source: "Syscal binary record date".into(),
    })
}

/// Parse a Syscal binary file.
pub fn parse_bin(path: &Path, bytes: &[u8]) -> Result<Survey, ReadError> {
    let err = |off: usize, expected: &str, found: String| {
        ReadError::malformed(path, 0, expected, format!("{found} at byte {off}"))
    };
    if bytes.len() < HEADER_LEN {
        return Err(err(
            0,
            "a Syscal binary header (1029 bytes)",
            format!("{} bytes", bytes.len()),
        ));
    }
    let version = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    if !(0x8000_0002..=0x8000_0003).contains(&version) {
        return Err(err(
            0,
            "Syscal version word 0x80000002 or 0x80000003",
            format!("{version:#x}"),
        ));
    }
    let comment: String = bytes[5..HEADER_LEN]
        .iter()
        .take_while(|b| **b != 0)
        .map(|b| *b as char)
        .collect();
    let mut s = Survey::empty(Format::SyscalBin);
    if !comment.trim().is_empty() {
        s.notes.push(format!("comment: {}", comment.trim()));
    }
    let mut off = HEADER_LEN;
    let mut pos: Vec<[[f64; 3]; 4]> = Vec::new();
    let (mut r, mut u, mut i_a, mut rh, mut er, mut ip) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    while off < bytes.len() {
        if bytes.len() - off < 16 {
            return Err(err(
                off,
                "a complete record",
                format!("{} trailing bytes", bytes.len() - off),
            ));
        }
        let more = i16::from_le_bytes([bytes[off + 2], bytes[off + 3]]);
        let len =
            record_len(more).ok_or_else(|| err(off + 2, "more_t_mesure 0–3", more.to_string()))?;
        let rec = bytes.get(off..off + len).ok_or_else(|| {
            err(
                off,
                &format!("a {len}-byte record"),
                format!("{} bytes", bytes.len() - off),
            )
        })?;
        let cp = i16::from_le_bytes([rec[12], rec[13]]);
        if cp == 0 {
            return Err(err(
                off + 12,
                "positions in metres (type_cp_xyz ≠ 0)",
                "Syscal KID record".into(),
            ));
        }
        let mut p = [[0.0; 3]; 4];
        for e in 0..4 {
            for ax in 0..3 {
                p[e][ax] = f32_at(rec, 16 + 4 * (ax * 4 + e));
            }
        }
        if p.iter().flatten().any(|v| !v.is_finite()) {
            return Err(err(
                off + 16,
                "finite electrode positions",
                "a non-finite value".into(),
            ));
        }
        pos.push(p);
        let vp = f32_at(rec, 68);
        let inn = f32_at(rec, 72);
        r.push(if inn != 0.0 { vp / inn } else { f64::NAN });
        u.push(vp * 1e-3);
        i_a.push(inn * 1e-3);
        rh.push(f32_at(rec, 76));
        ip.push(f32_at(rec, 80));
        er.push(f32_at(rec, 84) * 0.01);
        if more == 3 && s.survey_time.is_none() {
            let d = rec
                .get(296..304)
                .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .unwrap_or(f64::NAN);
            s.survey_time = ole_date(d);
        }
        off += len;
    }
    let (quadrupoles, electrodes) = PositionIndex::quadrupoles(&pos);
    s.quadrupoles = quadrupoles;
    s.electrodes = electrodes;
    s.r_ohm = Some(r);
    s.u_v = Some(u);
    s.i_a = Some(i_a);
    s.rhoa_ohm_m = Some(rh);
    s.err = Some(er);
    s.ip = Some(ip);
    s.ip_unit = Some("mV/V".into());
    s.notes
        .push("err = dev/100 (the instrument's stacking deviation, %)".into());
    s.valid = vec![true; s.quadrupoles.len()];
    let _ = numbered_lines;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ole_dates() {
        // 44775.43 days after 1899-12-30 is 2022-08-02 10:19 (the export's own Date column).
        let t = ole_date(44775.430069444).unwrap();
        assert_eq!((t.year, t.month, t.day), (2022, 8, 2));
        assert_eq!(t.time_of_day.as_deref(), Some("10:19:18"));
        let t = ole_date(1.0).unwrap();
        assert_eq!((t.year, t.month, t.day), (1899, 12, 31));
    }
}
