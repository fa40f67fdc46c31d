//! One way to write a number for people, and the small range helpers every summary uses.

/// A number in at most 4 significant digits, for people (`1234.5678` → `1235`, `1.5e9` →
/// `1.5e9`). The one formatter: the runtime's transcript uses the same function.
pub use crate::runtime::product::short_num as num;

/// The smallest and largest finite value (`(inf, -inf)` when there is none).
pub fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        })
}

/// The smallest and largest finite value, or `None` when there is none.
pub fn range_of(v: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (a, b) = v
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    a.is_finite().then_some((a, b))
}

/// `"a to b unit"` for the finite values, or `"no finite values"`.
pub fn range_words(v: &[f64], unit: &str) -> String {
    let (a, b) = range(v);
    if a.is_finite() {
        format!("{} to {} {unit}", num(a), num(b))
    } else {
        "no finite values".into()
    }
}

/// Velocities as `"1200, 2500"` (m/s, no decimals).
pub fn list0(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.0}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A depth or length in whole metres, or `"none"`.
pub fn opt_m(v: Option<f64>) -> String {
    v.map_or_else(|| "none".to_string(), |d| format!("{d:.0}"))
}

/// `value ± uncertainty` for people: the uncertainty to two significant digits and the value
/// to the same decimal place (`4.1014, 0.02343` → `4.101 ± 0.023`; `8.68, 1.11` →
/// `8.7 ± 1.1`; `4567, 123` → `4570 ± 120`). Without a positive finite uncertainty, the
/// value alone by [`num`].
pub fn pm(value: f64, sigma: f64) -> String {
    if !(sigma.is_finite() && sigma > 0.0 && value.is_finite()) {
        return num(value);
    }
    // Decimal places that keep two significant digits of σ (one fewer when rounding σ
    // carries it to the next power of ten: 0.0996 → 0.10, not 0.100).
    let mut places = 1 - sigma.log10().floor() as i32;
    let round = |x: f64, p: i32| (x * 10f64.powi(p)).round() / 10f64.powi(p);
    if round(sigma, places) >= 10f64.powi(2 - places) {
        places -= 1;
    }
    let (v, s) = (round(value, places), round(sigma, places));
    let decimals = places.max(0) as usize;
    format!("{v:.decimals$} ± {s:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_skip_what_is_not_finite() {
        assert_eq!(range(&[3.0, f64::NAN, -1.0]), (-1.0, 3.0));
        assert_eq!(range_of([f64::NAN].into_iter()), None);
        assert_eq!(range_words(&[1.0, 2.0], "m"), "1 to 2 m");
        assert_eq!(range_words(&[], "m"), "no finite values");
        assert_eq!(list0(&[1200.4, 2500.0]), "1200, 2500");
        assert_eq!(opt_m(None), "none");
    }

    #[test]
    fn a_value_is_written_to_its_uncertaintys_two_digits() {
        assert_eq!(pm(4.101_408, 0.023_432), "4.101 ± 0.023");
        assert_eq!(pm(8.679_925, 1.109_94), "8.7 ± 1.1");
        assert_eq!(pm(4567.0, 123.0), "4570 ± 120");
        assert_eq!(pm(3.75, 0.0996), "3.75 ± 0.10");
        assert_eq!(pm(-31.87, 2.4), "-31.9 ± 2.4");
        // No usable σ: the value alone.
        assert_eq!(pm(4.1, f64::NAN), num(4.1));
        assert_eq!(pm(4.1, 0.0), num(4.1));
    }
}
