//! Small dense solves for the 1D inversions and kriging (tens to hundreds of unknowns):
//! Cholesky factorisation A = L Lᵀ (Golub & Van Loan, *Matrix Computations*, alg. 4.2.1),
//! forward and back substitution, and the inverse for covariances and block eliminations.

use ndarray::{Array1, Array2};

/// The lower Cholesky factor of a symmetric positive-definite matrix, or `None` when a pivot
/// is not positive (the matrix is not positive definite to working precision).
pub fn cholesky(a: &Array2<f64>) -> Option<Array2<f64>> {
    let n = a.nrows();
    if a.ncols() != n {
        return None;
    }
    let mut l = Array2::<f64>::zeros((n, n));
    for j in 0..n {
        let mut d = a[[j, j]];
        for k in 0..j {
            d -= l[[j, k]] * l[[j, k]];
        }
        if !(d > 0.0 && d.is_finite()) {
            return None;
        }
        let d = d.sqrt();
        l[[j, j]] = d;
        for i in j + 1..n {
            let mut s = a[[i, j]];
            for k in 0..j {
                s -= l[[i, k]] * l[[j, k]];
            }
            l[[i, j]] = s / d;
        }
    }
    Some(l)
}

/// Solve L Lᵀ x = b for a Cholesky factor L.
pub fn cholesky_solve_factored(l: &Array2<f64>, b: &Array1<f64>) -> Array1<f64> {
    let n = l.nrows();
    let mut y = b.clone();
    for i in 0..n {
        let mut s = y[i];
        for k in 0..i {
            s -= l[[i, k]] * y[k];
        }
        y[i] = s / l[[i, i]];
    }
    for i in (0..n).rev() {
        let mut s = y[i];
        for k in i + 1..n {
            s -= l[[k, i]] * y[k];
        }
        y[i] = s / l[[i, i]];
    }
    y
}

/// Solve A x = b for symmetric positive-definite A; `None` if A is not positive definite.
pub fn spd_solve(a: &Array2<f64>, b: &Array1<f64>) -> Option<Array1<f64>> {
    cholesky(a).map(|l| cholesky_solve_factored(&l, b))
}

/// A⁻¹ for symmetric positive-definite A; `None` if A is not positive definite.
pub fn spd_inverse(a: &Array2<f64>) -> Option<Array2<f64>> {
    let l = cholesky(a)?;
    let n = a.nrows();
    let mut inv = Array2::<f64>::zeros((n, n));
    for j in 0..n {
        let mut e = Array1::<f64>::zeros(n);
        e[j] = 1.0;
        let col = cholesky_solve_factored(&l, &e);
        inv.column_mut(j).assign(&col);
    }
    Some(inv)
}

/// LU factorisation with partial pivoting of a square matrix (Golub & Van Loan alg. 3.4.1),
/// for the indefinite ordinary-kriging system: the factors packed in one matrix and the row
/// permutation; `None` when a pivot is zero (singular to working precision).
pub fn lu(a: &Array2<f64>) -> Option<(Array2<f64>, Vec<usize>)> {
    let n = a.nrows();
    if a.ncols() != n {
        return None;
    }
    let mut m = a.clone();
    let mut perm: Vec<usize> = (0..n).collect();
    let scale = a.iter().fold(0.0_f64, |s, v| s.max(v.abs())).max(1e-300);
    for k in 0..n {
        let (p, pv) = (k..n)
            .map(|i| (i, m[[i, k]].abs()))
            .fold((k, -1.0), |b, x| if x.1 > b.1 { x } else { b });
        if pv.is_nan() || pv <= 1e-14 * scale {
            return None;
        }
        if p != k {
            for j in 0..n {
                m.swap([k, j], [p, j]);
            }
            perm.swap(k, p);
        }
        for i in k + 1..n {
            let f = m[[i, k]] / m[[k, k]];
            m[[i, k]] = f;
            for j in k + 1..n {
                m[[i, j]] -= f * m[[k, j]];
            }
        }
    }
    Some((m, perm))
}

/// Solve A x = b with the factors of [`lu`].
pub fn lu_solve(lu: &Array2<f64>, perm: &[usize], b: &Array1<f64>) -> Array1<f64> {
    let n = lu.nrows();
    let mut y: Array1<f64> = perm.iter().map(|&p| b[p]).collect();
    for i in 0..n {
        for k in 0..i {
            y[i] -= lu[[i, k]] * y[k];
        }
    }
    for i in (0..n).rev() {
        for k in i + 1..n {
            y[i] -= lu[[i, k]] * y[k];
        }
        y[i] /= lu[[i, i]];
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_inverts_an_spd_matrix() {
        // A = MᵀM + I is SPD; check A x = b to 1e-12 and A A⁻¹ = I to 1e-12.
        let m = Array2::from_shape_fn((5, 5), |(i, j)| ((i * 7 + j * 3) % 5) as f64 - 2.0);
        let a = m.t().dot(&m) + Array2::<f64>::eye(5);
        let b = Array1::from_vec(vec![1.0, -2.0, 0.5, 3.0, 0.0]);
        let x = spd_solve(&a, &b).unwrap();
        assert!((a.dot(&x) - &b).iter().all(|r| r.abs() < 1e-12));
        let inv = spd_inverse(&a).unwrap();
        let id = a.dot(&inv);
        for i in 0..5 {
            for j in 0..5 {
                assert!((id[[i, j]] - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
        // LU with pivoting on an indefinite (saddle-point) matrix.
        let k = Array2::from_shape_vec((3, 3), vec![0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0])
            .unwrap();
        let (f, p) = lu(&k).unwrap();
        let x = lu_solve(&f, &p, &b.slice(ndarray::s![..3]).to_owned());
        assert!(
            (k.dot(&x) - b.slice(ndarray::s![..3]))
                .iter()
                .all(|r| r.abs() < 1e-12)
        );
        // Not positive definite: refused, not a panic.
        assert!(cholesky(&Array2::from_elem((2, 2), 1.0)).is_none());
    }
}
