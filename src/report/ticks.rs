//! Tick values a person would draw on an axis or a colour bar: multiples of 1, 2 or 5 × 10ᵏ on a
//! linear range (Heckbert 1990, "Nice numbers for graph labels", Graphics Gems I, pp. 61–63),
//! and decades with the minor ticks 2…9 × 10ᵏ on a logarithmic one (1-2-5 within a range
//! shorter than a decade). Every tick lies inside the range; none is a value like 39.81 or
//! 925.615.

/// The ticks of a logarithmic range: labelled (major) and unlabelled (minor).
#[derive(Debug, Clone, PartialEq)]
pub struct LogTicks {
    /// Labelled ticks: decades (or 1-2-5 values within a short range).
    pub major: Vec<f64>,
    /// Unlabelled ticks between them: 2…9 × 10ᵏ.
    pub minor: Vec<f64>,
}

/// The nice number nearest `raw` from above: 1, 2 or 5 × 10ᵏ (Heckbert 1990, `nicenum` with
/// rounding off). `raw` must be positive and finite; anything else gives 1.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let exponent = raw.log10().floor();
    let fraction = raw / 10f64.powf(exponent);
    let nice = if fraction <= 1.0 + 1e-9 {
        1.0
    } else if fraction <= 2.0 + 1e-9 {
        2.0
    } else if fraction <= 5.0 + 1e-9 {
        5.0
    } else {
        10.0
    };
    nice * 10f64.powf(exponent)
}

/// m × 10ᵏ as the nearest double to the decimal (1e-4 is `1e-4`, not 1.0000000000000001e-4).
fn mantissa_e(m: u8, k: i32) -> f64 {
    format!("{m}e{k}")
        .parse()
        .unwrap_or_else(|_| f64::from(m) * 10f64.powi(k))
}

/// `v` rounded to the decimals a tick of `step` needs (so 0.1 × 3 is 0.3, not
/// 0.30000000000000004).
fn clean(v: f64, step: f64) -> f64 {
    let decimals = (-step.log10().floor()).clamp(0.0, 15.0) as i32;
    let scale = 10f64.powi(decimals);
    let r = (v * scale).round() / scale;
    if r == 0.0 { 0.0 } else { r }
}

/// About `target` ticks inside `[lo, hi]` (either order): the multiples of a 1-2-5 step that
/// fall in the range. A range of one value gives that value; a non-finite one gives none.
pub fn linear_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    if hi - lo <= f64::EPSILON * hi.abs().max(lo.abs()).max(f64::MIN_POSITIVE) {
        return vec![lo];
    }
    let step = nice_step((hi - lo) / target.max(1) as f64);
    let slack = 1e-9 * step;
    let first = ((lo - slack) / step).ceil() as i64;
    let last = ((hi + slack) / step).floor() as i64;
    (first..=last)
        .map(|k| clean(k as f64 * step, step))
        .collect()
}

/// The ticks of `[lo, hi]` (either order, both positive) on a logarithmic axis: the decades
/// inside it, labelled, with 2…9 × 10ᵏ between them unlabelled; over more than ten decades
/// every second (or fifth…) decade is labelled and the rest are minor. A range with fewer
/// than two decades inside it is labelled at its 1-2-5 values (linear ticks when even those
/// are fewer than two). A non-positive or non-finite range gives none.
pub fn log_ticks(lo: f64, hi: f64) -> LogTicks {
    let none = LogTicks {
        major: Vec::new(),
        minor: Vec::new(),
    };
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi > 0.0) {
        return none;
    }
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    let inside = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let decades: Vec<i32> = (k0..=k1).filter(|k| inside(mantissa_e(1, *k))).collect();
    if decades.len() >= 2 {
        // At most eleven labels: every 1, 2, 5, 10, 20 … decades.
        let mut every = 1i32;
        while decades.len() as f64 / f64::from(every) > 11.0 {
            every = nice_step(f64::from(every) * 1.5) as i32;
        }
        let (major, minor): (Vec<i32>, Vec<i32>) =
            decades.iter().partition(|k| k.rem_euclid(every) == 0);
        let mut minor_v: Vec<f64> = minor.into_iter().map(|k| mantissa_e(1, k)).collect();
        if every == 1 {
            for k in k0..=k1 {
                minor_v.extend((2..=9).map(|m| mantissa_e(m, k)).filter(|v| inside(*v)));
            }
        }
        minor_v.sort_by(f64::total_cmp);
        return LogTicks {
            major: major.into_iter().map(|k| mantissa_e(1, k)).collect(),
            minor: minor_v,
        };
    }
    let mut major: Vec<f64> = Vec::new();
    for k in k0..=k1 {
        major.extend(
            [1, 2, 5]
                .map(|m| mantissa_e(m, k))
                .into_iter()
                .filter(|v| inside(*v)),
        );
    }
    if major.len() < 2 {
        major = linear_ticks(lo, hi, 4)
            .into_iter()
            .filter(|v| *v > 0.0)
            .collect();
    }
    LogTicks {
        major,
        minor: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_step_by_one_two_or_five() {
        // Heckbert's rule: the step is the nice number at or above range / target.
        assert_eq!(nice_step(0.23), 0.5);
        assert_eq!(nice_step(1.0), 1.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(120.0), 200.0);
        assert_eq!(
            linear_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        // The ERT colour bar that read "925.615": nice values inside the range only.
        assert_eq!(
            linear_ticks(12.3, 925.615, 5),
            vec![200.0, 400.0, 600.0, 800.0]
        );
        assert_eq!(
            linear_ticks(0.1, 0.7, 6),
            vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
        );
        assert_eq!(linear_ticks(-3.0, 3.0, 3), vec![-2.0, 0.0, 2.0]);
        assert_eq!(linear_ticks(5.0, -5.0, 2), vec![-5.0, 0.0, 5.0]);
        assert_eq!(linear_ticks(4.0, 4.0, 5), vec![4.0]);
        assert!(linear_ticks(f64::NAN, 1.0, 5).is_empty());
    }

    #[test]
    fn log_ticks_fall_on_decades_with_minor_ticks_between() {
        let t = log_ticks(3.162e-5, 1.0);
        assert_eq!(t.major, vec![1e-4, 1e-3, 1e-2, 1e-1, 1.0]);
        assert!(t.minor.contains(&4e-5) && t.minor.contains(&2e-1) && t.minor.len() == 8 * 4 + 6);
        assert!(!t.major.iter().any(|v| (v - 39.81).abs() < 1e-6));
        // Within a decade: the 1-2-5 values.
        assert_eq!(log_ticks(15.0, 90.0).major, vec![20.0, 50.0]);
        assert_eq!(log_ticks(100.0, 1000.0).major, vec![100.0, 1000.0]);
        // Narrower still: linear nice values.
        assert_eq!(log_ticks(21.0, 48.0).major, vec![30.0, 40.0]);
        // Twenty decades: every second one labelled, the rest minor.
        let wide = log_ticks(1e-10, 1e10);
        assert_eq!(wide.major.len(), 11);
        assert!(wide.minor.contains(&1e-9) && !wide.minor.contains(&2e-9));
        assert_eq!(
            log_ticks(-1.0, 10.0),
            LogTicks {
                major: vec![],
                minor: vec![]
            }
        );
    }
}
