//! Res2DInv input files (Loke, Res2DInv manual, "Data file format"):
//! ```text
//! title
//! a            unit electrode spacing, m
//! code         1 Wenner-α, 2 pole-pole, 3 dipole-dipole, 4 Wenner-β, 5 Wenner-γ,
//!              6 pole-dipole, 7 Wenner–Schlumberger, 11 general array, 15 gradient
//! (general array: sub-array type, 'Type of measurement' line, 0 = ρa | 1 = R)
//! (optional, pole-pole 2 and pole-dipole 6) 'Remote electrodes included', then
//!              'C2 remote electrode X, Y and Z location' and 'x,y,z' (and for pole-pole the
//!              same for P2), then optionally 'Exact Geometric factor used'
//! n_data
//! x-location   0 first electrode, 1 mid-point (general array: the type of x-location)
//! IP flag      0, or 1 followed by three IP description lines
//! (optional)   'Error estimate for data present', 'Type of error estimate (0=same unit as
//!              data)', 0 — then every row carries an error after its value
//! data rows    standard arrays: x a [n] value [error] [ip];
//!              general array: k x1 z1 … xk zk value [error] [ip], k = 4 (A B M N),
//!              3 (A M N, pole-dipole, B remote) or 2 (A M, pole-pole, B and N remote)
//! topography   0 | 1 | 2, then the number of points, rows 'x z' and (2) the index of the
//!              first electrode in the list
//! (optional)   'Global Coordinates present', 'Number of coordinate points', n, rows
//!              'x_local x_global y_global'
//! 0 0 0 0      end
//! ```
//! Blocks this reader does not read (cross-borehole files with their 'Borehole' blocks, a
//! remote-electrode block anywhere but after the array code of a pole array, array codes
//! other than the ones above, error types other than 0) are refused by name, never misread
//! as data. Remote electrodes given by position are electrodes of the survey, placed on the
//! line at their x (the 2D section has no across-line axis; the note gives the offset), and
//! with 'Exact Geometric factor used' the factor that turns ρa into R uses their true 3D
//! distances, k = 2π / (1/AM − 1/BM − 1/AN + 1/BN) (Res2DInv manual, pole arrays).
//! Electrode positions of the standard arrays (x = first electrode, spacing a, factor n):
//! Wenner-α A=x M=x+a N=x+2a B=x+3a; Wenner-β B=x A=x+a M=x+2a N=x+3a; Wenner-γ A=x M=x+a
//! B=x+2a N=x+3a; dipole-dipole B=x A=x+a M=x+a(1+n) N=x+a(2+n); Wenner–Schlumberger
//! A=x M=x+na N=x+a(n+1) B=x+a(2n+1); pole-dipole A=x M=x+na N=x+a(n+1) (n<0: mirrored);
//! pole-pole A=x M=x+a. The standard arrays give ρa; R = ρa/k with the flat-ground k.

use super::super::survey::{Format, Survey};
use super::{PositionIndex, numbered_lines, parse_index};
use crate::methods::ert::qc::{geometric_factor_flat, geometric_factor_points};
use crate::methods::io::{ReadError, fields, parse_f64};
use std::path::Path;

/// Title, a spacing, and a known array code on lines 1–3, then a count.
pub fn looks_like(lines: &[&str]) -> bool {
    if lines.len() < 7 {
        return false;
    }
    let one = |l: &str| {
        let f = fields(l);
        (f.len() == 1).then(|| f[0].to_string())
    };
    let (Some(sp), Some(code)) = (one(lines[1]), one(lines[2])) else {
        return false;
    };
    parse_f64(&sp).is_some_and(|v| v > 0.0)
        && parse_index(&code).is_some_and(|c| [1, 2, 3, 4, 5, 6, 7, 11, 15].contains(&c))
}

type Lines<'a> = [(usize, &'a str)];

/// The header: everything before the first data row.
#[derive(Debug)]
struct Header {
    a_unit: f64,
    code: i64,
    resistance: bool,
    n_data: usize,
    xloc: i64,
    ip: bool,
    errors: bool,
    /// Remote C2 (B) and P2 (N) positions [x, y, z] from the remote-electrode block.
    remote_c2: Option<[f64; 3]>,
    remote_p2: Option<[f64; 3]>,
    /// 'Exact Geometric factor used': ρa were computed with the remote electrodes' positions.
    exact_k: bool,
    /// Index (0-based) of the first data line.
    first_row: usize,
}

/// The remote-electrode block of a pole array (line `i` says 'Remote electrodes included'):
/// C2 / P2 positions, whether the exact factor was used, and the index after the block.
type RemoteBlock = (Option<[f64; 3]>, Option<[f64; 3]>, bool, usize);

fn remote_block(path: &Path, lines: &Lines, mut i: usize) -> Result<RemoteBlock, ReadError> {
    let (mut c2, mut p2) = (None, None);
    i += 1;
    while let Some(&(no, l)) = lines.get(i) {
        let low = l.trim().to_ascii_lowercase();
        if !(low.contains("remote electrode") && is_text(l)) {
            break;
        }
        let (cno, cl) = get(path, lines, i + 1, "the remote electrode's 'x, y, z'")?;
        let v: Vec<f64> = cl
            .split([',', ' ', '\t', ';'])
            .filter(|t| !t.is_empty())
            .map_while(parse_f64)
            .collect();
        if v.len() < 2 || v.iter().any(|x| !x.is_finite()) {
            return Err(ReadError::malformed(
                path,
                cno,
                "the remote electrode's position 'x, y, z'",
                cl,
            ));
        }
        let pos = [v[0], v[1], v.get(2).copied().unwrap_or(0.0)];
        if low.starts_with("c2") {
            c2 = Some(pos);
        } else if low.starts_with("p2") {
            p2 = Some(pos);
        } else {
            return Err(ReadError::malformed(
                path,
                no,
                "'C2 remote electrode …' or 'P2 remote electrode …'",
                l,
            ));
        }
        i += 2;
    }
    let exact = lines
        .get(i)
        .is_some_and(|(_, l)| l.to_ascii_lowercase().contains("exact geometric factor"));
    Ok((c2, p2, exact, i + usize::from(exact)))
}

fn get<'a>(
    path: &Path,
    lines: &'a Lines,
    i: usize,
    what: &str,
) -> Result<(usize, &'a str), ReadError> {
    lines
        .get(i)
        .map(|(n, l)| (*n, l.trim()))
        .ok_or_else(|| ReadError::malformed(path, lines.len().max(1), what, "end of file"))
}

fn int_at(path: &Path, lines: &Lines, i: usize, what: &str) -> Result<i64, ReadError> {
    let (no, l) = get(path, lines, i, what)?;
    fields(l)
        .first()
        .and_then(|t| parse_index(t))
        .ok_or_else(|| ReadError::malformed(path, no, what, l))
}

/// Whether a line is text (its first field is not a number).
fn is_text(l: &str) -> bool {
    fields(l).first().is_some_and(|t| parse_f64(t).is_none())
}

/// A block this reader refuses, by the words that name it in the manual.
fn refused_block(l: &str) -> Option<&'static str> {
    let low = l.to_ascii_lowercase();
    if low.contains("borehole") {
        Some("a cross-borehole block (electrodes in boreholes)")
    } else if low.contains("remote") {
        Some("a remote-electrode position block")
    } else {
        None
    }
}

fn header(path: &Path, lines: &Lines) -> Result<Header, ReadError> {
    let (sno, sl) = get(path, lines, 1, "the unit electrode spacing")?;
    let a_unit = fields(sl)
        .first()
        .and_then(|t| parse_f64(t))
        .filter(|v| *v > 0.0)
        .ok_or_else(|| {
            ReadError::malformed(path, sno, "the unit electrode spacing (m, > 0)", sl)
        })?;
    let code = int_at(path, lines, 2, "the array type code")?;
    let mut i = 3;
    let mut resistance = false;
    if code == 11 || code == 15 {
        i += 1; // sub-array type
        let (_, l) = get(path, lines, i, "the type of measurement")?;
        if l.to_ascii_lowercase().contains("type") {
            i += 1;
            resistance = int_at(path, lines, i, "the type of measurement (0 = ρa, 1 = R)")? == 1;
            i += 1;
        }
    } else if ![1, 2, 3, 4, 5, 6, 7].contains(&code) {
        return Err(ReadError::malformed(
            path,
            3,
            "a supported array code (1–7, 11, 15)",
            code.to_string(),
        ));
    }
    let (mut remote_c2, mut remote_p2, mut exact_k) = (None, None, false);
    if [2, 6].contains(&code)
        && lines.get(i).is_some_and(|(_, l)| {
            l.to_ascii_lowercase()
                .contains("remote electrodes included")
        })
    {
        (remote_c2, remote_p2, exact_k, i) = remote_block(path, lines, i)?;
    }
    if let Some((no, l)) = lines.get(i).filter(|(_, l)| refused_block(l).is_some()) {
        return Err(refused(path, *no, l));
    }
    let n_data = int_at(path, lines, i, "the number of data")?;
    if !(0..=10_000_000).contains(&n_data) {
        return Err(ReadError::malformed(
            path,
            i + 1,
            "a plausible number of data",
            n_data.to_string(),
        ));
    }
    let xloc = int_at(
        path,
        lines,
        i + 1,
        "the x-location type (0 first electrode, 1 mid-point)",
    )?;
    let ip = int_at(path, lines, i + 2, "the IP flag (0 or 1)")? == 1;
    i += 3 + if ip { 3 } else { 0 };
    let mut errors = false;
    if let Some((_, l)) = lines.get(i)
        && l.to_ascii_lowercase().contains("error estimate")
    {
        errors = true;
        i += 1;
        if get(path, lines, i, "the type of error estimate").is_ok_and(|(_, l)| is_text(l)) {
            i += 1;
        }
        let (no, l) = get(
            path,
            lines,
            i,
            "the type of error estimate (0 = same unit as data)",
        )?;
        if int_at(
            path,
            lines,
            i,
            "the type of error estimate (0 = same unit as data)",
        )? != 0
        {
            return Err(ReadError::malformed(
                path,
                no,
                "error estimate type 0 (same unit as the data; the only type this reader reads)",
                l,
            ));
        }
        i += 1;
    }
    Ok(Header {
        a_unit,
        code,
        resistance,
        n_data: n_data as usize,
        xloc,
        ip,
        errors,
        remote_c2,
        remote_p2,
        exact_k,
        first_row: i,
    })
}

fn refused(path: &Path, no: usize, l: &str) -> ReadError {
    ReadError::malformed(
        path,
        no,
        "a block this reader reads (it does not read cross-borehole blocks, nor remote-electrode \
         blocks other than the one after a pole array's code)",
        format!("{} — {l}", refused_block(l).unwrap_or("an unknown block")),
    )
}

/// Positions (x of A B M N; ∞ = remote) of a standard-array row `x a [n]`.
fn standard_positions(code: i64, xloc: i64, nums: &[f64]) -> [f64; 4] {
    let (x, a) = (nums[0], nums[1]);
    match code {
        1 | 4 | 5 | 2 => {
            let x0 = match (xloc, code) {
                (1, 2) => x - a / 2.0,
                (1, _) => x - 1.5 * a,
                _ => x,
            };
            match code {
                1 => [x0, x0 + 3.0 * a, x0 + a, x0 + 2.0 * a],
                4 => [x0 + a, x0, x0 + 2.0 * a, x0 + 3.0 * a],
                5 => [x0, x0 + 2.0 * a, x0 + a, x0 + 3.0 * a],
                _ => [x0, f64::INFINITY, x0 + a, f64::INFINITY],
            }
        }
        3 => {
            let n = nums[2];
            let x0 = if xloc == 1 {
                x - a * (n / 2.0 + 1.0)
            } else {
                x
            };
            [x0 + a, x0, x0 + a * (1.0 + n), x0 + a * (2.0 + n)]
        }
        7 => {
            let n = nums[2];
            let x0 = if xloc == 1 { x - a * (n + 0.5) } else { x };
            [x0, x0 + a * (2.0 * n + 1.0), x0 + n * a, x0 + a * (n + 1.0)]
        }
        _ => {
            // pole-dipole
            let n = nums[2];
            if n >= 0.0 {
                let x0 = if xloc == 1 { x - n * a / 2.0 } else { x };
                [x0, f64::INFINITY, x0 + n * a, x0 + a * (n + 1.0)]
            } else {
                let m = n.abs();
                let x0 = if xloc == 1 {
                    x - a * (1.0 + m / 2.0)
                } else {
                    x
                };
                [x0 + a * (1.0 + m), f64::INFINITY, x0 + a, x0]
            }
        }
    }
}

/// A general-array row `k x1 z1 … xk zk`: x and z of A B M N (∞ = remote), and where the
/// value stands.
fn general_positions(nums: &[f64]) -> Option<([f64; 4], [f64; 4], usize)> {
    let k = nums[0];
    if k.fract() != 0.0 || !(2.0..=4.0).contains(&k) {
        return None;
    }
    let k = k as usize;
    let p = |j: usize| (nums[1 + 2 * j], nums[2 + 2 * j]);
    let inf = f64::INFINITY;
    let (xs, zs) = match k {
        4 => {
            let (a, b, m, n) = (p(0), p(1), p(2), p(3));
            ([a.0, b.0, m.0, n.0], [a.1, b.1, m.1, n.1])
        }
        3 => {
            let (a, m, n) = (p(0), p(1), p(2));
            ([a.0, inf, m.0, n.0], [a.1, 0.0, m.1, n.1])
        }
        _ => {
            let (a, m) = (p(0), p(1));
            ([a.0, inf, m.0, inf], [a.1, 0.0, m.1, 0.0])
        }
    };
    Some((xs, zs, 1 + 2 * k))
}

/// The data rows: positions, elevations, values, errors (as written), IP.
#[derive(Default)]
struct Rows {
    pos: Vec<[f64; 4]>,
    zpos: Vec<[f64; 4]>,
    val: Vec<f64>,
    err: Vec<f64>,
    ip: Vec<f64>,
}

fn data_rows(path: &Path, lines: &Lines, h: &Header) -> Result<(Rows, usize), ReadError> {
    let mut r = Rows::default();
    let mut i = h.first_row;
    let general = h.code == 11 || h.code == 15;
    let extra = usize::from(h.errors) + usize::from(h.ip);
    for k in 0..h.n_data {
        let Some(&(no, raw)) = lines.get(i) else {
            return Err(ReadError::malformed(
                path,
                lines.len().max(1),
                format!("{} data rows", h.n_data),
                format!("end of file after {k} rows"),
            ));
        };
        let l = raw.trim();
        i += 1;
        if refused_block(l).is_some() {
            return Err(refused(path, no, l));
        }
        let nums: Vec<f64> = fields(l).iter().map_while(|t| parse_f64(t)).collect();
        let (p, z, vi) = if general {
            let n_el = nums.first().copied().unwrap_or(f64::NAN);
            let need = if [2.0, 3.0, 4.0].contains(&n_el) {
                2 + 2 * n_el as usize + extra
            } else {
                10 + extra
            };
            match (nums.len() >= need)
                .then(|| general_positions(&nums))
                .flatten()
            {
                Some(g) => g,
                None => return Err(short_row(path, no, need, l, h)),
            }
        } else {
            let need = match h.code {
                1 | 2 | 4 | 5 => 3,
                _ => 4,
            } + extra;
            if nums.len() < need {
                return Err(short_row(path, no, need, l, h));
            }
            (
                standard_positions(h.code, h.xloc, &nums),
                [0.0; 4],
                need - 1 - extra,
            )
        };
        // Positions written with two decimals in the files; round to 1 µm for identity.
        r.pos.push(p.map(|v| {
            if v.is_finite() {
                (v * 1e6).round() / 1e6
            } else {
                v
            }
        }));
        r.zpos.push(z);
        r.val.push(nums[vi]);
        let mut next = vi + 1;
        if h.errors {
            r.err.push(nums[next]);
            next += 1;
        }
        r.ip.push(nums.get(next).copied().unwrap_or(f64::NAN));
    }
    Ok((r, i))
}

fn short_row(path: &Path, no: usize, need: usize, l: &str, h: &Header) -> ReadError {
    let parts = [(h.errors, " and an error"), (h.ip, " and an IP value")];
    let what: String = parts.iter().filter(|p| p.0).map(|p| p.1).collect();
    ReadError::malformed(
        path,
        no,
        format!("a data row with {need} numbers (positions, the value{what})"),
        l,
    )
}

/// After the data: the topography block, the global-coordinates block and the closing
/// zeros. Returns the topography points.
fn tail_blocks(
    path: &Path,
    lines: &Lines,
    mut i: usize,
    s: &mut Survey,
) -> Result<Vec<[f64; 2]>, ReadError> {
    let mut topo: Vec<[f64; 2]> = Vec::new();
    let mut flag_seen = false;
    while let Some(&(no, raw)) = lines.get(i) {
        let l = raw.trim();
        i += 1;
        if l.is_empty() {
            continue;
        }
        if refused_block(l).is_some() {
            return Err(refused(path, no, l));
        }
        if l.to_ascii_lowercase().contains("global coordinates") {
            i = global_coordinates(path, lines, i, s)?;
            continue;
        }
        if is_text(l) {
            s.notes.push(format!(
                "line {no} after the data not read (not a block of the manual this reader knows): {l}"
            ));
            continue;
        }
        let first = fields(l).first().and_then(|t| parse_index(t));
        if !flag_seen && matches!(first, Some(1 | 2)) && fields(l).len() == 1 {
            flag_seen = true;
            i = topography(path, lines, i, &mut topo)?;
            if first == Some(2)
                && lines
                    .get(i)
                    .is_some_and(|(_, l)| fields(l).len() == 1 && parse_index(l.trim()).is_some())
            {
                i += 1; // the list index of the first electrode
            }
            continue;
        }
        flag_seen = true;
    }
    Ok(topo)
}

/// `n`, then `n` rows `x z`; returns the index after them.
fn topography(
    path: &Path,
    lines: &Lines,
    i: usize,
    topo: &mut Vec<[f64; 2]>,
) -> Result<usize, ReadError> {
    let (cno, cl) = get(path, lines, i, "the number of topography points")?;
    let n_topo = fields(cl)
        .first()
        .and_then(|t| parse_index(t))
        .filter(|n| (0..=10_000_000).contains(n))
        .ok_or_else(|| ReadError::malformed(path, cno, "the number of topography points", cl))?
        as usize;
    for k in 0..n_topo {
        let Some(&(no, tl)) = lines.get(i + 1 + k) else {
            return Err(ReadError::malformed(
                path,
                lines.len().max(1),
                format!("{n_topo} topography rows 'x z'"),
                format!("end of file after {k} rows"),
            ));
        };
        let nums: Vec<f64> = fields(tl).iter().filter_map(|t| parse_f64(t)).collect();
        if nums.len() < 2 {
            return Err(ReadError::malformed(path, no, "a topography row 'x z'", tl));
        }
        topo.push([nums[0], nums[1]]);
    }
    Ok(i + 1 + n_topo)
}

/// 'Global Coordinates present': a 'Number of coordinate points' line, `n`, then `n` rows
/// `x_local x_global y_global`. Read and said; the positions stay local (distance along
/// the line).
fn global_coordinates(
    path: &Path,
    lines: &Lines,
    mut i: usize,
    s: &mut Survey,
) -> Result<usize, ReadError> {
    if get(path, lines, i, "the number of coordinate points").is_ok_and(|(_, l)| is_text(l)) {
        i += 1;
    }
    let n = int_at(path, lines, i, "the number of global coordinate points")?;
    if !(0..=10_000_000).contains(&n) {
        let (no, l) = get(path, lines, i, "the number of global coordinate points")?;
        return Err(ReadError::malformed(
            path,
            no,
            "a plausible number of points",
            l,
        ));
    }
    for k in 0..n as usize {
        let Some(&(no, l)) = lines.get(i + 1 + k) else {
            return Err(ReadError::malformed(
                path,
                lines.len().max(1),
                format!("{n} global coordinate rows 'x_local x_global y_global'"),
                format!("end of file after {k} rows"),
            ));
        };
        if fields(l).iter().filter_map(|t| parse_f64(t)).count() < 3 {
            return Err(ReadError::malformed(
                path,
                no,
                "a global coordinate row 'x_local x_global y_global'",
                l,
            ));
        }
    }
    s.notes.push(format!(
        "global coordinates block read ({n} points); positions are kept as distance along the line"
    ));
    Ok(i + 1 + n as usize)
}

/// Parse a Res2DInv input file.
pub fn parse(path: &Path, text: &str) -> Result<Survey, ReadError> {
    let lines = numbered_lines(text);
    let h = header(path, &lines)?;
    let mut s = Survey::empty(Format::Res2dinv);
    if h.ip {
        s.ip_unit =
            Some("as in the file's IP header (Res2DInv: usually msec chargeability)".into());
    }
    let (rows, next) = data_rows(path, &lines, &h)?;
    let topo = tail_blocks(path, &lines, next, &mut s)?;
    let remote = remote_positions(&h, &rows.pos, &mut s);
    let all: Vec<[[f64; 3]; 4]> = rows
        .pos
        .iter()
        .zip(&rows.zpos)
        .map(|(p, z)| {
            std::array::from_fn(|e| match remote[e] {
                Some(r) if !p[e].is_finite() => [r[0], 0.0, r[2]],
                _ => [p[e], 0.0, z[e]],
            })
        })
        .collect();
    let (quadrupoles, electrodes) = PositionIndex::quadrupoles(&all);
    s.quadrupoles = quadrupoles;
    s.electrodes = electrodes;
    // The electrodes that stand for a remote role keep the block's elevation.
    let remote_el: Vec<usize> = rows
        .pos
        .iter()
        .zip(&s.quadrupoles)
        .flat_map(|(p, q)| [(p[1], q.b), (p[3], q.n)])
        .filter_map(|(x, e)| (!x.is_finite()).then_some(e).flatten())
        .collect();
    if !topo.is_empty() {
        for (i, e) in s.electrodes.iter_mut().enumerate() {
            if !remote_el.contains(&i) {
                e.z_m = interp(&topo, e.x_m);
            }
        }
        s.topography = topo;
        s.notes
            .push("electrode elevations interpolated from the topography block".into());
    }
    let k: Vec<f64> = rows
        .pos
        .iter()
        .map(|p| {
            if h.exact_k && remote.iter().any(Option::is_some) {
                exact_factor(p, &remote)
            } else {
                geometric_factor_flat(p[0], p[1], p[2], p[3])
            }
        })
        .collect();
    if h.errors {
        s.err = Some(
            rows.err
                .iter()
                .zip(&rows.val)
                .map(|(e, v)| (e / v).abs())
                .collect(),
        );
        s.notes.push(
            "error estimates read (same unit as the data) and kept as relative errors |error/value|"
                .into(),
        );
    }
    let val = rows.val;
    if h.resistance {
        s.rhoa_ohm_m = Some(val.iter().zip(&k).map(|(r, k)| r * k).collect());
        s.r_ohm = Some(val);
    } else {
        s.r_ohm = Some(val.iter().zip(&k).map(|(rho, k)| rho / k).collect());
        s.rhoa_ohm_m = Some(val);
        s.notes.push(
            "R computed as ρa/k with the flat-ground geometric factor (the file gives ρa)".into(),
        );
    }
    s.k_m = Some(k);
    if h.ip {
        s.ip = Some(rows.ip);
    }
    s.notes.push(format!(
        "unit electrode spacing {} m, array code {}",
        h.a_unit, h.code
    ));
    s.valid = vec![true; s.quadrupoles.len()];
    Ok(s)
}

/// The remote positions by role (A B M N) from the header's block, and notes on them.
fn remote_positions(h: &Header, pos: &[[f64; 4]], s: &mut Survey) -> [Option<[f64; 3]>; 4] {
    let remote = [None, h.remote_c2, None, h.remote_p2];
    for (role, col) in [("C2", 1), ("P2", 3)] {
        let Some(r) = remote[col] else { continue };
        let used = pos.iter().any(|p| !p[col].is_finite());
        let off = if r[1] != 0.0 {
            format!(
                "; it is {} m off the line, placed on the line at its x for the 2D section",
                r[1]
            )
        } else {
            String::new()
        };
        s.notes.push(format!(
            "remote electrode {role} at x = {} m, y = {} m, z = {} m read from the \
             remote-electrode block{}{off}",
            r[0],
            r[1],
            r[2],
            if used { "" } else { " (no datum uses it)" }
        ));
    }
    if remote.iter().any(Option::is_some) {
        s.notes.push(if h.exact_k {
            "'Exact Geometric factor used': R = ρa/k with k from the remote electrodes' true \
             3D positions"
                .into()
        } else {
            "the file's ρa use the infinitely far remote factor; R = ρa/k with that factor, \
             and the remote electrodes are modelled where the file puts them"
                .into()
        });
    }
    remote
}

/// The flat-ground factor with remote roles at their 3D positions (line electrodes at
/// (x, 0, 0)): [`geometric_factor_points`].
fn exact_factor(p: &[f64; 4], remote: &[Option<[f64; 3]>; 4]) -> f64 {
    let at = |e: usize| {
        if p[e].is_finite() {
            Some([p[e], 0.0, 0.0])
        } else {
            remote[e]
        }
    };
    geometric_factor_points(at(0), at(1), at(2), at(3))
}

/// Linear interpolation in a table of (x, z) points (held constant beyond the ends).
fn interp(t: &[[f64; 2]], x: f64) -> f64 {
    let mut pts = t.to_vec();
    pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let Some(first) = pts.first() else { return 0.0 };
    if x <= first[0] {
        return first[1];
    }
    for w in pts.windows(2) {
        if x <= w[1][0] {
            let d = w[1][0] - w[0][0];
            return if d > 0.0 {
                w[0][1] + (w[1][1] - w[0][1]) * (x - w[0][0]) / d
            } else {
                w[0][1]
            };
        }
    }
    pts.last().map(|p| p[1]).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    //! Each optional block of the manual on a file written for it; expected numbers are the
    //! ones written (R = value for type-1 files, relative error = error/value).
    use super::*;

    /// A general-array file with "Error estimate for data present" (issue 22's file shape).
    const GENERAL_ERR: &str = "Mixed array\n1.0\n11\n0\n\
Type of measurement (0=app. resistivity,1=resistance)\n1\n2\n1\n0\n\
Error estimate for data present\nType of error estimate (0=same unit as data)\n0\n\
4 0 0 3 0 1 0 2 0 1.5 0.03\n4 1 0 4 0 2 0 3 0 2.0 0.1\n0\n0\n0\n0\n";

    #[test]
    fn error_estimates_of_a_general_array_are_read() {
        let s = parse(Path::new("err.dat"), GENERAL_ERR).unwrap();
        assert_eq!((s.n_electrodes(), s.n_data()), (5, 2));
        assert_eq!(s.r_ohm, Some(vec![1.5, 2.0]));
        let err = s.err.as_ref().unwrap();
        assert!((err[0] - 0.02).abs() < 1e-15 && (err[1] - 0.05).abs() < 1e-15);
        assert!(s.notes.iter().any(|n| n.contains("error estimates read")));
    }

    #[test]
    fn ip_with_errors_pole_arrays_topography_and_global_coordinates() {
        let text = "IP line\n1.0\n11\n0\nType of measurement (0=app. resistivity,1=resistance)\n1\n\
3\n1\n1\nChargeability\nmsec\n0.12,0.26\n\
Error estimate for data present\nType of error estimate (0=same unit as data)\n0\n\
4 0 0 3 0 1 0 2 0 1.5 0.03 4.5\n3 0 0 1 0 2 0 0.8 0.008 3.0\n2 0 0 1 0 0.4 0.004 2.0\n\
2\n2\n0 10\n3 11\n1\nGlobal Coordinates present\nNumber of coordinate points\n2\n\
0 500000 4000000\n3 500003 4000000\n0\n0\n0\n0\n";
        let s = parse(Path::new("ip.dat"), text).unwrap();
        assert_eq!(s.n_data(), 3);
        assert_eq!(s.ip, Some(vec![4.5, 3.0, 2.0]));
        let q = &s.quadrupoles;
        assert!(
            q[1].b.is_none() && q[1].n.is_some(),
            "pole-dipole: B remote"
        );
        assert!(
            q[2].b.is_none() && q[2].n.is_none(),
            "pole-pole: B, N remote"
        );
        assert_eq!(s.topography, vec![[0.0, 10.0], [3.0, 11.0]]);
        assert!((s.electrodes[1].z_m - 10.0 - 1.0 / 3.0).abs() < 1e-12);
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("global coordinates block read (2 points)"))
        );
    }

    /// A pole-pole file with the remote-electrode block (the layout of ResIPy's
    /// `res2dinv_PolePole.DAT` example).
    const POLE_POLE_REMOTE: &str = "Pole-pole\n1.00\n2\nRemote electrodes included\n\
C2 remote electrode X, Y and Z location\n-25.000,10.000,0.0\n\
P2 remote electrode X, Y and Z location\n60.000,0.000,0.0\nExact Geometric factor used\n\
2\n1\n0\n0.50 1.00 10.0\n1.50 2.00 20.0\n0\n0\n0\n0\n";

    #[test]
    fn remote_electrodes_of_a_pole_pole_file_are_electrodes_with_the_exact_factor() {
        let s = parse(Path::new("pp.dat"), POLE_POLE_REMOTE).unwrap();
        // Line electrodes 0, 1 (row 1: A=0 M=1) and 0.5, 2.5 (row 2: A=0.5 M=2.5), + C2, P2.
        assert_eq!((s.n_electrodes(), s.n_data()), (6, 2));
        let q = &s.quadrupoles[0];
        let (b, n) = (
            q.b.expect("C2 is an electrode"),
            q.n.expect("P2 is an electrode"),
        );
        assert_eq!((s.electrodes[b].x_m, s.electrodes[b].y_m), (-25.0, 0.0));
        assert_eq!(s.electrodes[n].x_m, 60.0);
        // k = 2π/(1/AM − 1/BM − 1/AN + 1/BN), B at (−25, 10), N at (60, 0); A 0, M 1.
        let bm = (26.0f64.powi(2) + 100.0).sqrt();
        let bn = (85.0f64.powi(2) + 100.0).sqrt();
        let k = 2.0 * std::f64::consts::PI / (1.0 - 1.0 / bm - 1.0 / 60.0 + 1.0 / bn);
        let k_got = s.k_m.as_ref().unwrap()[0];
        assert!((k_got - k).abs() < 1e-12 * k, "{k_got} vs {k}");
        assert!((s.r_ohm.as_ref().unwrap()[0] - 10.0 / k).abs() < 1e-12);
        let notes = s.notes.join("\n");
        assert!(
            notes.contains("remote electrode C2 at x = -25 m, y = 10 m"),
            "{notes}"
        );
        assert!(notes.contains("10 m off the line"), "{notes}");
        // Without 'Exact Geometric factor used' the infinitely-far factor 2πa stays.
        let inf = POLE_POLE_REMOTE.replace("Exact Geometric factor used\n", "");
        let s = parse(Path::new("pp.dat"), &inf).unwrap();
        let k0 = s.k_m.as_ref().unwrap()[0];
        assert!((k0 - 2.0 * std::f64::consts::PI).abs() < 1e-12, "{k0}");
        // A position that is not a number is refused with its line.
        let bad = POLE_POLE_REMOTE.replace("-25.000,10.000,0.0", "far away");
        let e = parse(Path::new("pp.dat"), &bad).unwrap_err().to_string();
        assert!(
            e.starts_with("pp.dat, line 6: expected the remote electrode's position"),
            "{e}"
        );
    }

    #[test]
    fn blocks_not_read_are_refused_by_name() {
        let bore = GENERAL_ERR.replace("2\n1\n0\nError", "Borehole 1\n2\n1\n0\nError");
        let bore = bore.replace(
            "resistance)\n1\n",
            "resistance)\n1\nCross-borehole survey\n",
        );
        let e = parse(Path::new("b.dat"), &bore).unwrap_err().to_string();
        assert!(
            e.starts_with("b.dat, line 7:") && e.contains("cross-borehole block"),
            "{e}"
        );
        let bad_type = GENERAL_ERR.replace("as data)\n0\n", "as data)\n1\n");
        let e = parse(Path::new("t.dat"), &bad_type)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.dat, line 12: expected error estimate type 0"),
            "{e}"
        );
    }

    #[test]
    fn truncated_files_name_line_expected_found() {
        let p = Path::new("cut.dat");
        // The last row lost its error value.
        let cut = GENERAL_ERR.replace("2.0 0.1\n0\n0\n0\n0\n", "2.0");
        let e = parse(p, &cut).unwrap_err().to_string();
        assert_eq!(
            e,
            "cut.dat, line 14: expected a data row with 11 numbers (positions, the value and an \
             error), found \"4 1 0 4 0 2 0 3 0 2.0\""
        );
        // Fewer rows than declared.
        let cut = GENERAL_ERR.replace("\n4 1 0 4 0 2 0 3 0 2.0 0.1\n0\n0\n0\n0\n", "\n");
        let e = parse(p, &cut).unwrap_err().to_string();
        assert_eq!(
            e,
            "cut.dat, line 13: expected 2 data rows, found \"end of file after 1 rows\""
        );
        // A topography block cut short.
        let cut = GENERAL_ERR.replace("0.1\n0\n0\n0\n0\n", "0.1\n2\n3\n0 10\n");
        let e = parse(p, &cut).unwrap_err().to_string();
        assert_eq!(
            e,
            "cut.dat, line 17: expected 3 topography rows 'x z', found \"end of file after 1 rows\""
        );
    }
}
