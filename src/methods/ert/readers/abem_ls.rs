//! ABEM Terrameter LS / LS2 ASCII data export (the instrument's "Export data" text file,
//! usually `.txt`; described in pyGIMLi's `importAsciiColumns` docstring):
//! ```text
//! [lead-in lines: file name, project, …]
//! Time  MeasID  DPID  Channel  A(x)  A(y)  A(z)  B(x) … N(z)  F(x) F(y) F(z)  Note  I(mA)  Uout(V)  U(V)  SP(V)  R(O)  Var(%)  Rhoa  Cycles …
//! 2016-09-14 07:01:56  73  7  1  8  1  1  20  1  1 …
//! [--- footer]
//! ```
//! Tab-separated; one header line naming the columns, then one row per measurement (one per
//! receiver channel, so an injection may span several rows). Columns are found by name, since
//! firmware versions differ: coordinates are `A(x)`, `A(y)`, `A(z)` (or `A(xm)` …, and some
//! exports give only x, or x and y), the resistance is `R(O)` (the Ω sign lost to Latin-1),
//! `R(Ohm)` or `R(Ω)`, `I(mA)` in mA, `U(V)` in V, `Var(%)` in %, `Rhoa` in Ω·m, and the
//! chargeability `IP sum window…`. Empty fields are allowed (Note, F(·)). A coordinate that is
//! not finite or has |value| ≥ 1e37 marks a remote (pole) electrode.

use super::super::survey::{Format, Survey};
use super::{PositionIndex, is_remote, numbered_lines, set_date, value_or_nan};
use crate::methods::io::{ReadError, parse_f64};
use std::path::Path;

/// A header name normalised for matching: lower case, without quotes or white space.
fn norm(tok: &str) -> String {
    tok.trim()
        .trim_matches('"')
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The column of electrode `e` (`a`, `b`, `m`, `n`) along `axis` (`x`, `y`, `z`):
/// `A(x)` or `A(xm)`.
fn coord_col(header: &[String], e: char, axis: char) -> Option<usize> {
    let plain = format!("{e}({axis})");
    let metres = format!("{e}({axis}m)");
    header.iter().position(|h| *h == plain || *h == metres)
}

/// Whether a line is the column header of an LS export: split on tabs, it names the
/// `A(x)` and `M(x)` columns (no other format this studio reads has these tokens).
pub fn is_header(line: &str) -> bool {
    if !line.contains('\t') {
        return false;
    }
    let h: Vec<String> = line.split('\t').map(norm).collect();
    coord_col(&h, 'a', 'x').is_some() && coord_col(&h, 'm', 'x').is_some()
}

/// Whether one of the lines is an LS export header (see [`is_header`]).
pub fn looks_like(lines: &[&str]) -> bool {
    lines.iter().any(|l| is_header(l))
}

/// Whether a normalised header names the transfer resistance (`R(O)`, `R(Ohm)`, `R(Ω)`).
fn is_r_column(h: &str) -> bool {
    let Some(unit) = h.strip_prefix("r(").and_then(|t| t.strip_suffix(')')) else {
        return false;
    };
    // "î©" is a UTF-8 Ω read as Latin-1; U+FFFD a lost byte.
    matches!(
        unit,
        "o" | "ohm" | "ohms" | "ω" | "î©" | "\u{fffd}" | "?" | "0"
    )
}

/// A window column of an IP export other than the sum (`IP window 3`, `M1`, …).
fn is_ip_window(h: &str) -> bool {
    if h.starts_with("ipsumwindow") {
        return false;
    }
    let digits = |t: &str| {
        let d: &str = t.split('(').next().unwrap_or("");
        !d.is_empty() && d.chars().all(|c| c.is_ascii_digit())
    };
    h.starts_with("ip") || h.strip_prefix('m').is_some_and(digits)
}

/// The unit in the last parentheses of a header name (`IP sum window (mV/V)` → `mV/V`).
fn unit_of(name: &str) -> Option<String> {
    let open = name.rfind('(')?;
    let close = name[open..].find(')')? + open;
    let u = name[open + 1..close].trim();
    (!u.is_empty()).then(|| u.to_string())
}

/// A coordinate token: a number (non-finite ones included, they mark a remote electrode);
/// `None` for anything else.
fn coordinate(tok: &str) -> Option<f64> {
    let t = tok.trim();
    if t.is_empty() {
        return None;
    }
    t.parse::<f64>().ok().or_else(|| parse_f64(t))
}

/// A remote (pole) electrode: a coordinate that is not finite or |value| ≥ 1e37 (the
/// instruments' 1e38 code), or the studio-wide ±9999 m convention on x.
fn remote(p: [f64; 3]) -> bool {
    p.iter().any(|v| !v.is_finite() || v.abs() >= 1e37) || is_remote(p[0])
}

/// The columns the reader uses, as indices into the header.
struct Columns {
    /// x, y, z of A, B, M, N (`None` = not in the export).
    pos: [[Option<usize>; 3]; 4],
    r: Option<usize>,
    i: Option<(usize, f64)>,
    u: Option<(usize, f64)>,
    var: Option<usize>,
    rhoa: Option<usize>,
    ip: Option<usize>,
    time: Option<usize>,
    date: Option<usize>,
}

impl Columns {
    fn find(h: &[String]) -> Self {
        let col = |names: &[&str]| h.iter().position(|x| names.contains(&x.as_str()));
        let mut pos = [[None; 3]; 4];
        for (e, name) in ['a', 'b', 'm', 'n'].into_iter().enumerate() {
            for (k, axis) in ['x', 'y', 'z'].into_iter().enumerate() {
                pos[e][k] = coord_col(h, name, axis);
            }
        }
        Columns {
            pos,
            r: h.iter().position(|x| is_r_column(x)),
            i: col(&["i(ma)"])
                .map(|c| (c, 1e-3))
                .or_else(|| col(&["i(a)"]).map(|c| (c, 1.0))),
            u: col(&["u(v)"])
                .map(|c| (c, 1.0))
                .or_else(|| col(&["u(mv)"]).map(|c| (c, 1e-3))),
            var: col(&["var(%)"]),
            rhoa: h
                .iter()
                .position(|x| x == "rhoa" || x.starts_with("rhoa(") || x.starts_with("rho-a")),
            ip: h.iter().position(|x| x.starts_with("ipsumwindow")),
            time: col(&["time"]),
            date: col(&["date"]),
        }
    }
}

/// Parse an ABEM Terrameter LS export text.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let Some(hpos) = lines.iter().position(|(_, l)| is_header(l)) else {
        let (no, first) = lines
            .iter()
            .find(|(_, l)| !l.trim().is_empty())
            .copied()
            .unwrap_or((1, ""));
        return Err(ReadError::malformed(
            path,
            no,
            "a tab-separated column header naming A(x) and M(x) (ABEM Terrameter LS export)",
            first,
        ));
    };
    let (hno, header_line) = lines[hpos];
    let names: Vec<&str> = header_line.split('\t').map(str::trim).collect();
    let h: Vec<String> = names.iter().map(|n| norm(n)).collect();
    let cols = Columns::find(&h);
    let have_u_i = cols.u.is_some() && cols.i.is_some();
    if cols.r.is_none() && !have_u_i {
        return Err(ReadError::malformed(
            path,
            hno,
            "a resistance column R(O) / R(Ohm) / R(Ω), or both U(V) and I(mA)",
            header_line,
        ));
    }
    let name = |c: usize| names.get(c).copied().unwrap_or("?");

    let mut s = Survey::empty(Format::AbemLs);
    if hpos > 0 {
        s.notes.push(format!(
            "{} lead-in line(s) before the column header on line {hno} skipped",
            lines[..hpos]
                .iter()
                .filter(|(_, l)| !l.trim().is_empty())
                .count()
        ));
    }
    let mut pos: Vec<[[f64; 3]; 4]> = Vec::new();
    let (mut r, mut u, mut cur, mut var, mut rhoa, mut ip) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut first_time: Option<(String, Option<String>)> = None;
    let mut repeated_headers = 0;
    for &(no, l) in &lines[hpos + 1..] {
        if l.trim().is_empty() {
            continue;
        }
        if l.trim_start().starts_with("---") {
            s.notes
                .push(format!("footer from line {no} on ignored ('---' line)"));
            break;
        }
        if is_header(l) {
            repeated_headers += 1;
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        let tok = |c: usize| f.get(c).copied().unwrap_or("");
        let found = |t: &str| {
            if t.trim().is_empty() {
                "an empty field".to_string()
            } else {
                t.to_string()
            }
        };
        let value = |c: usize, what: String| -> Result<f64, ReadError> {
            value_or_nan(tok(c)).ok_or_else(|| ReadError::malformed(path, no, what, tok(c)))
        };
        let mut p = [[0.0; 3]; 4];
        for (e, axes) in cols.pos.iter().enumerate() {
            if axes[0].is_none() {
                // B or N not in the export at all: a remote electrode.
                p[e] = [f64::INFINITY; 3];
                continue;
            }
            for (k, c) in axes.iter().enumerate() {
                if let Some(c) = *c {
                    p[e][k] = coordinate(tok(c)).ok_or_else(|| {
                        ReadError::malformed(path, no, format!("{} in m", name(c)), found(tok(c)))
                    })?;
                }
            }
            if remote(p[e]) {
                p[e] = [f64::INFINITY; 3];
            }
        }
        if remote(p[0]) && remote(p[1]) {
            return Err(ReadError::malformed(
                path,
                no,
                "a current electrode A or B at a finite position (both are remote)",
                l,
            ));
        }
        if remote(p[2]) && remote(p[3]) {
            return Err(ReadError::malformed(
                path,
                no,
                "a potential electrode M or N at a finite position (both are remote)",
                l,
            ));
        }
        pos.push(p);
        if let Some(c) = cols.r {
            r.push(value(c, format!("{} in Ω", name(c)))?);
        }
        if let Some((c, scale)) = cols.i {
            cur.push(value(c, format!("{} (the current)", name(c)))? * scale);
        }
        if let Some((c, scale)) = cols.u {
            u.push(value(c, format!("{} (the voltage)", name(c)))? * scale);
        }
        if let Some(c) = cols.var {
            var.push(value(c, format!("{} in %", name(c)))? * 0.01);
        }
        if let Some(c) = cols.rhoa {
            rhoa.push(value(c, format!("{} in Ω·m", name(c)))?);
        }
        if let Some(c) = cols.ip {
            ip.push(value(c, format!("{} (the chargeability)", name(c)))?);
        }
        if first_time.is_none() {
            let t = cols.time.map(tok).unwrap_or("").trim();
            let mut parts = t.split_whitespace();
            first_time = Some(match cols.date {
                Some(c) => (tok(c).trim().to_string(), Some(t.to_string())),
                None => (
                    parts.next().unwrap_or("").to_string(),
                    parts.next().map(str::to_string),
                ),
            });
        }
    }
    if pos.is_empty() {
        return Err(ReadError::format(
            path,
            format!("the column header on line {hno} is followed by no measurement rows"),
        ));
    }
    if repeated_headers > 0 {
        s.notes.push(format!(
            "{repeated_headers} repeated column header line(s) skipped"
        ));
    }
    if let Some((day, tod)) = first_time {
        let tod = tod.filter(|t| {
            t.contains(':')
                && t.chars()
                    .all(|c| c.is_ascii_digit() || c == ':' || c == '.')
        });
        let source = if cols.date.is_some() {
            "Date column of the first row"
        } else {
            "Time column of the first row"
        };
        set_date(&mut s, &day, tod, source);
    }

    let (quadrupoles, electrodes) = PositionIndex::quadrupoles(&pos);
    s.quadrupoles = quadrupoles;
    s.electrodes = electrodes;
    s.notes.push(
        "electrodes are the distinct A/B/M/N positions of the export, numbered by x, then y, then z"
            .into(),
    );
    let n_remote = pos.iter().flatten().filter(|p| remote(**p)).count();
    if n_remote > 0 {
        s.notes.push(format!(
            "{n_remote} electrode position(s) read as remote (pole): not finite, |value| ≥ 1e37, \
             x beyond ±9999 m, or no B/N columns"
        ));
    }
    let missing_axes: Vec<&str> = [("y", 1), ("z", 2)]
        .into_iter()
        .filter(|(_, k)| cols.pos[0][*k].is_none())
        .map(|(a, _)| a)
        .collect();
    if !missing_axes.is_empty() {
        s.notes.push(format!(
            "the export has no {} coordinate columns: set to 0 m",
            missing_axes.join(" or ")
        ));
    }

    let n = pos.len();
    if cols.i.is_some() {
        s.notes.push("I converted from mA to A".into());
        s.i_a = Some(cur);
    }
    if cols.u.is_some() {
        s.u_v = Some(u);
    }
    if cols.r.is_some() {
        if let (Some(uu), Some(ii)) = (&s.u_v, &s.i_a) {
            let off = (0..n)
                .filter(|&k| {
                    let q = uu[k] / ii[k];
                    r[k].is_finite() && q.is_finite() && (r[k] - q).abs() > 1e-3 * r[k].abs()
                })
                .count();
            if off > 0 {
                s.notes.push(format!(
                    "{off} row(s) where R differs from U/I by more than 0.1 %: R kept as written"
                ));
            }
        }
        s.r_ohm = Some(r);
    } else if let (Some(uu), Some(ii)) = (&s.u_v, &s.i_a) {
        s.r_ohm = Some(
            (0..n)
                .map(|k| {
                    if ii[k] != 0.0 {
                        uu[k] / ii[k]
                    } else {
                        f64::NAN
                    }
                })
                .collect(),
        );
        s.notes
            .push("R = U/I (the export has no resistance column)".into());
    }
    if cols.var.is_some() {
        if var.iter().any(|v| v.is_finite() && *v != 0.0) {
            s.err = Some(var);
            s.notes
                .push("err = Var(%)/100 (the stacking variation coefficient)".into());
        } else {
            s.notes
                .push("Var(%) is 0 or empty throughout: no error column".into());
        }
    }
    if cols.rhoa.is_some() {
        s.rhoa_ohm_m = Some(rhoa);
    }
    if let Some(c) = cols.ip {
        s.ip = Some(ip);
        s.ip_unit = unit_of(name(c));
        s.notes.push(match &s.ip_unit {
            Some(unit) => format!("ip = the '{}' column ({unit})", name(c)),
            None => format!(
                "ip = the '{}' column; the export does not name its unit",
                name(c)
            ),
        });
    }
    let windows: Vec<&str> = (0..h.len())
        .filter(|&c| is_ip_window(&h[c]))
        .map(name)
        .collect();
    if !windows.is_empty() {
        s.notes.push(format!(
            "IP window columns ignored (a survey keeps one chargeability per datum): {}",
            windows.join(", ")
        ));
    }
    s.valid = vec![true; n];
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::super::{Instrument, detect, parse_survey, unified};
    use super::*;
    use crate::methods::ert::Quadrupole;
    use proptest::prelude::*;

    const HEADER: &str = "Time\tMeasID\tDPID\tChannel\tA(x)\tA(y)\tA(z)\tB(x)\tB(y)\tB(z)\tM(x)\tM(y)\tM(z)\tN(x)\tN(y)\tN(z)\tF(x)\tF(y)\tF(z)\tNote\tI(mA)\tUout(V)\tU(V)\tSP(V)\tR(O)\tVar(%)\tRhoa\tCycles\tPint\tPext(V)\tT(°C)\tLat\tLong";

    /// A Wenner/dipole-dipole line with electrodes every 4 m (y = z = 1): six rows, the first
    /// the pyGIMLi docstring row, two rows sharing one injection (channels 1 and 2).
    fn fixture() -> String {
        let rows = [
            "2016-09-14 07:01:56\t73\t7\t1\t8\t1\t1\t20\t1\t1\t12\t1\t1\t16\t1\t1\t14\t1\t1\t\t99.8757\t107.892\t0.0920761\t0\t0.921907\t0.196302\t23.17\t1\t12.1679\t12.425\t42.1962\t0\t0",
            "2016-09-14 07:02:10\t74\t7\t1\t0\t1\t1\t12\t1\t1\t4\t1\t1\t8\t1\t1\t\t\t\t\t101.25\t108.1\t0.1187\t0\t1.17235\t0.5\t29.46\t1\t12\t12.4\t42.2\t0\t0",
            "2016-09-14 07:02:25\t75\t7\t1\t4\t1\t1\t16\t1\t1\t8\t1\t1\t12\t1\t1\t\t\t\t\t98.5\t108\t0.0955\t0\t0.969543\t0\t24.37\t1\t12\t12.4\t42.2\t0\t0",
            "2016-09-14 07:02:40\t76\t7\t1\t12\t1\t1\t24\t1\t1\t16\t1\t1\t20\t1\t1\t\t\t\t\t97.1\t107.5\t0.0801\t0\t0.824923\t1.25\t20.73\t1\t12\t12.4\t42.2\t0\t0",
            "2016-09-14 07:03:00\t77\t8\t1\t0\t1\t1\t4\t1\t1\t8\t1\t1\t12\t1\t1\t\t\t\t\t120\t110\t0.0123\t0\t0.1025\t2\t7.73\t1\t12\t12.4\t42.2\t0\t0",
            "2016-09-14 07:03:00\t77\t8\t2\t0\t1\t1\t4\t1\t1\t12\t1\t1\t16\t1\t1\t\t\t\t\t120\t110\t0.0036\t0\t0.03\t3.5\t9.05\t1\t12\t12.4\t42.2\t0\t0",
        ];
        format!("{HEADER}\n{}\n", rows.join("\n"))
    }

    /// The text as the instrument writes it: ISO-8859-1 (° is one byte, 0xB0).
    fn latin1(text: &str) -> Vec<u8> {
        text.chars()
            .map(|c| u8::try_from(u32::from(c)).expect("a Latin-1 character"))
            .collect()
    }

    fn read(text: &str) -> Survey {
        parse_survey(Path::new("line1.txt"), &latin1(text), Instrument::Auto)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn six_row_line_reads_values_electrodes_and_date() {
        let s = read(&fixture());
        assert_eq!(s.format, Format::AbemLs);
        assert!(!s.format_guessed);
        assert_eq!(s.n_data(), 6);
        assert_eq!(s.n_electrodes(), 7);
        let xs: Vec<f64> = s.electrodes.iter().map(|e| e.x_m).collect();
        assert_eq!(xs, vec![0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0]);
        assert!(s.electrodes.iter().all(|e| e.y_m == 1.0 && e.z_m == 1.0));
        // Row 1: A = 8 m, B = 20 m, M = 12 m, N = 16 m.
        assert_eq!(s.quadrupoles[0], Quadrupole::new(2, 5, 3, 4));
        // The two channels of one injection: same A B, different M N.
        assert_eq!(s.quadrupoles[4], Quadrupole::new(0, 1, 2, 3));
        assert_eq!(s.quadrupoles[5], Quadrupole::new(0, 1, 3, 4));
        let r = s.r_ohm.as_ref().unwrap();
        assert_eq!(r[0], 0.921907);
        assert_eq!(r[5], 0.03);
        assert_eq!(s.i_a.as_ref().unwrap()[0], 99.8757 * 1e-3);
        assert_eq!(s.u_v.as_ref().unwrap()[0], 0.0920761);
        let err = s.err.as_ref().unwrap();
        assert_eq!(err[0], 0.196302 * 0.01);
        assert_eq!(err[2], 0.0);
        assert_eq!(err[5], 3.5 * 0.01);
        assert_eq!(s.rhoa_ohm_m.as_ref().unwrap()[0], 23.17);
        // The file's R is U/I to its 6 digits.
        assert!((r[0] - 0.0920761 / 0.0998757).abs() < 1e-6);
        assert!(s.ip.is_none());
        let t = s.survey_time.as_ref().expect("a survey time");
        assert_eq!(t.iso(), "2016-09-14T07:01:56");
        assert_eq!(t.source, "Time column of the first row");
        assert!(s.time_question.is_none());
        assert_eq!(s.valid, vec![true; 6]);
        assert!(
            s.notes.iter().any(|n| n.contains("Var(%)/100")),
            "{:?}",
            s.notes
        );
    }

    #[test]
    fn r_from_u_over_i_when_the_export_has_no_r_column() {
        let text = "Time\tA(x)\tA(y)\tA(z)\tB(x)\tB(y)\tB(z)\tM(x)\tM(y)\tM(z)\tN(x)\tN(y)\tN(z)\tI(mA)\tU(V)\tVar(%)\n\
                    2016-09-14 07:01:56\t8\t0\t0\t20\t0\t0\t12\t0\t0\t16\t0\t0\t99.8757\t0.0920761\t0.2\n\
                    2016-09-14 07:01:58\t0\t0\t0\t12\t0\t0\t4\t0\t0\t8\t0\t0\t0\t0.1\t0.2\n";
        let s = read(text);
        let r = s.r_ohm.as_ref().unwrap();
        assert_eq!(r[0], 0.0920761 / (99.8757 * 1e-3));
        assert!((r[0] - 0.921907).abs() < 1e-6);
        // Zero current: no resistance, not infinity.
        assert!(r[1].is_nan());
        assert!(s.notes.iter().any(|n| n.contains("R = U/I")));
        // Without R and without U or I the header is refused, naming file and header line.
        let e = parse(
            Path::new("nor.txt"),
            "lead-in\nA(x)\tB(x)\tM(x)\tN(x)\tI(mA)\n0\t3\t1\t2\t100\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("nor.txt, line 2: expected a resistance column"),
            "{e}"
        );
    }

    #[test]
    fn resistance_column_spellings() {
        for (r_name, latin) in [("R(Ohm)", false), ("R(Ω)", false), ("R(Ω)", true)] {
            // A UTF-8 Ω in a file whose ° is Latin-1 (invalid UTF-8) arrives as "Î©".
            let mut b = format!("A(x)\tB(x)\tM(x)\tN(x)\t{r_name}\tT(").into_bytes();
            b.extend_from_slice(if latin { b"\xb0" } else { "°".as_bytes() });
            b.extend_from_slice(b"C)\n0\t3\t1\t2\t1.5\t20\n");
            let s = parse_survey(Path::new("r.txt"), &b, Instrument::Auto)
                .unwrap_or_else(|e| panic!("{r_name}: {e}"));
            assert_eq!(s.r_ohm.as_deref(), Some(&[1.5][..]), "{r_name} {latin}");
        }
    }

    #[test]
    fn pole_dipole_rows_have_a_remote_b() {
        let text = "Time\tA(x)\tA(y)\tA(z)\tB(x)\tB(y)\tB(z)\tM(x)\tM(y)\tM(z)\tN(x)\tN(y)\tN(z)\tI(mA)\tU(V)\tR(O)\n\
                    2020-05-01 10:00:00\t0\t0\t0\t1e38\t1e38\t1e38\t2\t0\t0\t4\t0\t0\t100\t0.5\t5\n\
                    2020-05-01 10:00:05\t2\t0\t0\tinf\t0\t0\t4\t0\t0\t6\t0\t0\t100\t0.25\t2.5\n\
                    2020-05-01 10:00:10\t0\t0\t0\t-1e37\t0\t0\t4\t0\t0\t6\t0\t0\t100\t0.2\t2\n";
        let s = read(text);
        assert_eq!(s.n_electrodes(), 4, "{:?}", s.electrodes);
        let xs: Vec<f64> = s.electrodes.iter().map(|e| e.x_m).collect();
        assert_eq!(xs, vec![0.0, 2.0, 4.0, 6.0]);
        let pd = |a, m, n| Quadrupole {
            a: Some(a),
            b: None,
            m: Some(m),
            n: Some(n),
        };
        assert_eq!(s.quadrupoles, vec![pd(0, 1, 2), pd(1, 2, 3), pd(0, 2, 3)]);
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("3 electrode position(s) read as remote"))
        );
        // Both current electrodes remote is not a measurement.
        let e = parse(
            Path::new("pp.txt"),
            "A(x)\tB(x)\tM(x)\tN(x)\tR(O)\n1e38\t1e38\t1\t2\t1\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("pp.txt, line 2: expected a current electrode A or B"),
            "{e}"
        );
    }

    /// Two electrodes less than 1 µm apart in x whose y order is the reverse: both must still
    /// be found (the position index once sorted by value but searched by the rounded key).
    #[test]
    fn sub_micrometre_x_with_reversed_y_is_still_found() {
        let text = "A(x)\tA(y)\tB(x)\tB(y)\tM(x)\tM(y)\tN(x)\tN(y)\tR(O)\n\
                    0.0000001\t5\t0.0000002\t1\t4\t0\t6\t0\t1.25\n";
        let s = read(text);
        let q = s.quadrupoles[0];
        let (a, b) = (q.a.expect("A found"), q.b.expect("B found"));
        assert_eq!((s.electrodes[a].x_m, s.electrodes[a].y_m), (0.0000001, 5.0));
        assert_eq!((s.electrodes[b].x_m, s.electrodes[b].y_m), (0.0000002, 1.0));
    }

    #[test]
    fn exports_with_x_only_or_xm_columns() {
        let text = "Time\tA(x)\tB(x)\tM(x)\tN(x)\tI(mA)\tU(V)\tR(Ohm)\tVar(%)\n\
                    2021-03-02 11:12:13\t0\t7.5\t2.5\t5\t50\t0.1\t2\t1\n\
                    2021-03-02 11:12:20\t2.5\t10\t5\t7.5\t50\t0.05\t1\t0\n";
        let s = read(text);
        assert_eq!(s.n_data(), 2);
        let xs: Vec<f64> = s.electrodes.iter().map(|e| e.x_m).collect();
        assert_eq!(xs, vec![0.0, 2.5, 5.0, 7.5, 10.0]);
        assert!(s.electrodes.iter().all(|e| e.y_m == 0.0 && e.z_m == 0.0));
        assert_eq!(s.quadrupoles[1], Quadrupole::new(1, 4, 2, 3));
        assert_eq!(s.r_ohm.as_deref(), Some(&[2.0, 1.0][..]));
        assert_eq!(s.i_a.as_deref(), Some(&[50.0 * 1e-3, 50.0 * 1e-3][..]));
        assert!(s.notes.iter().any(|n| n.contains("no y or z coordinate")));
        // "(xm)" names, x and z only, columns in another order, an IP sum with its unit.
        let text = "R(O)\tN(xm)\tM(xm)\tB(xm)\tA(xm)\tA(zm)\tB(zm)\tM(zm)\tN(zm)\tIP sum window 1-8 (mV/V)\tM1\n\
                    0.5\t3\t2\t1\t0\t10\t9.5\t9\t8.5\t12.5\t3\n";
        let s = read(text);
        assert_eq!(s.quadrupoles, vec![Quadrupole::new(0, 1, 2, 3)]);
        assert_eq!((s.electrodes[3].x_m, s.electrodes[3].z_m), (3.0, 8.5));
        assert_eq!(s.ip.as_deref(), Some(&[12.5][..]));
        assert_eq!(s.ip_unit.as_deref(), Some("mV/V"));
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("IP window columns ignored") && n.contains("M1"))
        );
    }

    #[test]
    fn malformed_rows_name_file_line_expected_found() {
        let mut text = fixture();
        text = text.replacen("\t12\t1\t1\t16\t1\t1\t14", "\tabc\t1\t1\t16\t1\t1\t14", 1);
        let e = parse_survey(Path::new("line1.txt"), &latin1(&text), Instrument::Auto)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "line1.txt, line 2: expected M(x) in m, found \"abc\"");
        // A cut row: the empty coordinate is named as such.
        let text = format!("{HEADER}\n2016-09-14 07:01:56\t73\t7\t1\t8\t1\n");
        let e = parse(Path::new("cut.txt"), &text).unwrap_err().to_string();
        assert_eq!(
            e,
            "cut.txt, line 2: expected A(z) in m, found \"an empty field\""
        );
        // A non-numeric current after a lead-in: the line number counts the lead-in.
        let text = "Filename: x\n\nA(x)\tB(x)\tM(x)\tN(x)\tI(mA)\tU(V)\n0\t3\t1\t2\t1O0\t0.5\n";
        let e = parse(Path::new("li.txt"), text).unwrap_err().to_string();
        assert_eq!(
            e,
            "li.txt, line 4: expected I(mA) (the current), found \"1O0\""
        );
        // No header at all.
        let e = parse(Path::new("no.txt"), "hello\tworld\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("no.txt, line 1: expected a tab-separated column header"),
            "{e}"
        );
    }

    #[test]
    fn lead_in_footer_and_an_ambiguous_date() {
        let text = format!(
            "Filename: line1\nProject: test\n\n{HEADER}\n{}\n---\nsummary: 1 row\n",
            fixture()
                .lines()
                .nth(1)
                .unwrap()
                .replacen("2016-09-14", "03/04/2016", 1)
        );
        let s = read(&text);
        assert_eq!(s.n_data(), 1);
        assert!(s.survey_time.is_none());
        assert!(
            s.time_question
                .as_deref()
                .unwrap_or("")
                .contains("03/04/2016")
        );
        assert!(s.notes.iter().any(|n| n.contains("2 lead-in line(s)")));
        assert!(s.notes.iter().any(|n| n.starts_with("footer from line 6")));
    }

    /// The other formats' signatures, as small texts, and the staged real files when present.
    #[test]
    fn detection_picks_abem_ls_and_leaves_the_other_formats_alone() {
        let d = detect(Path::new("line1.txt"), &latin1(&fixture())).expect("detected");
        assert_eq!(d.format, Format::AbemLs);
        assert!(!d.guessed);
        // Header after a lead-in, x-only columns.
        let d = detect(
            Path::new("x.txt"),
            b"Filename: a\nA(x)\tB(x)\tM(x)\tN(x)\tR(O)\n0\t3\t1\t2\t1\n",
        )
        .unwrap();
        assert_eq!(d.format, Format::AbemLs);
        // The same tokens separated by spaces or commas are not this format.
        assert_ne!(
            detect(Path::new("x.txt"), b"A(x) B(x) M(x) N(x) R(O)\n0 3 1 2 1\n").map(|d| d.format),
            Some(Format::AbemLs)
        );
        let small: [(&str, &str, Format); 5] = [
            (
                "u.dat",
                "3# Number of electrodes\n# x z\n0 0\n1 0\n2 0\n1# Number of data\n# a b m n rhoa\n1 2 3 1 100\n",
                Format::Unified,
            ),
            (
                "s.csv",
                "El-array,Spa.1,Spa.2,Spa.3,Spa.4,Rho,Dev.,M,Sp,Vp,In\nW,0,3,1,2,1,1,1,1,1,1\n",
                Format::SyscalCsv,
            ),
            ("p.csv", "a,b,m,n,R\n1,4,2,3,0.5\n", Format::PlainCsv),
            (
                "x.srv",
                "4\n1 0 0 0 1\n2 1 0 0 1\n3 2 0 0 1\n4 3 0 0 1\n1\n1 1 4 2 3 0.5 0.01\n",
                Format::E4dSrv,
            ),
            (
                "x.stg",
                "Advanced Geosciences Inc. SuperSting\nType: x Records: 1\nUnit: meter\n",
                Format::Sting,
            ),
        ];
        for (name, text, want) in small {
            let d = detect(Path::new(name), text.as_bytes()).map(|d| d.format);
            assert_eq!(d, Some(want), "{name}");
        }
        let real: [(&str, Format); 21] = [
            ("ert/gimli/gallery.dat", Format::Unified),
            ("ert/gimli/bedrock.dat", Format::Unified),
            ("ert/gimli/modeltank.shm", Format::Unified),
            ("ert/gimli/reciprocal.ohm", Format::Unified),
            ("ert/gimli/schleizTDIP.dat", Format::Unified),
            ("ert/phgx/Bert/fielddataline2.dat", Format::Unified),
            ("ert/phgx/E4D/2021-10-08_1400.ohm", Format::E4dSrv),
            ("ert/phgx/DAS/20171105_1418.Data", Format::Das1),
            ("ert/resipy/dc-2d_protocol.dat", Format::R2Protocol),
            ("ert/resipy/dc-2d_syscal.csv", Format::SyscalCsv),
            ("ert/resipy/parser_syscal-bin.csv", Format::SyscalCsv),
            ("ert/resipy/parser_syscal-bin.bin", Format::SyscalBin),
            ("ert/resipy/parser_ARESII.2dm", Format::AresII),
            ("ert/resipy/parser_DAS-1_2D_DC.data", Format::Das1),
            ("ert/resipy/parser_Lippmann_1.tx0", Format::Lippmann),
            ("ert/resipy/parser_abem-lund-norm.ohm", Format::AbemLund),
            ("ert/resipy/parser_bgs-prime2.tab", Format::BgsPrime),
            ("ert/resipy/parser_electraWenner.ele", Format::Electra),
            ("ert/resipy/parser_ohmpi.csv", Format::OhmPi),
            ("ert/resipy/parser_res2dinv-dd.dat", Format::Res2dinv),
            ("ert/resipy/parser_sting_2D_noIP.stg", Format::Sting),
        ];
        for (rel, want) in real {
            let Some(p) = crate::field_data::data(rel) else {
                continue;
            };
            let bytes = std::fs::read(&p).expect("readable");
            let d = detect(&p, &bytes).map(|d| d.format);
            assert_eq!(d, Some(want), "{rel}");
        }
    }

    #[test]
    fn unified_write_then_read_is_exact() {
        for text in [
            fixture(),
            "A(x)\tB(x)\tM(x)\tN(x)\tI(mA)\tU(V)\tVar(%)\tIP sum window (ms)\n0\t1e38\t1\t2\t10\t0.3\t0.5\t4.25\n1\t1e38\t2\t3\t10\t0.1\t0.7\t5\n"
                .to_string(),
        ] {
            let s = read(&text);
            let back =
                unified::parse(Path::new("roundtrip.dat"), &unified::to_string(&s)).unwrap();
            assert_eq!(back.electrodes.len(), s.electrodes.len());
            for (a, b) in back.electrodes.iter().zip(&s.electrodes) {
                assert_eq!((a.x_m, a.y_m, a.z_m), (b.x_m, b.y_m, b.z_m));
            }
            assert_eq!(back.quadrupoles, s.quadrupoles);
            assert_eq!(back.r_ohm, s.r_ohm);
            assert_eq!(back.u_v, s.u_v);
            assert_eq!(back.i_a, s.i_a);
            assert_eq!(back.err, s.err);
            assert_eq!(back.rhoa_ohm_m, s.rhoa_ohm_m);
            assert_eq!(back.ip, s.ip);
            assert_eq!(back.valid, s.valid);
        }
    }

    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "0",
                "1",
                "-1",
                "2.5",
                "1e38",
                "-1e38",
                "1e37",
                "9999",
                "nan",
                "inf",
                "-inf",
                "",
                " ",
                "x",
                "-",
                "1D2",
                "2016-09-14 07:01:56",
                "03/04/2016",
            ])
            .prop_map(str::to_string),
            "[0-9a-zA-Z.+\\- :/()%°]{0,12}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = parse_survey(Path::new("f.txt"), &bytes, Instrument::AbemLs);
            let _ = parse_survey(Path::new("f.txt"), &bytes, Instrument::Auto);
        }

        /// Rows of arbitrary fields under a real header: never a panic, and a survey that is
        /// read is consistent (indices in range, one value per datum, no both-remote dipole).
        #[test]
        fn arbitrary_rows_under_a_header_never_panic(
            lead in proptest::collection::vec("[a-zA-Z: \\t]{0,20}", 0..3),
            rows in proptest::collection::vec(proptest::collection::vec(token(), 0..36), 0..12),
            short in any::<bool>(),
        ) {
            let header = if short { "A(x)\tB(x)\tM(x)\tN(x)\tU(V)\tI(mA)" } else { HEADER };
            let body: Vec<String> = rows.iter().map(|r| r.join("\t")).collect();
            let text = format!("{}\n{header}\n{}\n", lead.join("\n"), body.join("\n"));
            if let Ok(s) = parse_survey(Path::new("f.txt"), text.as_bytes(), Instrument::AbemLs) {
                let n = s.n_data();
                prop_assert!(n > 0);
                prop_assert_eq!(s.valid.len(), n);
                prop_assert_eq!(s.r_ohm.as_ref().map(Vec::len), Some(n));
                for q in &s.quadrupoles {
                    prop_assert!(q.a.is_some() || q.b.is_some());
                    prop_assert!(q.m.is_some() || q.n.is_some());
                    for e in [q.a, q.b, q.m, q.n].into_iter().flatten() {
                        prop_assert!(e < s.n_electrodes());
                    }
                }
            }
        }
    }
}
