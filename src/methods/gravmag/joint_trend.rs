//! A polynomial regional trend estimated jointly with the model, its coefficients
//! unregularised, by variable projection (Golub & Pereyra 1973, SIAM J. Numer. Anal. 10,
//! 413–432): for the weighted problem `min ‖W(d − G m − T c)‖² + β R(m)` the optimal `c` for
//! any `m` is the least-squares fit of the trend to `W(d − G m)`, so the problem in `m` alone
//! is `min ‖P W (d − G m)‖² + β R(m)` with `P = I − Q Qᵀ` and `Q` an orthonormal basis of the
//! weighted trend columns `W T`. The data-space solver then runs on `P Bs` and `P d̃`
//! unchanged; the trend at the stations is `W⁻¹ Q Qᵀ (d̃ − Bs m)`.

use super::GravMagError;
use super::trend::trend_terms;

/// `Q` (N × p, column-major as p columns of N) of the weighted trend columns.
#[derive(Debug, Clone)]
pub struct TrendProjector {
    q: Vec<Vec<f64>>,
}

impl TrendProjector {
    /// The basis for a degree-`degree` polynomial in (x, y) of `stations`, each row weighted
    /// by `1/sd`. Coordinates are centred and scaled; columns are orthonormalised by modified
    /// Gram–Schmidt, twice.
    pub fn new(stations: &[[f64; 3]], sd: &[f64], degree: usize) -> Result<Self, GravMagError> {
        let n = stations.len();
        let mean = |k: usize| stations.iter().map(|s| s[k]).sum::<f64>() / n.max(1) as f64;
        let (cx, cy) = (mean(0), mean(1));
        let spread = |k: usize, c: f64| {
            let s = stations
                .iter()
                .map(|s| (s[k] - c).abs())
                .fold(0.0, f64::max);
            if s > 0.0 { s } else { 1.0 }
        };
        let (sx, sy) = (spread(0, cx), spread(1, cy));
        let mut q: Vec<Vec<f64>> = Vec::new();
        for (a, b) in trend_terms(degree) {
            let mut col: Vec<f64> = stations
                .iter()
                .zip(sd)
                .map(|(s, e)| {
                    ((s[0] - cx) / sx).powi(a as i32) * ((s[1] - cy) / sy).powi(b as i32) / e
                })
                .collect();
            let norm0 = dot(&col, &col).sqrt();
            for _ in 0..2 {
                for u in &q {
                    let d = dot(u, &col);
                    col.iter_mut().zip(u).for_each(|(c, uu)| *c -= d * uu);
                }
            }
            let norm = dot(&col, &col).sqrt();
            if norm.is_nan() || norm <= 1e-10 * norm0 {
                return Err(GravMagError::InvalidInput(format!(
                    "the stations do not determine a degree-{degree} trend (are they on a line?)"
                )));
            }
            col.iter_mut().for_each(|c| *c /= norm);
            q.push(col);
        }
        Ok(TrendProjector { q })
    }

    /// `Qᵀ v`.
    pub fn coefficients(&self, v: &[f64]) -> Vec<f64> {
        self.q.iter().map(|u| dot(u, v)).collect()
    }

    /// `Q c`.
    pub fn expand(&self, c: &[f64]) -> Vec<f64> {
        let n = self.q.first().map_or(0, Vec::len);
        let mut out = vec![0.0; n];
        for (u, ck) in self.q.iter().zip(c) {
            out.iter_mut().zip(u).for_each(|(o, uu)| *o += ck * uu);
        }
        out
    }

    /// `v ← P v`.
    pub fn project(&self, v: &mut [f64]) {
        for u in &self.q {
            let d = dot(u, v);
            v.iter_mut().zip(u).for_each(|(x, uu)| *x -= d * uu);
        }
    }

    /// Project every column of the row-major N × M matrix `a` in place; returns `Qᵀ a`
    /// (p rows of M) of the matrix before projection.
    pub fn project_columns(&self, a: &mut [f64], m: usize) -> Vec<Vec<f64>> {
        let k: Vec<Vec<f64>> = self
            .q
            .iter()
            .map(|u| {
                let mut row = vec![0.0; m];
                for (ar, uu) in a.chunks_exact(m).zip(u) {
                    row.iter_mut().zip(ar).for_each(|(r, x)| *r += uu * x);
                }
                row
            })
            .collect();
        for (r, ar) in a.chunks_exact_mut(m).enumerate() {
            for (u, kr) in self.q.iter().zip(&k) {
                let ur = u[r];
                ar.iter_mut().zip(kr).for_each(|(x, kk)| *x -= ur * kk);
            }
        }
        k
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_removes_a_plane_and_keeps_what_is_orthogonal() {
        // A weighted plane is annihilated to 1e-12 relative; the projector is idempotent.
        let st: Vec<[f64; 3]> = (0..25)
            .map(|k| [10.0 * (k % 5) as f64, 10.0 * (k / 5) as f64, 0.0])
            .collect();
        let sd = vec![0.5; 25];
        let p = TrendProjector::new(&st, &sd, 1).unwrap();
        let mut plane: Vec<f64> = st
            .iter()
            .map(|s| (3.0 + 0.2 * s[0] - 0.1 * s[1]) / 0.5)
            .collect();
        let scale = plane.iter().fold(0.0f64, |a, b| a.max(b.abs()));
        p.project(&mut plane);
        assert!(plane.iter().all(|v| v.abs() < 1e-12 * scale));
        let mut bump: Vec<f64> = st
            .iter()
            .map(|s| (-(s[0] - 20.0).powi(2) / 50.0).exp())
            .collect();
        p.project(&mut bump);
        let once = bump.clone();
        p.project(&mut bump);
        assert!(bump.iter().zip(&once).all(|(a, b)| (a - b).abs() < 1e-12));
        assert!(TrendProjector::new(&st[..5], &sd[..5], 1).is_err());
    }
}
