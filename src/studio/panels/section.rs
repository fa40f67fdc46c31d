//! A section drawing shared by the panels: a frame with distance and vertical axes, a log
//! colour bar, and a spectral colour scale (red = low resistivity, blue = high), painted
//! directly (cells, layers, blocks) rather than through a plot widget.

/// A spectral colour for t in 0–1: red (low resistivity) through yellow and green to blue.
pub fn spectral(t: f64, alpha: f64) -> egui::Color32 {
    let c: egui::Color32 =
        egui::ecolor::Hsva::new((0.7 * t.clamp(0.0, 1.0)) as f32, 0.8, 0.9, 1.0).into();
    let a = alpha.clamp(0.0, 1.0);
    let mix = |ch: u8| (f64::from(ch) * a + 255.0 * (1.0 - a)).round() as u8;
    egui::Color32::from_rgb(mix(c.r()), mix(c.g()), mix(c.b()))
}

/// The extent and colour range of a section drawing.
pub struct Frame<'a> {
    /// x range (m).
    pub x: (f64, f64),
    /// Vertical range (m), up positive.
    pub z: (f64, f64),
    /// log10 of the colour range's ends (Ω·m).
    pub log_range: (f64, f64),
    /// The vertical axis' label.
    pub z_label: &'a str,
    /// The colour bar's label.
    pub bar_label: &'a str,
}

/// Allocate a section plot with its frame, axis labels and a log colour bar, and let `draw`
/// paint the content through the (x, z) → screen mapping.
pub fn section_frame_ui(
    ui: &mut egui::Ui,
    f: &Frame<'_>,
    draw: impl FnOnce(&egui::Painter, &dyn Fn(f64, f64) -> egui::Pos2),
) {
    let ((x0, x1), (z0, z1)) = (f.x, f.z);
    let width = ui.available_width().clamp(300.0, 1000.0);
    let (resp, painter) = ui.allocate_painter(egui::vec2(width, 320.0), egui::Sense::hover());
    let r = resp.rect;
    let plot = egui::Rect::from_min_max(
        egui::pos2(r.left() + 60.0, r.top() + 8.0),
        egui::pos2(r.right() - 110.0, r.bottom() - 36.0),
    );
    let to = |x: f64, z: f64| {
        egui::pos2(
            plot.left() + ((x - x0) / (x1 - x0)) as f32 * plot.width(),
            plot.top() + ((z1 - z) / (z1 - z0)) as f32 * plot.height(),
        )
    };
    draw(&painter, &to);
    let font = egui::FontId::proportional(12.0);
    let grey = egui::Color32::DARK_GRAY;
    painter.rect_stroke(
        plot,
        0.0,
        egui::Stroke::new(1.0, grey),
        egui::StrokeKind::Outside,
    );
    painter.text(
        egui::pos2(plot.center().x, r.bottom() - 4.0),
        egui::Align2::CENTER_BOTTOM,
        "Distance along the line (m)",
        font.clone(),
        grey,
    );
    for (x, align) in [(x0, egui::Align2::LEFT_TOP), (x1, egui::Align2::RIGHT_TOP)] {
        painter.text(
            to(x, z0) + egui::vec2(0.0, 3.0),
            align,
            format!("{x:.0}"),
            font.clone(),
            grey,
        );
    }
    for (z, align) in [
        (z0, egui::Align2::RIGHT_BOTTOM),
        (z1, egui::Align2::RIGHT_TOP),
    ] {
        painter.text(
            egui::pos2(plot.left() - 4.0, to(x0, z).y),
            align,
            format!("{z:.0} m"),
            font.clone(),
            grey,
        );
    }
    painter.text(
        egui::pos2(plot.left() - 4.0, plot.center().y),
        egui::Align2::RIGHT_CENTER,
        f.z_label,
        font.clone(),
        grey,
    );
    // Colour bar.
    let bar = egui::Rect::from_min_max(
        egui::pos2(plot.right() + 16.0, plot.top()),
        egui::pos2(plot.right() + 34.0, plot.bottom()),
    );
    let n = 32;
    for k in 0..n {
        let t0 = k as f32 / n as f32;
        let t1 = (k + 1) as f32 / n as f32;
        let rr = egui::Rect::from_min_max(
            egui::pos2(bar.left(), bar.bottom() - t1 * bar.height()),
            egui::pos2(bar.right(), bar.bottom() - t0 * bar.height()),
        );
        painter.rect_filled(rr, 0.0, spectral(f64::from(t0 + 0.5 / n as f32), 1.0));
    }
    let (lo, hi) = f.log_range;
    for (v, y) in [(hi, bar.top()), (lo, bar.bottom())] {
        painter.text(
            egui::pos2(bar.right() + 4.0, y),
            egui::Align2::LEFT_CENTER,
            format!("{:.3}", 10f64.powf(v)),
            font.clone(),
            grey,
        );
    }
    painter.text(
        egui::pos2(bar.right() + 4.0, bar.center().y),
        egui::Align2::LEFT_CENTER,
        f.bar_label,
        font,
        grey,
    );
}

/// The finite log10 range of some values (a one-decade span when they are all equal).
pub fn log_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .map(f64::log10)
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return None;
    }
    Some(if hi > lo {
        (lo, hi)
    } else {
        (lo - 0.5, lo + 0.5)
    })
}
