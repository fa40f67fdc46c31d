//! The noise level of a station table, estimated from the data alone.
//!
//! Each station's value is predicted by a least-squares plane through its `k` nearest
//! neighbours (itself left out): `v̂_i = a` for `v = a + b (x − x_i) + c (y − y_i)`. A field
//! that is smooth over the station spacing (a potential field from sources deeper than the
//! spacing) is nearly linear over a neighbourhood, so the prediction error `e_i = v_i − v̂_i`
//! is the noise of station i plus the noise of the plane's intercept (variance σ²/k for k
//! neighbours around the station) plus the field's curvature. The estimate is
//!
//! `σ ≈ 1.4826 · MAD(e) / √(1 + 1/k)`
//!
//! (MAD: median absolute deviation from the median; 1.4826 makes it σ for Gaussian noise),
//! robust against the few stations where the curvature is large (over the anomaly's peak).
//! A linear regional trend changes no `e_i`, so the estimate does not depend on the trend.
//! What it measures is the scatter a smooth field cannot explain: noise, plus any structure
//! shorter than the station spacing, which a model on cells no smaller than the spacing cannot
//! fit either.

/// Neighbours per station.
pub const NEIGHBOURS: usize = 8;
/// At most this many stations are used as centres (every `⌈n / MAX_CENTRES⌉`-th); all
/// stations are candidates as neighbours.
const MAX_CENTRES: usize = 4000;

/// The estimated noise standard deviation of `value` at (`x`, `y`) (module docs); `None` when
/// fewer than `3 · NEIGHBOURS` stations are given or no neighbourhood admits a plane.
pub fn noise_sd(x: &[f64], y: &[f64], value: &[f64]) -> Option<f64> {
    let n = value.len();
    if n < 3 * NEIGHBOURS || x.len() != n || y.len() != n {
        return None;
    }
    let stride = n.div_ceil(MAX_CENTRES);
    let errors: Vec<f64> = (0..n)
        .step_by(stride)
        .filter_map(|i| plane_prediction_error(x, y, value, i))
        .collect();
    if errors.len() < NEIGHBOURS {
        return None;
    }
    let med = median(&errors);
    let dev: Vec<f64> = errors.iter().map(|e| (e - med).abs()).collect();
    let mad = median(&dev);
    Some(1.4826 * mad / (1.0 + 1.0 / NEIGHBOURS as f64).sqrt())
}

/// `v_i − v̂_i` for the plane through the `NEIGHBOURS` nearest other stations; `None` when
/// they are collinear (the 3 × 3 normal equations are singular).
fn plane_prediction_error(x: &[f64], y: &[f64], value: &[f64], i: usize) -> Option<f64> {
    let mut near: Vec<(f64, usize)> = (0..value.len())
        .filter(|&j| j != i)
        .map(|j| ((x[j] - x[i]).powi(2) + (y[j] - y[i]).powi(2), j))
        .collect();
    let k = NEIGHBOURS.min(near.len());
    near.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0));
    // Normal equations of v = a + b·dx + c·dy, coordinates relative to station i.
    let (mut m, mut r) = ([[0.0f64; 3]; 3], [0.0f64; 3]);
    for &(_, j) in &near[..k] {
        let row = [1.0, x[j] - x[i], y[j] - y[i]];
        for p in 0..3 {
            r[p] += row[p] * value[j];
            for q in 0..3 {
                m[p][q] += row[p] * row[q];
            }
        }
    }
    let a = solve3(m, r)?[0];
    Some(value[i] - a)
}

/// Solve the 3 × 3 system `m s = r` by Cramer's rule; `None` when it is (nearly) singular.
fn solve3(m: [[f64; 3]; 3], r: [f64; 3]) -> Option<[f64; 3]> {
    let det = |a: &[[f64; 3]; 3]| {
        a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
            - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
            + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
    };
    let d = det(&m);
    let scale = m.iter().flatten().fold(0.0f64, |a, b| a.max(b.abs()));
    if d.is_nan() || d.abs() <= 1e-12 * scale.powi(3) {
        return None;
    }
    let mut out = [0.0; 3];
    for (c, o) in out.iter_mut().enumerate() {
        let mut mc = m;
        for (row, rv) in mc.iter_mut().zip(&r) {
            row[c] = *rv;
        }
        *o = det(&mc) / d;
    }
    Some(out)
}

/// The median of the finite values; NaN when there is none.
fn median(v: &[f64]) -> f64 {
    crate::methods::shared::stats::median(v).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::petro::rng::Xoshiro256StarStar;

    fn grid(f: impl Fn(f64, f64) -> f64, sd: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut rng = Xoshiro256StarStar::seed_from_u64(3);
        let (mut x, mut y, mut v) = (vec![], vec![], vec![]);
        for j in 0..20 {
            for i in 0..20 {
                let (xi, yi) = (10.0 * i as f64, 10.0 * j as f64);
                x.push(xi);
                y.push(yi);
                v.push(f(xi, yi) + sd * rng.next_normal());
            }
        }
        (x, y, v)
    }

    #[test]
    fn white_noise_on_a_trend_is_measured() {
        // 400 stations, σ = 0.01 on a plane: the estimate is within 15 % of σ (the MAD of 400
        // samples has a ~5 % standard error; edge stations' one-sided neighbourhoods raise
        // the intercept variance a little).
        let (x, y, v) = grid(|x, y| 3.0 + 4e-4 * x - 2e-4 * y, 0.01);
        let s = noise_sd(&x, &y, &v).unwrap();
        assert!((s / 0.01 - 1.0).abs() < 0.15, "{s}");
    }

    #[test]
    fn a_smooth_anomaly_without_noise_is_not_called_noise() {
        // A point-source anomaly 40 m deep (peak 0.0225 mGal) with no noise: the estimate is
        // below 5 % of the peak — curvature leaks in only over the peak, which the MAD ignores.
        let peak = 0.0225;
        let (x, y, v) = grid(
            |x, y| {
                let r2 = (x - 95.0).powi(2) + (y - 95.0).powi(2);
                peak * (1.0 + r2 / 1600.0).powf(-1.5)
            },
            0.0,
        );
        let s = noise_sd(&x, &y, &v).unwrap();
        assert!(s < 0.05 * peak, "{s}");
    }

    #[test]
    fn too_few_stations_give_no_estimate() {
        assert_eq!(noise_sd(&[0.0; 5], &[0.0; 5], &[1.0; 5]), None);
    }
}
