//! EMTF Z-file reader (`.zmm`, `.zrr`, `.zss`; Egbert's EMTF output, "TRANSFER FUNCTIONS IN
//! MEASUREMENT COORDINATES").
//!
//! Per period: the transfer functions of the output channels (Hz, Ex, Ey, in the file's
//! channel order) on the two input channels (Hx, Hy), the inverse coherent signal power
//! matrix S (2×2, lower triangle) and the residual covariance N (lower triangle). The
//! variance of TF(o, i) is N(o, o)·S(i, i) (Egbert & Booker 1986).
//!
//! Rotation: the transfer functions are in measurement coordinates; like mt-metadata we
//! express them in the frame x = 0° azimuth of the file: with U the rows (cos a, sin a) of the
//! H channel azimuths and V those of the E channels, Z = V⁻¹·Z_meas·U and T = T_meas·U
//! (exact also for non-orthogonal layouts); the variances are rotated with the same matrices.
//! Impedance units are EMTF's (mV/km)/nT (not stated in the file).

use std::path::Path;

use num_complex::Complex64;

use super::text::parse_numbers;
use super::tf::{TfFormat, TransferFunction};
use crate::methods::io::{ReadError, read_text};

/// Read an EMTF Z-file.
pub fn read_zfile(path: &Path) -> Result<TransferFunction, ReadError> {
    let text = read_text(path)?;
    parse_zfile(path, &text)
}

#[derive(Debug, Clone)]
struct Channel {
    number: usize,
    azimuth_deg: f64,
    name: String,
}

/// A Z-file cut short (issue 19): fewer period blocks than the header's "number of
/// frequencies", or a last block whose matrix rows are not those of the first (a row or a
/// value missing). `blocks` holds each block's line and the number of values in each of its
/// rows (transfer functions, signal power, residual covariance).
fn check_blocks_complete(
    path: &Path,
    lines: &[&str],
    declared: Option<(usize, usize)>,
    blocks: &[(usize, Vec<usize>)],
) -> Result<(), ReadError> {
    let end = lines.len().max(1);
    let cut = |expected: String, found: String| {
        Err(ReadError::malformed(
            path,
            end,
            format!("{expected}; the file ends before, so it looks cut off"),
            found,
        ))
    };
    if let (Some((first_line, first)), Some((last_line, last))) = (blocks.first(), blocks.last())
        && blocks.len() > 1
        && last != first
    {
        return cut(
            format!(
                "the period block of line {last_line} to have the rows of the block of line {first_line} (values per row: {first:?})"
            ),
            format!("{last:?}"),
        );
    }
    match declared {
        Some((n, at)) if blocks.len() < n => cut(
            format!("{n} period blocks, as line {at} declares"),
            format!("{} period blocks", blocks.len()),
        ),
        _ => Ok(()),
    }
}

/// Parse Z-file text.
pub fn parse_zfile(path: &Path, text: &str) -> Result<TransferFunction, ReadError> {
    crate::methods::truncated::check_last_row(path, text)?;
    let lines: Vec<&str> = text.lines().collect();
    if !lines
        .first()
        .is_some_and(|l| l.to_ascii_uppercase().contains("TRANSFER FUNCTIONS"))
    {
        return Err(ReadError::malformed(
            path,
            1,
            "\"TRANSFER FUNCTIONS IN MEASUREMENT COORDINATES\"",
            lines.first().copied().unwrap_or(""),
        ));
    }
    let mut tf = TransferFunction::empty(TfFormat::EmtfZFile);
    let mut n_channels: Option<usize> = None;
    let mut n_frequencies: Option<(usize, usize)> = None;
    let mut channels: Vec<Channel> = Vec::new();
    let mut first_period_line = None;
    for (i, l) in lines.iter().enumerate() {
        let low = l.trim().to_ascii_lowercase();
        if low.starts_with("period") {
            first_period_line = Some(i);
            break;
        }
        if i == 3 && !low.contains(':') && !low.is_empty() {
            tf.site = l.trim().to_string();
        }
        if low.starts_with("station") {
            if let Some((_, s)) = l.split_once(':') {
                tf.site = s.trim().to_string();
            }
        } else if low.starts_with("coordinate") {
            let toks: Vec<&str> = low.split_whitespace().collect();
            tf.latitude_deg = toks.get(1).and_then(|t| t.parse().ok());
            tf.longitude_deg = toks
                .get(2)
                .and_then(|t| t.parse::<f64>().ok())
                .map(|x| if x > 180.0 { x - 360.0 } else { x });
            if let Some(d) = toks.last().and_then(|t| t.parse::<f64>().ok()) {
                tf.notes
                    .push(format!("Declination in the file: {d}° (not applied)."));
            }
        } else if low.starts_with("number of channels") {
            let toks: Vec<&str> = low.split_whitespace().collect();
            n_channels = toks.get(3).and_then(|t| t.parse().ok());
            n_frequencies = toks
                .get(7)
                .and_then(|t| t.parse::<usize>().ok())
                .map(|n| (n, i + 1));
        } else {
            let toks: Vec<&str> = l.split_whitespace().collect();
            if toks.len() >= 4 {
                let name = toks[toks.len() - 1].to_ascii_lowercase();
                if ["hx", "hy", "hz", "ex", "ey"].contains(&name.as_str()) {
                    let number = toks[0].parse::<usize>().map_err(|_| {
                        ReadError::malformed(path, i + 1, "a channel number", toks[0])
                    })?;
                    let azimuth_deg = toks[1].parse::<f64>().map_err(|_| {
                        ReadError::malformed(path, i + 1, "a channel azimuth in degrees", toks[1])
                    })?;
                    channels.push(Channel {
                        number,
                        azimuth_deg,
                        name,
                    });
                }
            }
        }
    }
    let Some(start) = first_period_line else {
        return Err(ReadError::format(
            path,
            "no \"period :\" block in the Z-file",
        ));
    };
    let nch = n_channels.ok_or_else(|| {
        ReadError::format(
            path,
            "no \"number of channels … number of frequencies …\" line",
        )
    })?;
    if channels.len() != nch || nch < 3 {
        return Err(ReadError::format(
            path,
            format!(
                "the header announces {nch} channels but lists {} channel lines (at least 3 are needed)",
                channels.len()
            ),
        ));
    }
    channels.sort_by_key(|c| c.number);
    let inputs = &channels[..2];
    let outputs = &channels[2..];
    if inputs[0].name != "hx" || inputs[1].name != "hy" {
        return Err(ReadError::format(
            path,
            format!(
                "the first two channels must be Hx and Hy, found {} and {}",
                inputs[0].name, inputs[1].name
            ),
        ));
    }
    let no = outputs.len();
    let find_out = |n: &str| outputs.iter().position(|c| c.name == n);
    let (ex, ey, hz) = (find_out("ex"), find_out("ey"), find_out("hz"));

    // Period blocks.
    #[derive(Default)]
    struct Blk {
        period: f64,
        line: usize,
        tf: Vec<Vec<f64>>,
        sig: Vec<Vec<f64>>,
        res: Vec<Vec<f64>>,
    }
    let mut blks: Vec<Blk> = Vec::new();
    let mut part = 0u8;
    for (i, l) in lines.iter().enumerate().skip(start) {
        let low = l.trim().to_ascii_lowercase();
        if low.is_empty() {
            continue;
        }
        if low.starts_with("period") {
            let v = low
                .split_once(':')
                .and_then(|(_, r)| r.split_whitespace().next())
                .and_then(|t| t.parse::<f64>().ok())
                .ok_or_else(|| ReadError::malformed(path, i + 1, "\"period : <seconds> …\"", *l))?;
            blks.push(Blk {
                period: v,
                line: i + 1,
                ..Default::default()
            });
            part = 0;
            continue;
        }
        if low.starts_with("number of data") {
            continue;
        }
        if low.contains("transfer") {
            part = 1;
            continue;
        }
        if low.contains("signal") {
            part = 2;
            continue;
        }
        if low.contains("residual") {
            part = 3;
            continue;
        }
        let Some(b) = blks.last_mut() else { continue };
        let nums = parse_numbers(path, i + 1, l, "a Z-file matrix entry")?;
        match part {
            1 => b.tf.push(nums),
            2 => b.sig.push(nums),
            3 => b.res.push(nums),
            _ => {
                return Err(ReadError::malformed(
                    path,
                    i + 1,
                    "\"Transfer Functions\", \"Inverse Coherent Signal Power Matrix\" or \"Residual Covariance\"",
                    *l,
                ));
            }
        }
    }
    if blks.is_empty() {
        return Err(ReadError::format(path, "no period blocks"));
    }
    let shapes: Vec<(usize, Vec<usize>)> = blks
        .iter()
        .map(|b| {
            let rows = b.tf.iter().chain(&b.sig).chain(&b.res);
            (b.line, rows.map(Vec::len).collect())
        })
        .collect();
    check_blocks_complete(path, &lines, n_frequencies, &shapes)?;

    // Rotation matrices (rows = channel direction cosines).
    let dir = |a: f64| (a.to_radians().cos(), a.to_radians().sin());
    let u = [dir(inputs[0].azimuth_deg), dir(inputs[1].azimuth_deg)];
    let u = [[u[0].0, u[0].1], [u[1].0, u[1].1]];
    let identity_h = (u[0][0] - 1.0).abs() < 1e-12 && u[1][1] > 1.0 - 1e-12;
    let (v, identity_e) = match (ex, ey) {
        (Some(a), Some(b)) => {
            let (x, y) = (dir(outputs[a].azimuth_deg), dir(outputs[b].azimuth_deg));
            let v = [[x.0, x.1], [y.0, y.1]];
            let id = (v[0][0] - 1.0).abs() < 1e-12 && v[1][1] > 1.0 - 1e-12;
            (v, id)
        }
        _ => ([[1.0, 0.0], [0.0, 1.0]], true),
    };
    let det_v = v[0][0] * v[1][1] - v[0][1] * v[1][0];
    let vinv = [
        [v[1][1] / det_v, -v[0][1] / det_v],
        [-v[1][0] / det_v, v[0][0] / det_v],
    ];
    let rotate = !(identity_h && identity_e);
    let (u, vinv) = if rotate {
        (u, vinv)
    } else {
        ([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    };
    if rotate {
        tf.notes.push(format!(
            "Channels at azimuths Hx {}°, Hy {}°{}: transfer functions rotated from measurement \
             coordinates to the frame x = 0° (as mt-metadata does).",
            inputs[0].azimuth_deg,
            inputs[1].azimuth_deg,
            match (ex, ey) {
                (Some(a), Some(b)) => format!(
                    ", Ex {}°, Ey {}°",
                    outputs[a].azimuth_deg, outputs[b].azimuth_deg
                ),
                _ => String::new(),
            }
        ));
    }

    let c = |v: &[f64], k: usize| Complex64::new(v[2 * k], v[2 * k + 1]);
    let mut period = Vec::new();
    let mut z = Vec::new();
    let mut zs = Vec::new();
    let mut t = Vec::new();
    let mut ts = Vec::new();
    for b in &blks {
        if b.tf.len() != no || b.tf.iter().any(|r| r.len() != 4) {
            return Err(ReadError::malformed(
                path,
                b.line,
                format!("{no} transfer-function rows of 4 numbers after this period line"),
                format!("{} rows", b.tf.len()),
            ));
        }
        if b.sig.len() != 2 || b.sig[0].len() < 2 || b.sig[1].len() < 4 {
            return Err(ReadError::malformed(
                path,
                b.line,
                "a 2-row lower-triangular signal power matrix after this period line",
                format!("{} rows", b.sig.len()),
            ));
        }
        if b.res.len() != no || b.res.iter().enumerate().any(|(k, r)| r.len() < 2 * (k + 1)) {
            return Err(ReadError::malformed(
                path,
                b.line,
                format!("{no} lower-triangular residual covariance rows after this period line"),
                format!("{} rows", b.res.len()),
            ));
        }
        let tfm: Vec<[Complex64; 2]> = b.tf.iter().map(|r| [c(r, 0), c(r, 1)]).collect();
        let s00 = c(&b.sig[0], 0);
        let s10 = c(&b.sig[1], 0);
        let s11 = c(&b.sig[1], 1);
        let sig = [[s00, s10.conj()], [s10, s11]];
        let res = |i: usize, j: usize| {
            if j <= i {
                c(&b.res[i], j)
            } else {
                c(&b.res[j], i).conj()
            }
        };
        // Right rotation B = U acts on inputs; its column-space variance is (Bᵀ S B)(i, i).
        let sig_rot = |i: usize| -> f64 {
            let mut s = Complex64::new(0.0, 0.0);
            for a in 0..2 {
                for bb in 0..2 {
                    s += u[a][i] * sig[a][bb] * u[bb][i];
                }
            }
            s.re
        };
        period.push(b.period);
        if let (Some(a), Some(bb)) = (ex, ey) {
            let zm = [tfm[a], tfm[bb]];
            // Z = V⁻¹ · Zm · U
            let mut zg = [[Complex64::new(0.0, 0.0); 2]; 2];
            for r in 0..2 {
                for col in 0..2 {
                    let mut s = Complex64::new(0.0, 0.0);
                    for p in 0..2 {
                        for q in 0..2 {
                            s += vinv[r][p] * zm[p][q] * u[q][col];
                        }
                    }
                    zg[r][col] = s;
                }
            }
            let nres = |r: usize| -> f64 {
                let idx = [a, bb];
                let mut s = Complex64::new(0.0, 0.0);
                for p in 0..2 {
                    for q in 0..2 {
                        s += vinv[r][p] * res(idx[p], idx[q]) * vinv[r][q];
                    }
                }
                s.re
            };
            z.push(zg);
            zs.push([
                [
                    (nres(0) * sig_rot(0)).abs().sqrt(),
                    (nres(0) * sig_rot(1)).abs().sqrt(),
                ],
                [
                    (nres(1) * sig_rot(0)).abs().sqrt(),
                    (nres(1) * sig_rot(1)).abs().sqrt(),
                ],
            ]);
        }
        if let Some(h) = hz {
            let tm = tfm[h];
            let tg = [
                tm[0] * u[0][0] + tm[1] * u[1][0],
                tm[0] * u[0][1] + tm[1] * u[1][1],
            ];
            let nz = res(h, h).re;
            t.push(tg);
            ts.push([
                (nz * sig_rot(0)).abs().sqrt(),
                (nz * sig_rot(1)).abs().sqrt(),
            ]);
        }
    }
    tf.period_s = period;
    if ex.is_some() && ey.is_some() {
        tf.z_mv_km_nt = Some(z);
        tf.z_std_mv_km_nt = Some(zs);
        tf.units_in_file = "(mV/km)/nT (EMTF convention; not stated in the file)".into();
    } else {
        tf.notes
            .push("Tipper-only Z-file: no electric channels, so no impedance.".into());
    }
    if hz.is_some() {
        tf.tipper = Some(t);
        tf.tipper_std = Some(ts);
    }
    let dropped = tf.sort_and_clean();
    if dropped > 0 {
        tf.notes.push(format!(
            "{dropped} periods that are not finite and positive were dropped."
        ));
    }
    Ok(tf)
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z: &str = " TRANSFER FUNCTIONS IN MEASUREMENT COORDINATES
 ********** WITH FULL ERROR COVARIANCE*********

S7
coordinate    34.727  -115.735 declination    13.10
number of channels   5   number of frequencies  1
 orientations and tilts of each channel
    1     0.00     0.00 S7  Hx
    2    90.00     0.00 S7  Hy
    3     0.00     0.00 S7  Hz
    4     0.00     0.00 S7  Ex
    5    90.00     0.00 S7  Ey

period :      2.0    decimation level   0    freq. band from    0 to    0
number of data point 0 sampling freq. 8 Hz
 Transfer Functions
  0.1 0.2 0.3 0.4
  1.0 2.0 3.0 4.0
 -5.0-6.0 7.0 8.0
 Inverse Coherent Signal Power Matrix
  4.0 0.0
  0.0 0.0  9.0 0.0
 Residual Covariance
  1.0 0.0
  0.0 0.0  1.0 0.0
  0.0 0.0  0.0 0.0  16.0 0.0
";

    #[test]
    fn reads_impedance_tipper_and_errors() {
        let tf = parse_zfile(Path::new("a.zmm"), Z).unwrap();
        assert_eq!(tf.site, "S7");
        let z = tf.z_mv_km_nt.as_ref().unwrap();
        assert_eq!(z[0][0][1], Complex64::new(3.0, 4.0));
        assert_eq!(
            z[0][1][0],
            Complex64::new(-5.0, -6.0),
            "glued Fortran numbers split"
        );
        let s = tf.z_std_mv_km_nt.as_ref().unwrap();
        // var(Zyx) = N(ey, ey)·S(hx, hx) = 16·4 → std 8.
        assert!((s[0][1][0] - 8.0).abs() < 1e-12);
        assert!((s[0][0][1] - 3.0).abs() < 1e-12);
        assert_eq!(tf.tipper.as_ref().unwrap()[0][1], Complex64::new(0.3, 0.4));
    }

    #[test]
    fn rotated_layout_is_rotated_back() {
        // Channels at 30°/120°: a 1D impedance measured in that frame is the same 1D tensor.
        let rot = Z
            .replace("1     0.00", "1    30.00")
            .replace("2    90.00", "2   120.00")
            .replace("4     0.00", "4    30.00")
            .replace("5    90.00", "5   120.00")
            .replace(
                "  1.0 2.0 3.0 4.0\n -5.0-6.0 7.0 8.0",
                "  0.0 0.0 3.0 4.0\n -3.0 -4.0 0.0 0.0",
            );
        let tf = parse_zfile(Path::new("a.zmm"), &rot).unwrap();
        let z = tf.z_mv_km_nt.as_ref().unwrap();
        assert!((z[0][0][1] - Complex64::new(3.0, 4.0)).norm() < 1e-12);
        assert!(z[0][0][0].norm() < 1e-12);
        assert!(tf.notes.iter().any(|n| n.contains("rotated")));
    }

    #[test]
    fn short_block_names_the_period_line() {
        let bad = Z.replace(" -5.0-6.0 7.0 8.0\n", "");
        let e = parse_zfile(Path::new("a.zmm"), &bad).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.zmm, line 14: expected 3 transfer-function rows of 4 numbers after this period line, found \"2 rows\""
        );
    }
}
