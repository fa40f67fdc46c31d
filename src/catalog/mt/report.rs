//! The MT report text: the sites as read and the evaluation.

#[allow(unused_imports)]
use super::*;

/// What was found, in numbers a reader can check.
pub fn sites_summary(data: &MtSites) -> String {
    let mut formats: Vec<(String, usize)> = Vec::new();
    for s in &data.sites {
        let (f, _) = s.format();
        match formats.iter_mut().find(|(k, _)| *k == f) {
            Some((_, n)) => *n += 1,
            None => formats.push((f, 1)),
        }
    }
    let fmt: Vec<String> = formats.iter().map(|(f, n)| format!("{f} ×{n}")).collect();
    let guessed = data.sites.iter().filter(|s| s.format().1).count();
    let counts: Vec<usize> = data.sites.iter().map(|s| s.period_s().len()).collect();
    let (cmin, cmax) = (
        counts.iter().min().copied().unwrap_or(0),
        counts.iter().max().copied().unwrap_or(0),
    );
    let pr = range_of(data.sites.iter().flat_map(|s| s.period_s().iter().copied()));
    let n_tensor = data
        .sites
        .iter()
        .filter(|s| matches!(&s.data, SiteData::Transfer(tf) if tf.z_mv_km_nt.is_some()))
        .count();
    let n_tipper = data
        .sites
        .iter()
        .filter(|s| matches!(&s.data, SiteData::Transfer(tf) if tf.tipper.is_some()))
        .count();
    let signs: Vec<String> = data
        .sites
        .iter()
        .filter_map(|s| match &s.data {
            SiteData::Transfer(tf) => mt::sounding::detect_sign_convention(tf)
                .map(|c| format!("{}: {}", s.site, c.describe())),
            SiteData::Table(_) => None,
        })
        .collect();
    format!(
        "Read {} MT site{} ({}{}): {} periods each{}; {} with an impedance tensor, {} with tipper. {}{}",
        data.sites.len(),
        if data.sites.len() == 1 { "" } else { "s" },
        fmt.join(", "),
        if guessed > 0 {
            format!("; format of {guessed} recognised from content, not extension")
        } else {
            String::new()
        },
        if cmin == cmax {
            cmin.to_string()
        } else {
            format!("{cmin}–{cmax}")
        },
        pr.map(|(a, b)| format!(", {} to {} s", sci(a), sci(b)))
            .unwrap_or_default(),
        n_tensor,
        n_tipper,
        if signs.is_empty() {
            String::new()
        } else {
            format!("Sign convention from the phases: {}. ", signs.join("; "))
        },
        if data.unreadable.is_empty() {
            String::new()
        } else {
            format!(
                "{} file(s) could not be read and were left out: {}.",
                data.unreadable.len(),
                data.unreadable
                    .iter()
                    .map(|(f, e)| format!("{f} ({e})"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    )
}

/// The report section: settings used, results per site, the quality table.
pub fn evaluation_report(inv: &MtInversions, evals: &[mt::MtEvaluation]) -> String {
    use std::fmt::Write;
    let p = &inv.params;
    let mut md = String::from("### Magnetotellurics (MT)\n\n");
    let _ = writeln!(
        md,
        "Occam 1D inversion (Constable et al. 1987): the smoothest layered model at the target \
         RMS, reached in a first phase and smoothed at it in a second.\n"
    );
    md.push_str("| Setting | Value |\n|---|---|\n");
    let _ = writeln!(md, "| Curves inverted | {} |", p.mode_name());
    let _ = writeln!(
        md,
        "| Error floor on abs(Z) | {} % |",
        p.error_floor_percent
    );
    match &p.thickness_m {
        Some(t) => {
            let _ = writeln!(md, "| Layers | {} (thicknesses given) |", t.len() + 1);
        }
        None => {
            let _ = writeln!(
                md,
                "| Layers | {} (log-spaced from the skin depths) |",
                p.n_layers
            );
        }
    }
    let _ = writeln!(md, "| Target RMS | {} |", p.target_rms);
    let _ = writeln!(md, "| Iteration cap | {} |", p.max_iterations);
    let _ = writeln!(
        md,
        "| Static shift | {} |",
        if p.static_shift {
            "estimated per curve"
        } else {
            "not estimated"
        }
    );
    md.push_str("\n| Site | Data | Layers | Iterations | RMS | χ² | μ | DOI | Static shift | Score | Passed | Dimensionality |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (s, e) in inv.sites.iter().zip(evals) {
        let r = &s.result;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.2} | {:.2} | {} | {} | {} | {:.0} | {} | {} |",
            s.site,
            r.n_data,
            r.n_cells,
            r.iterations,
            r.rms,
            r.chi2,
            sci(r.lambda),
            r.doi_m.map_or(String::new(), mt::quality::depth_words),
            e.static_shift_factor.map_or(String::new(), |f| format!(
                "×{f:.2}{}",
                if e.static_shift_flagged {
                    " (flagged)"
                } else {
                    ""
                }
            )),
            e.quality_score,
            if e.quality.passed {
                "yes".to_string()
            } else {
                format!("no ({})", e.quality.failed_checks().join(", "))
            },
            e.dimensionality.map_or("", |d| d.word()),
        );
    }
    md.push_str("\nQuality components (shared rubric; dimensionality is stated, not scored):\n\n| Site | Component | Weight | Score | Note |\n|---|---|---|---|---|\n");
    for e in evals {
        for c in &e.quality.components {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                e.site,
                c.name,
                c.weight,
                c.score
                    .map_or("unscored".to_string(), |v| format!("{v:.0}")),
                c.note.replace('|', "/").replace('\n', " ")
            );
        }
    }
    md.push('\n');
    for e in evals {
        let _ = writeln!(md, "- {}", e.summary.replace('\n', " "));
    }
    md
}
