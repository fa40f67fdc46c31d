//! Electra `.ele` (MoHo Electra Manager): `#`-commented blocks `# Total enabled electrodes`
//! (or `#Total electrodes`) N, `# X Y Z` rows, optionally `# Total enabled measurements` M, a
//! header `# Meas. [Status] A B M N [GND] I(AB) V(AB) V(MN) … K/(2pi) rhoa|Rhoa …`, a units
//! row (`[mApp]`, `[mVpp]`, `[ohm m]`), and the tab-separated rows. Electra Manager 4
//! ("Default" export) writes the keys without the space after `#` and a `Status` column:
//! `E` enabled, `D` disabled by the operator, `N` not measured (its values are `-`). Only
//! `E` rows are data (as in ResIPy's `electraParser`); the others are counted in a note.
//! R = V(MN)/I(AB).

use super::super::survey::{Electrode, Format, Quadrupole, Survey};
use super::{numbered_lines, parse_index};
use crate::methods::io::{ReadError, fields, parse_f64};
use std::path::Path;

/// A header key without its `#`, spaces and tabs ("# Total enabled electrodes" and
/// "#Total enabled electrodes" are one key).
fn key(l: &str) -> String {
    l.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Whether a text has the Electra blocks (both key spellings).
pub fn looks_like(text: &str) -> bool {
    let mut electrodes = false;
    let mut meas = false;
    // Only comment lines can be keys (no copy of the data rows).
    for l in text.lines().filter(|l| l.trim_start().starts_with('#')) {
        let k = key(l);
        electrodes |= k.starts_with("#Totalenabledelectrodes") || k == "#Totalelectrodes";
        meas |= k.starts_with("#Meas.");
    }
    electrodes && meas
}

/// Parse an Electra text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut s = Survey::empty(Format::Electra);
    let find = |pred: &dyn Fn(&str) -> bool| lines.iter().position(|(_, l)| pred(&key(l)));
    let ke = find(&|k| k.starts_with("#Totalenabledelectrodes"))
        .or_else(|| find(&|k| k == "#Totalelectrodes"))
        .ok_or_else(|| ReadError::format(path, "no '# Total enabled electrodes' line"))?;
    let (no, l) = *lines.get(ke + 1).ok_or_else(|| {
        ReadError::malformed(path, lines.len(), "the electrode count", "end of file")
    })?;
    let n_el = parse_index(l.trim())
        .filter(|n| (0..=1_000_000).contains(n))
        .ok_or_else(|| ReadError::malformed(path, no, "the electrode count", l))?
        as usize;
    // The rows follow the '# X Y Z' header (Electra Manager 4 puts other blocks between the
    // count and the header).
    let kx = find(&|k| k.starts_with("#XYZ")).unwrap_or(ke + 1);
    let mut k = kx + 1;
    while s.electrodes.len() < n_el {
        let (no, l) = *lines.get(k).ok_or_else(|| {
            ReadError::malformed(
                path,
                lines.len(),
                format!("{n_el} electrode rows"),
                "end of file",
            )
        })?;
        k += 1;
        if l.trim_start().starts_with('#') || l.trim().is_empty() {
            continue;
        }
        let v: Option<Vec<f64>> = fields(l).iter().map(|t| parse_f64(t)).collect();
        let Some(v) = v.filter(|v| v.len() >= 3) else {
            return Err(ReadError::malformed(
                path,
                no,
                "an electrode row 'X Y Z'",
                l,
            ));
        };
        s.electrodes.push(Electrode {
            x_m: v[0],
            y_m: v[1],
            z_m: v[2],
            label: None,
        });
    }
    let n_meas = match find(&|k| k.starts_with("#Totalenabledmeasurements")) {
        Some(km) => {
            let (no, l) = *lines.get(km + 1).ok_or_else(|| {
                ReadError::malformed(path, lines.len(), "the measurement count", "end of file")
            })?;
            Some(
                parse_index(l.trim())
                    .filter(|n| (0..=100_000_000).contains(n))
                    .ok_or_else(|| ReadError::malformed(path, no, "the measurement count", l))?
                    as usize,
            )
        }
        None => None,
    };
    let kh = find(&|k| k.starts_with("#Meas."))
        .ok_or_else(|| ReadError::format(path, "no '# Meas.' header row"))?;
    let (hno, hl) = lines[kh];
    let head: Vec<&str> = hl
        .trim_start()
        .trim_start_matches('#')
        .split('\t')
        .map(str::trim)
        .collect();
    let col = |n: &str| head.iter().position(|h| h.eq_ignore_ascii_case(n));
    let (Some(ca), Some(cb), Some(cm), Some(cn), Some(ci), Some(cv)) = (
        col("A"),
        col("B"),
        col("M"),
        col("N"),
        col("I(AB)"),
        col("V(MN)"),
    ) else {
        return Err(ReadError::malformed(
            path,
            hno,
            "columns A B M N I(AB) V(MN)",
            hl,
        ));
    };
    let crho = col("rhoa");
    let cstatus = col("Status");
    let (mut r, mut u, mut i_a, mut rho) = (vec![], vec![], vec![], vec![]);
    let (mut disabled, mut not_measured, mut other) = (vec![], vec![], vec![]);
    for &(no, l) in lines.iter().skip(kh + 1) {
        if n_meas.is_some_and(|m| s.quadrupoles.len() == m) {
            break;
        }
        if l.trim_start().starts_with('#') || l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').map(str::trim).collect();
        if let Some(c) = cstatus {
            match f.get(c).copied().unwrap_or("") {
                "E" | "e" => {}
                "D" | "d" => {
                    disabled.push(no);
                    continue;
                }
                "N" | "n" => {
                    not_measured.push(no);
                    continue;
                }
                _ => {
                    other.push(no);
                    continue;
                }
            }
        }
        let mut q = [None; 4];
        for (k, c) in [ca, cb, cm, cn].iter().enumerate() {
            let e = f
                .get(*c)
                .and_then(|t| parse_index(t))
                .ok_or_else(|| ReadError::malformed(path, no, "electrode numbers", l))?;
            q[k] = match e {
                0 => None,
                v if v >= 1 && (v as usize) <= n_el => Some(v as usize - 1),
                _ => {
                    return Err(ReadError::malformed(
                        path,
                        no,
                        format!("electrode numbers 1..{n_el}"),
                        l,
                    ));
                }
            };
        }
        let num = |c: usize, what: &str| {
            f.get(c)
                .and_then(|t| parse_f64(t))
                .ok_or_else(|| ReadError::malformed(path, no, what, l))
        };
        let (ii, vv) = (num(ci, "I(AB) in mA")?, num(cv, "V(MN) in mV")?);
        s.quadrupoles.push(Quadrupole {
            a: q[0],
            b: q[1],
            m: q[2],
            n: q[3],
        });
        r.push(if ii != 0.0 { vv / ii } else { f64::NAN });
        u.push(vv * 1e-3);
        i_a.push(ii * 1e-3);
        rho.push(
            crho.and_then(|c| f.get(c).and_then(|t| parse_f64(t)))
                .unwrap_or(f64::NAN),
        );
    }
    if let Some(m) = n_meas.filter(|m| s.quadrupoles.len() != *m) {
        return Err(ReadError::malformed(
            path,
            lines.len(),
            format!("{m} measurement rows"),
            format!("{} rows", s.quadrupoles.len()),
        ));
    }
    for (rows, what) in [
        (&disabled, "disabled in the instrument (status D)"),
        (&not_measured, "not measured (status N)"),
        (&other, "with a status other than E, D or N"),
    ] {
        if !rows.is_empty() {
            s.notes.push(format!(
                "{} row(s) {what} left out: line(s) {}",
                rows.len(),
                rows.iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    s.r_ohm = Some(r);
    s.u_v = Some(u);
    s.i_a = Some(i_a);
    if crho.is_some() {
        s.rhoa_ohm_m = Some(rho);
    }
    s.notes
        .push("I and V are peak-to-peak (mApp, mVpp); R = V(MN)/I(AB)".into());
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

#[cfg(test)]
mod tests {
    //! The Electra Manager 4 layout on a file written to its rules; R = V(MN)/I(AB) of the rows.
    use super::*;

    const MANAGER4: &str = "Default\n#Created by Electra Manager ver.4.0.0\n\
#Total electrodes\n4\n#Total enabled electrodes\n4\n#Coordinate reference\nrelative\n\
#X\tY\tZ\n0.00\t0.00\t0.00\n2.00\t0.00\t0.00\n4.00\t0.00\t0.00\n6.00\t0.00\t0.00\n\
#Total remote electrode\n0\n#Xr\tYr\tZr\nNo data\n#Total expected\n3\n\
#Meas.\tStatus\tA\tB\tM\tN\tGND\tI(AB)\tV(AB)\tV(MN)\tK/(2pi)\tRhoa\n\
#[#]\t[E/D/N]\t[#]\t[#]\t[#]\t[#]\t[#]\t[mApp]\t[Vpp]\t[mVpp]\t-\t[ohm m]\n\
1\tE\t1\t4\t2\t3\t3\t50.00\t80.0\t250.0\t2.00\t62.83\n\
2\tN\t1\t4\t2\t3\t3\t-\t-\t-\t2.00\t-\n\
3\tD\t1\t3\t2\t4\t3\t40.00\t80.0\t100.0\t2.00\t31.4\n";

    #[test]
    fn manager4_keys_without_spaces_and_status_rows_are_read() {
        assert!(looks_like(MANAGER4));
        let s = parse(Path::new("m4.ele"), MANAGER4).unwrap();
        assert_eq!((s.n_electrodes(), s.n_data()), (4, 1));
        assert_eq!(s.electrodes[3].x_m, 6.0);
        assert!((s.r_ohm.as_ref().unwrap()[0] - 5.0).abs() < 1e-12);
        assert_eq!(s.rhoa_ohm_m, Some(vec![62.83]));
        let notes = s.notes.join("\n");
        assert!(
            notes.contains("1 row(s) not measured (status N) left out: line(s) 23"),
            "{notes}"
        );
        assert!(
            notes.contains("disabled in the instrument (status D) left out: line(s) 24"),
            "{notes}"
        );
    }

    #[test]
    fn a_row_with_a_missing_value_names_line_and_column() {
        let bad = MANAGER4.replace("1\tE\t1\t4\t2\t3\t3\t50.00", "1\tE\t1\t4\t2\t3\t3\t-");
        let e = parse(Path::new("m4.ele"), &bad).unwrap_err().to_string();
        assert!(
            e.starts_with("m4.ele, line 22: expected I(AB) in mA"),
            "{e}"
        );
    }
}
