//! Lippmann 4-Point Light `.tx0` (GeoTest): `*`-prefixed header with
//! `* Electrode [ k] x y z (m) = x y z` rows, then `* Data ****` and a header row
//! `* num A B M N I U dU U90 dU90 rho phi f …` with a units row; I in mA, U in mV,
//! dU in %, rho in Ω·m, phi in mrad. Rows with '-' in I or U carry no value and are left out.

use super::super::survey::{Electrode, Format, Quadrupole, Survey};
use super::{numbered_lines, parse_index, set_date};
use crate::methods::io::{ReadError, fields, parse_f64, year_first_date as io_year_first};
use std::path::Path;

/// Parse a Lippmann `.tx0` text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let mut s = Survey::empty(Format::Lippmann);
    let mut data_head = None;
    for (k, &(no, l)) in lines.iter().enumerate() {
        if let Some(rest) = l.strip_prefix("* Electrode [") {
            let Some((_, vals)) = rest.split_once('=') else {
                return Err(ReadError::malformed(
                    path,
                    no,
                    "'* Electrode [k] x y z (m) = x y z'",
                    l,
                ));
            };
            let v: Vec<f64> = fields(vals).iter().filter_map(|t| parse_f64(t)).collect();
            if v.len() != 3 {
                return Err(ReadError::malformed(
                    path,
                    no,
                    "three coordinates after '='",
                    l,
                ));
            }
            s.electrodes.push(Electrode {
                x_m: v[0],
                y_m: v[1],
                z_m: v[2],
                label: None,
            });
        } else if l.starts_with("* Data *") {
            data_head = Some(k + 1);
            break;
        } else if let Some(name) = l.strip_prefix("* Profile name =")
            && let Some((y, m, d)) = io_year_first(name.trim())
        {
            set_date(
                &mut s,
                &format!("{y:04}-{m:02}-{d:02}"),
                None,
                "profile name (year-first)",
            );
        }
    }
    let hk = data_head.ok_or_else(|| ReadError::format(path, "no '* Data ****' section"))?;
    let (hno, hl) = *lines.get(hk).ok_or_else(|| {
        ReadError::malformed(path, lines.len(), "the data header row", "end of file")
    })?;
    let head: Vec<&str> = fields(hl.trim_start_matches('*'));
    let col = |n: &str| head.iter().position(|h| *h == n);
    let (Some(ca), Some(cb), Some(cm), Some(cn), Some(ci), Some(cu)) =
        (col("A"), col("B"), col("M"), col("N"), col("I"), col("U"))
    else {
        return Err(ReadError::malformed(
            path,
            hno,
            "data columns A B M N I U",
            hl,
        ));
    };
    let (cdu, crho, cphi) = (col("dU"), col("rho"), col("phi"));
    let n_el = s.electrodes.len() as i64;
    let (mut r, mut u, mut i_a, mut er, mut rho, mut phi) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut dropped = 0;
    for &(no, l) in lines.iter().skip(hk + 2) {
        if l.trim().is_empty() || l.trim_start().starts_with('*') {
            continue;
        }
        let f = fields(l);
        let e: Option<Vec<i64>> = [ca, cb, cm, cn]
            .iter()
            .map(|c| f.get(*c).and_then(|t| parse_index(t)))
            .collect();
        let Some(e) = e else {
            return Err(ReadError::malformed(
                path,
                no,
                "electrode numbers in columns A B M N",
                l,
            ));
        };
        let get = |c: usize| f.get(c).and_then(|t| parse_f64(t));
        let (Some(ii), Some(uu)) = (get(ci), get(cu)) else {
            dropped += 1;
            continue;
        };
        let mut q = [None; 4];
        for k in 0..4 {
            q[k] = match e[k] {
                0 => None,
                v if v >= 1 && v <= n_el => Some((v - 1) as usize),
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
        s.quadrupoles.push(Quadrupole {
            a: q[0],
            b: q[1],
            m: q[2],
            n: q[3],
        });
        r.push(if ii != 0.0 { uu / ii } else { f64::NAN });
        u.push(uu * 1e-3);
        i_a.push(ii * 1e-3);
        er.push(cdu.and_then(get).unwrap_or(f64::NAN) * 0.01);
        rho.push(crho.and_then(get).unwrap_or(f64::NAN));
        phi.push(cphi.and_then(get).unwrap_or(f64::NAN));
    }
    if dropped > 0 {
        s.notes
            .push(format!("{dropped} rows without I or U ('-') left out"));
    }
    s.r_ohm = Some(r);
    s.u_v = Some(u);
    s.i_a = Some(i_a);
    if cdu.is_some() {
        s.err = Some(er);
        s.notes.push("err = dU/100".into());
    }
    if crho.is_some() {
        s.rhoa_ohm_m = Some(rho);
    }
    if cphi.is_some() {
        s.ip = Some(phi);
        s.ip_unit = Some("mrad".into());
    }
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}
