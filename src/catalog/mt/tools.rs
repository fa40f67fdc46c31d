//! The MT tools' handlers: each calls [`super::run`], draws its figures, writes its exports
//! and says what it found.

#[allow(unused_imports)]
use super::*;

/// The load step.
pub fn load_mt_sites(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let paths = site_files(ctx)?;
    let mut data = read_sites(&paths);
    // A site whose format rests on a weak signature is confirmed or left out (issue 17).
    let mut kept = Vec::new();
    for s in std::mem::take(&mut data.sites) {
        let (format, guessed) = s.format();
        if !guessed {
            kept.push(s);
            continue;
        }
        match super::super::kit::confirm_guessed_format(ctx, "MT", &s.path, &format) {
            Ok(how) => {
                ctx.note(&how);
                kept.push(s);
            }
            Err(why) => data.unreadable.push((s.path.display().to_string(), why)),
        }
    }
    data.sites = kept;
    for (f, why) in &data.unreadable {
        ctx.note(&format!("MT file left out: {f}: {why}"));
    }
    if data.sites.is_empty() {
        let why: Vec<String> = data
            .unreadable
            .iter()
            .map(|(f, e)| format!("{f}: {e}"))
            .collect();
        return Err(anyhow!(
            "none of the {} MT files could be read: {}",
            paths.len(),
            why.join("; ")
        ));
    }
    let summary = sites_summary(&data);
    let mut dates: Vec<String> = data
        .sites
        .iter()
        .filter_map(|s| s.acquired_date().map(str::to_string))
        .collect();
    dates.sort();
    dates.dedup();
    let n_periods: usize = data.sites.iter().map(|s| s.period_s().len()).sum();
    let detail = data
        .sites
        .iter()
        .map(|s| {
            let (f, g) = s.format();
            let p = s.period_s();
            format!(
                "{}: {f}{}, {} periods {}–{} s ({})",
                s.site,
                if g { " (format guessed)" } else { "" },
                p.len(),
                p.first().map_or("-".into(), |v| sci(*v)),
                p.last().map_or("-".into(), |v| sci(*v)),
                s.path.display()
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let held = Held::new(
        data.clone(),
        format!(
            "{} MT sites ({} periods in all)",
            data.sites.len(),
            n_periods
        ),
    )
    .detail(detail)
    .number("n_sites", data.sites.len())
    .number("n_periods", n_periods)
    .number("n_unreadable", data.unreadable.len())
    .number("survey_dates", dates);
    Ok((summary, Outputs::new().put(keys::MT_DATA, Arc::new(held))))
}

/// The inversion step.
pub fn invert_mt(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let params = params(ctx)?;
    let data = held::<MtSites>(ctx, keys::MT_DATA)
        .cloned()
        .ok_or_else(|| anyhow!("no MT sites loaded: run load_mt_sites first"))?;
    let cancel = ctx.cancel_flag();
    let inv = {
        let c = &*ctx;
        let mut progress = |f: f64, d: &str| c.progress(f, d);
        invert_sites(&data, &params, &mut progress, &cancel)
            .map_err(|e| anyhow!("MT inversion {e}"))?
    };
    if inv.sites.is_empty() {
        return Err(anyhow!(
            "no MT site could be inverted: {}",
            inv.failed
                .iter()
                .map(|(s, e)| format!("{s}: {e}"))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    let mut out = Outputs::new();
    for (path, caption) in inversion_figures(ctx, &inv) {
        out = out.figure(path, &caption);
    }
    let rms: Vec<f64> = inv.sites.iter().map(|s| s.result.rms).collect();
    let chi2: Vec<f64> = inv.sites.iter().map(|s| s.result.chi2).collect();
    let lines: Vec<String> = inv
        .sites
        .iter()
        .map(|s| {
            let r = &s.result;
            format!(
                "{}: RMS {:.2} (χ² {:.2}) after {} iterations, μ {}, {} data, {} layers{}{}",
                s.site,
                r.rms,
                r.chi2,
                r.iterations,
                sci(r.lambda),
                r.n_data,
                r.n_cells,
                r.doi_m
                    .map(|d| format!(", DOI ≈ {}", mt::quality::depth_words(d)))
                    .unwrap_or_default(),
                if r.reached_target {
                    String::new()
                } else {
                    format!(
                        " (target RMS {} NOT reached: {})",
                        params.target_rms, r.stop_reason
                    )
                }
            )
        })
        .collect();
    let summary = format!(
        "Inverted {} MT site{} ({} curves, Occam 1D, {} layers, error floor {} % on |Z|{}): {}.{}",
        inv.sites.len(),
        if inv.sites.len() == 1 { "" } else { "s" },
        params.mode_name(),
        inv.sites[0].result.n_cells,
        params.error_floor_percent,
        if params.static_shift {
            ", static shift estimated"
        } else {
            ""
        },
        lines.join("; "),
        if inv.failed.is_empty() {
            String::new()
        } else {
            format!(
                " Not inverted: {}.",
                inv.failed
                    .iter()
                    .map(|(s, e)| format!("{s} ({e})"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    );
    let max_chi2 = chi2.iter().copied().fold(f64::NAN, f64::max);
    let held = Held::new(
        inv.clone(),
        format!(
            "{} MT layered models (RMS {})",
            inv.sites.len(),
            rms.iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .detail(lines.join("\n"))
    .number("chi2", max_chi2)
    .number("chi2_by_site", chi2)
    .number("rms_by_site", rms)
    .number(
        "iterations",
        inv.sites
            .iter()
            .map(|s| s.result.iterations)
            .max()
            .unwrap_or(0),
    )
    .number(
        "n_data",
        inv.sites.iter().map(|s| s.result.n_data).sum::<usize>(),
    )
    .number("n_cells", inv.sites[0].result.n_cells);
    let held = match write_models_csv(ctx, &inv) {
        Some(p) => held.file(p),
        None => held,
    };
    Ok((summary, out.put(keys::MT_RESULTS, Arc::new(held))))
}

/// The evaluation step.
pub fn evaluate_mt(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let inv = held::<MtInversions>(ctx, keys::MT_RESULTS)
        .cloned()
        .ok_or_else(|| anyhow!("no MT inversion in this run: run invert_mt first"))?;
    let evals: Vec<mt::MtEvaluation> = inv.sites.iter().map(|s| s.evaluation.clone()).collect();
    if evals.is_empty() {
        return Err(anyhow!("the MT inversion holds no site to evaluate"));
    }
    let score = evals.iter().map(|e| e.quality_score).sum::<f64>() / evals.len() as f64;
    let passed = evals.iter().all(|e| e.quality.passed);
    let not_one_d: Vec<String> = evals
        .iter()
        .filter(|e| {
            e.dimensionality.is_some_and(|d| {
                !d.one_d_defensible() && d != mt::DimensionalityVerdict::NotAssessable
            })
        })
        .map(|e| e.site.clone())
        .collect();
    let flagged: Vec<String> = evals
        .iter()
        .filter(|e| e.static_shift_flagged)
        .map(|e| e.site.clone())
        .collect();
    let summary = format!(
        "{} of {} MT sites pass the quality rubric (mean score {:.0}/100; {}). {}{}",
        evals.iter().filter(|e| e.quality.passed).count(),
        evals.len(),
        score,
        evals
            .iter()
            .map(|e| {
                let verdict = if e.quality.passed {
                    String::new()
                } else {
                    format!(" (does not pass: {})", e.quality.failed_checks().join(", "))
                };
                format!(
                    "{} {:.0} at RMS {:.2}{verdict}",
                    e.site, e.quality_score, e.rms
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        if not_one_d.is_empty() {
            "The dimensionality indicators support a 1D interpretation where they could be assessed. ".to_string()
        } else {
            format!(
                "1D is NOT defensible at {} (phase-tensor skew / Swift skew): read those layered models with caution. ",
                not_one_d.join(", ")
            )
        },
        if flagged.is_empty() {
            String::new()
        } else {
            format!(
                "Static shift larger than a factor {} flagged at {}.",
                mt::quality::STATIC_SHIFT_FACTOR,
                flagged.join(", ")
            )
        }
    );
    let report = evaluation_report(&inv, &evals);
    let value = MtEvaluations {
        sites: evals.clone(),
        quality_score: score,
        passed,
        not_one_d,
    };
    let held = Held::new(
        value,
        format!(
            "MT quality: mean score {score:.0}/100, {}",
            if passed {
                "all sites pass"
            } else {
                "not every site passes"
            }
        ),
    )
    .detail(
        evals
            .iter()
            .map(|e| e.summary.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .number("quality_score", score)
    .number("passed", passed)
    .number(
        "chi2",
        evals.iter().map(|e| e.chi2).fold(f64::NAN, f64::max),
    )
    .report(report);
    Ok((
        summary,
        Outputs::new().put(keys::MT_EVALUATION, Arc::new(held)),
    ))
}

/// The water-content step.
pub fn convert_mt_water_content(ctx: &mut RunContext) -> crate::runtime::ToolResult {
    let inv = held::<MtInversions>(ctx, keys::MT_RESULTS)
        .cloned()
        .ok_or_else(|| anyhow!("no MT inversion in this run: run invert_mt first"))?;
    let cfg = PetroConfig::from_json(ctx.config.get(keys::PETROPHYSICAL_PARAMS))
        .map_err(|e| anyhow!(e))?;
    let n_real = ctx
        .config
        .get(keys::N_REALIZATIONS)
        .and_then(serde_json::Value::as_u64)
        .map(|n| n as usize);
    let (prior, implied) = cfg.prior("MT layers", &PetroPrior::default_regolith("MT layers"));
    let provenance = cfg.provenance(&prior);
    let opts = cfg.monte_carlo(n_real);
    let mut all = Vec::new();
    let mut rows = Vec::new();
    let multi = inv.sites.len() > 1;
    for (i, s) in inv.sites.iter().enumerate() {
        let w = mt::mt_water_content(
            multi.then_some(i),
            &s.result,
            std::slice::from_ref(&prior),
            None,
            &opts,
        )
        .map_err(|e| anyhow!("water content of MT site {}: {e}", s.site))?;
        rows.extend(w.layers.iter().cloned());
        all.push((s.site.clone(), w));
    }
    let csv = write_product(ctx, "water_content_by_layer.csv", |p| {
        std::fs::write(p, water_content_by_layer_csv(&rows))?;
        Ok(vec![p.to_path_buf()])
    })
    .pop();
    let first: &MtWaterContent = &all[0].1;
    let summary = format!(
        "Water content per layer for {} MT site{} ({} layers each, {} realizations, seed {}): {}. Prior: {}.{}",
        all.len(),
        if multi { "s" } else { "" },
        first.layers.len(),
        first.water.n_realizations,
        first.water.seed,
        all.iter()
            .map(|(site, w)| {
                let m: Vec<f64> = w
                    .layers
                    .iter()
                    .filter(|l| {
                        inv.sites
                            .iter()
                            .find(|s| &s.site == site)
                            .and_then(|s| s.result.doi_m)
                            .is_none_or(|d| l.depth_top_m <= d)
                    })
                    .map(|l| l.water_content_mean)
                    .collect();
                let (a, b) = range_of(m.into_iter()).unwrap_or((f64::NAN, f64::NAN));
                format!(
                    "{site} θ {a:.2}–{b:.2} m³/m³ above the DOI ({} layers below it)",
                    w.n_layers_below_doi
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        provenance,
        if implied.is_empty() {
            String::new()
        } else {
            format!(" {}", implied.join(" "))
        }
    );
    let mut md = String::from("### MT water content per layer\n\n");
    md.push_str(&format!("Prior: {provenance}.\n\n"));
    for n in implied.iter().chain(first.notes.iter()) {
        md.push_str(&format!("- {n}\n"));
    }
    md.push_str("\nTable: `water_content_by_layer.csv` (θ in m³/m³ per layer and site).\n");
    let held = Held::new(
        all.clone(),
        format!("MT water content for {} site(s)", all.len()),
    )
    .number("n_sites", all.len())
    .number(keys::N_REALIZATIONS, first.water.n_realizations)
    .number(
        "prior_source",
        format!("{:?}", first.water.prior_source).to_lowercase(),
    )
    .report(md);
    let held = match csv {
        Some(p) => held.file(p),
        None => held,
    };
    Ok((
        summary,
        Outputs::new().put(keys::WATER_CONTENT, Arc::new(held)),
    ))
}
