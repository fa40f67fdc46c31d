//! Electra `.ele`: `#`-commented blocks `# Total enabled electrodes` N, `# X Y Z` rows,
//! `# Total enabled measurements` M, a header `# Meas. A B M N I(AB) V(AB) V(MN) K/(2pi) rhoa …`,
//! a units row (`[mApp]`, `[mVpp]`, `[ohm m]`), and M tab-separated rows. R = V(MN)/I(AB).

use super::super::survey::{Electrode, Format, Quadrupole, Survey};
use super::{numbered_lines, parse_index};
use crate::methods::io::{ReadError, fields, parse_f64};
use std::path::Path;

/// Parse an Electra text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut s = Survey::empty(Format::Electra);
    let find = |key: &str| {
        lines
            .iter()
            .position(|(_, l)| l.trim_start().starts_with(key))
    };
    let ke = find("# Total enabled electrodes")
        .ok_or_else(|| ReadError::format(path, "no '# Total enabled electrodes' line"))?;
    let (no, l) = *lines.get(ke + 1).ok_or_else(|| {
        ReadError::malformed(path, lines.len(), "the electrode count", "end of file")
    })?;
    let n_el = parse_index(l.trim())
        .filter(|n| *n >= 0)
        .ok_or_else(|| ReadError::malformed(path, no, "the electrode count", l))?
        as usize;
    let mut k = ke + 2;
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
    let km = find("# Total enabled measurements")
        .ok_or_else(|| ReadError::format(path, "no '# Total enabled measurements' line"))?;
    let (no, l) = *lines.get(km + 1).ok_or_else(|| {
        ReadError::malformed(path, lines.len(), "the measurement count", "end of file")
    })?;
    let n_meas = parse_index(l.trim())
        .filter(|n| *n >= 0)
        .ok_or_else(|| ReadError::malformed(path, no, "the measurement count", l))?
        as usize;
    let kh = find("# Meas.").ok_or_else(|| ReadError::format(path, "no '# Meas.' header row"))?;
    let (hno, hl) = lines[kh];
    let head: Vec<&str> = hl
        .trim_start_matches('#')
        .split('\t')
        .map(str::trim)
        .collect();
    let col = |n: &str| head.iter().position(|h| *h == n);
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
    let (mut r, mut u, mut i_a, mut rho) = (vec![], vec![], vec![], vec![]);
    for &(no, l) in lines.iter().skip(kh + 1) {
        if s.quadrupoles.len() == n_meas {
            break;
        }
        if l.trim_start().starts_with('#') || l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').map(str::trim).collect();
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
    if s.quadrupoles.len() != n_meas {
        return Err(ReadError::malformed(
            path,
            lines.len(),
            format!("{n_meas} measurement rows"),
            format!("{} rows", s.quadrupoles.len()),
        ));
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
