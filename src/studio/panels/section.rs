//! A section drawing shared by the panels: a frame with distance and vertical axes ticked at
//! nice values, a log colour bar labelled at decades (or 1-2-5 values), and the report's own
//! resistivity scale (blue = low through yellow to dark red = high), painted directly (cells,
//! layers, blocks) rather than through a plot widget.

use crate::catalog::kit::palette;
use crate::report::ticks::{linear_ticks, log_ticks};
use crate::runtime::product::short_num;

/// The resistivity colour for t in 0–1 (of log ρ), faded towards white by `1 − alpha`: the
/// report's scale ([`palette::resistivity`]).
pub fn spectral(t: f64, alpha: f64) -> egui::Color32 {
    let (r, g, b) = palette::resistivity(t);
    let a = alpha.clamp(0.0, 1.0);
    let mix = |ch: u8| (f64::from(ch) * a + 255.0 * (1.0 - a)).round() as u8;
    egui::Color32::from_rgb(mix(r), mix(g), mix(b))
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
        egui::pos2(r.left() + 66.0, r.top() + 8.0),
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
    // Ticks at nice values inside each range (1-2-5 steps), each with a short mark.
    let tick = egui::Stroke::new(1.0, grey);
    let x_ticks = linear_ticks(x0, x1, ((plot.width() / 60.0) as usize).max(2));
    for x in x_ticks {
        let p = to(x, z0);
        painter.line_segment([p, p + egui::vec2(0.0, 4.0)], tick);
        painter.text(
            p + egui::vec2(0.0, 5.0),
            egui::Align2::CENTER_TOP,
            short_num(x),
            font.clone(),
            grey,
        );
    }
    let z_ticks = linear_ticks(z0, z1, ((plot.height() / 45.0) as usize).max(2));
    for z in z_ticks {
        let p = egui::pos2(plot.left(), to(x0, z).y);
        painter.line_segment([p, p - egui::vec2(4.0, 0.0)], tick);
        painter.text(
            p - egui::vec2(6.0, 0.0),
            egui::Align2::RIGHT_CENTER,
            format!("{} m", short_num(z)),
            font.clone(),
            grey,
        );
    }
    // The vertical axis' label, turned a quarter, at the frame's left edge (clear of the
    // tick labels).
    let galley = painter.layout_no_wrap(f.z_label.to_string(), font.clone(), grey);
    let at = egui::pos2(r.left() + 2.0, plot.center().y + galley.size().x / 2.0);
    painter.add(
        egui::epaint::TextShape::new(at, galley, grey).with_angle(-std::f32::consts::FRAC_PI_2),
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
    let bar_y = |v: f64| bar.bottom() - (((v.log10() - lo) / (hi - lo)) as f32) * bar.height();
    let ticks = log_ticks(10f64.powf(lo), 10f64.powf(hi));
    for v in &ticks.minor {
        let y = bar_y(*v);
        painter.line_segment(
            [egui::pos2(bar.right(), y), egui::pos2(bar.right() + 3.0, y)],
            tick,
        );
    }
    for v in &ticks.major {
        let y = bar_y(*v);
        painter.line_segment(
            [egui::pos2(bar.right(), y), egui::pos2(bar.right() + 5.0, y)],
            tick,
        );
        painter.text(
            egui::pos2(bar.right() + 7.0, y),
            egui::Align2::LEFT_CENTER,
            short_num(*v),
            font.clone(),
            grey,
        );
    }
    // The bar's unit under it, clear of the tick labels.
    painter.text(
        egui::pos2(bar.center().x, bar.bottom() + 4.0),
        egui::Align2::CENTER_TOP,
        f.bar_label,
        font,
        grey,
    );
}

/// A horizontal colour bar from `lo` to `hi` (linear) coloured by `colour(t)`, ticked at
/// 1-2-5 values inside the range, with its label: the one bar of the seismic and grav/mag
/// panels.
pub fn horizontal_bar_ui(
    ui: &mut egui::Ui,
    (lo, hi): (f64, f64),
    label: &str,
    colour: impl Fn(f64) -> egui::Color32,
) {
    ui.horizontal(|ui| {
        let (rect, _) = ui.allocate_exact_size(egui::vec2(260.0, 28.0), egui::Sense::hover());
        let bar = egui::Rect::from_min_size(rect.min, egui::vec2(rect.width(), 12.0));
        let n = 48;
        let w = bar.width() / n as f32;
        for k in 0..n {
            let r = egui::Rect::from_min_size(
                egui::pos2(bar.left() + k as f32 * w, bar.top()),
                egui::vec2(w + 0.5, bar.height()),
            );
            ui.painter()
                .rect_filled(r, 0.0, colour((f64::from(k) + 0.5) / f64::from(n)));
        }
        let grey = ui.visuals().weak_text_color();
        let font = egui::FontId::proportional(11.0);
        if hi > lo {
            for v in linear_ticks(lo, hi, 4) {
                let x = bar.left() + (((v - lo) / (hi - lo)) as f32) * bar.width();
                ui.painter().line_segment(
                    [
                        egui::pos2(x, bar.bottom()),
                        egui::pos2(x, bar.bottom() + 3.0),
                    ],
                    egui::Stroke::new(1.0, grey),
                );
                ui.painter().text(
                    egui::pos2(x, bar.bottom() + 3.0),
                    egui::Align2::CENTER_TOP,
                    short_num(v),
                    font.clone(),
                    grey,
                );
            }
        }
        ui.label(label);
    });
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
