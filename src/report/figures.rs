//! PNG figures for reports and timelines: curves (decays, ρa/φ curves, travel times, χ²
//! histories), model sections (cells coloured on a linear or log scale, with a colour bar and
//! coverage masking), images (radargrams, gridded maps) and station maps.
//!
//! Every figure has a title, axis labels with units and, where colour carries a value, a colour
//! bar with its label. Log axes are drawn by plotting log10 values and labelling ticks with the
//! values they stand for. Rendering is pure Rust (plotters' bitmap backend with an embedded
//! font), so figures are drawn the same on a headless CI machine as on a desktop.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// Why a figure could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    /// Nothing finite to draw.
    #[error("figure {title}: {reason}")]
    Empty {
        /// The figure's title.
        title: String,
        /// What was missing.
        reason: String,
    },
    /// The drawing backend failed (usually the file could not be written).
    #[error("figure {path}: {message}")]
    Draw {
        /// The PNG.
        path: String,
        /// The backend's message.
        message: String,
    },
}

/// Colour maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    /// Perceptually uniform, dark blue → yellow (default for most quantities).
    Viridis,
    /// Blue (low) → red (high), the usual resistivity and velocity map.
    SpectralR,
    /// Blue (negative) → white → red (positive), for changes and residuals.
    Diverging,
    /// Black → white, for radargrams.
    Greys,
}

impl Palette {
    fn stops(self) -> &'static [(f64, [u8; 3])] {
        match self {
            Palette::Viridis => &[
                (0.0, [68, 1, 84]),
                (0.125, [71, 44, 122]),
                (0.25, [59, 81, 139]),
                (0.375, [44, 113, 142]),
                (0.5, [33, 144, 141]),
                (0.625, [39, 173, 129]),
                (0.75, [92, 200, 99]),
                (0.875, [170, 220, 50]),
                (1.0, [253, 231, 37]),
            ],
            Palette::SpectralR => &[
                (0.0, [94, 79, 162]),
                (0.1, [50, 136, 189]),
                (0.2, [102, 194, 165]),
                (0.3, [171, 221, 164]),
                (0.4, [230, 245, 152]),
                (0.5, [255, 255, 191]),
                (0.6, [254, 224, 139]),
                (0.7, [253, 174, 97]),
                (0.8, [244, 109, 67]),
                (0.9, [213, 62, 79]),
                (1.0, [158, 1, 66]),
            ],
            Palette::Diverging => &[
                (0.0, [33, 102, 172]),
                (0.25, [146, 197, 222]),
                (0.5, [247, 247, 247]),
                (0.75, [244, 165, 130]),
                (1.0, [178, 24, 43]),
            ],
            Palette::Greys => &[(0.0, [0, 0, 0]), (1.0, [255, 255, 255])],
        }
    }

    /// The colour at `t` in 0–1 (clamped).
    pub fn at(self, t: f64) -> RGBColor {
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let stops = self.stops();
        for w in stops.windows(2) {
            let (t0, c0) = w[0];
            let (t1, c1) = w[1];
            if t <= t1 {
                let f = if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 };
                let mix =
                    |a: u8, b: u8| (f64::from(a) + f * (f64::from(b) - f64::from(a))).round() as u8;
                return RGBColor(mix(c0[0], c1[0]), mix(c0[1], c1[1]), mix(c0[2], c1[2]));
            }
        }
        let c = stops[stops.len() - 1].1;
        RGBColor(c[0], c[1], c[2])
    }
}

/// How values map to colours.
#[derive(Debug, Clone, PartialEq)]
pub struct ColourScale {
    /// Value at the bottom of the bar.
    pub min: f64,
    /// Value at the top.
    pub max: f64,
    /// Logarithmic (values must be positive).
    pub log: bool,
    /// The bar's label, with units ("Resistivity (Ω·m)").
    pub label: String,
    /// The colour map.
    pub palette: Palette,
}

impl ColourScale {
    /// A scale spanning the finite values of `values` (positive ones for a log scale).
    pub fn fit(values: &[f64], log: bool, label: &str, palette: Palette) -> ColourScale {
        let ok: Vec<f64> = values
            .iter()
            .copied()
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let (mut min, mut max) = ok
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        if !min.is_finite() {
            (min, max) = if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if max <= min {
            if log {
                min /= 1.5;
                max *= 1.5;
            } else {
                let pad = if min == 0.0 { 1.0 } else { min.abs() * 0.1 };
                min -= pad;
                max += pad;
            }
        }
        ColourScale {
            min,
            max,
            log,
            label: label.to_string(),
            palette,
        }
    }

    /// A scale symmetric about zero (for changes and residuals).
    pub fn symmetric(values: &[f64], label: &str) -> ColourScale {
        let m = values
            .iter()
            .filter(|v| v.is_finite())
            .fold(0.0f64, |a, v| a.max(v.abs()));
        let m = if m > 0.0 { m } else { 1.0 };
        ColourScale {
            min: -m,
            max: m,
            log: false,
            label: label.to_string(),
            palette: Palette::Diverging,
        }
    }

    /// The position of `v` along the bar, 0–1.
    pub fn t(&self, v: f64) -> f64 {
        if self.log {
            let (a, b) = (
                self.min.max(f64::MIN_POSITIVE).log10(),
                self.max.max(f64::MIN_POSITIVE).log10(),
            );
            if v <= 0.0 {
                return 0.0;
            }
            (v.log10() - a) / (b - a)
        } else {
            (v - self.min) / (self.max - self.min)
        }
    }

    /// The colour of `v`.
    pub fn colour(&self, v: f64) -> RGBColor {
        self.palette.at(self.t(v))
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A line.
    Line,
    /// A dashed line.
    Dashed,
    /// Markers only.
    Points,
    /// A line with markers.
    LinePoints,
}

/// One curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Abscissae.
    pub x: Vec<f64>,
    /// Ordinates.
    pub y: Vec<f64>,
    /// How it is drawn.
    pub style: Style,
    /// Its colour; `None` picks from a fixed cycle.
    pub colour: Option<(u8, u8, u8)>,
    /// Symmetric error bars on y.
    pub y_err: Option<Vec<f64>>,
}

impl Series {
    /// A line.
    pub fn line(name: &str, x: Vec<f64>, y: Vec<f64>) -> Series {
        Series {
            name: name.into(),
            x,
            y,
            style: Style::Line,
            colour: None,
            y_err: None,
        }
    }

    /// Markers.
    pub fn points(name: &str, x: Vec<f64>, y: Vec<f64>) -> Series {
        Series {
            style: Style::Points,
            ..Series::line(name, x, y)
        }
    }

    /// Builder: style.
    pub fn style(mut self, style: Style) -> Series {
        self.style = style;
        self
    }

    /// Builder: colour.
    pub fn colour(mut self, rgb: (u8, u8, u8)) -> Series {
        self.colour = Some(rgb);
        self
    }

    /// Builder: error bars.
    pub fn errors(mut self, err: Vec<f64>) -> Series {
        self.y_err = Some(err);
        self
    }
}

/// Axes and labels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Axes {
    /// The figure's title.
    pub title: String,
    /// x label with units.
    pub x_label: String,
    /// y label with units.
    pub y_label: String,
    /// Logarithmic x.
    pub log_x: bool,
    /// Logarithmic y.
    pub log_y: bool,
    /// y grows downwards (depth, time).
    pub flip_y: bool,
    /// Fixed x range (data units).
    pub x_range: Option<(f64, f64)>,
    /// Fixed y range (data units).
    pub y_range: Option<(f64, f64)>,
    /// Equal scale on both axes (sections), within the figure's size.
    pub equal_aspect: bool,
}

impl Axes {
    /// Title and labels.
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Axes {
        Axes {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            ..Default::default()
        }
    }

    /// Builder: log axes.
    pub fn log(mut self, x: bool, y: bool) -> Axes {
        self.log_x = x;
        self.log_y = y;
        self
    }

    /// Builder: y downwards.
    pub fn flipped(mut self) -> Axes {
        self.flip_y = true;
        self
    }

    /// Builder: equal aspect.
    pub fn equal(mut self) -> Axes {
        self.equal_aspect = true;
        self
    }

    fn tx(&self, v: f64) -> Option<f64> {
        transform(v, self.log_x, false)
    }

    fn ty(&self, v: f64) -> Option<f64> {
        transform(v, self.log_y, self.flip_y)
    }
}

fn transform(v: f64, log: bool, flip: bool) -> Option<f64> {
    if !v.is_finite() || (log && v <= 0.0) {
        return None;
    }
    let w = if log { v.log10() } else { v };
    Some(if flip { -w } else { w })
}

fn untransform(w: f64, log: bool, flip: bool) -> f64 {
    let w = if flip { -w } else { w };
    if log { 10f64.powf(w) } else { w }
}

/// A tick label: 4 significant digits at most, no trailing zeros.
fn tick(v: f64) -> String {
    crate::runtime::product::short_num(v)
}

/// The colours of a figure's series, in order (matplotlib's tab10 start).
pub const CYCLE: [(u8, u8, u8); 8] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (255, 127, 14),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (23, 190, 207),
];

static FONT: Once = Once::new();

fn ensure_font() {
    FONT.call_once(|| {
        // The font is compiled in; registering it cannot fail for valid TTF bytes.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            epaint_default_fonts::UBUNTU_LIGHT,
        );
    });
}

/// Width and height of figures, pixels.
pub const SIZE: (u32, u32) = (1100, 650);

fn draw_err<E: std::fmt::Display>(path: &Path) -> impl Fn(E) -> FigureError + '_ {
    move |e| FigureError::Draw {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn range_of(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (a, b) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !a.is_finite() {
        return None;
    }
    if b > a {
        let pad = (b - a) * 0.03;
        Some((a - pad, b + pad))
    } else {
        Some((a - 0.5, a + 0.5))
    }
}

fn fixed(r: Option<(f64, f64)>, log: bool, flip: bool) -> Option<(f64, f64)> {
    let (a, b) = r?;
    let (ta, tb) = (transform(a, log, flip)?, transform(b, log, flip)?);
    Some((ta.min(tb), ta.max(tb)))
}

/// Curves on linear or log axes, with a legend when there is more than one.
pub fn line_plot(path: &Path, axes: &Axes, series: &[Series]) -> Result<(), FigureError> {
    ensure_font();
    let xs = series
        .iter()
        .flat_map(|s| s.x.iter().filter_map(|v| axes.tx(*v)));
    let ys = series.iter().flat_map(|s| {
        s.y.iter().enumerate().flat_map(move |(i, v)| {
            let e = s
                .y_err
                .as_ref()
                .and_then(|e| e.get(i))
                .copied()
                .unwrap_or(0.0);
            [axes.ty(*v - e), axes.ty(*v + e), axes.ty(*v)]
        })
    });
    let empty = || FigureError::Empty {
        title: axes.title.clone(),
        reason: "no finite values to plot".into(),
    };
    let (x0, x1) = fixed(axes.x_range, axes.log_x, false)
        .or_else(|| range_of(xs))
        .ok_or_else(empty)?;
    let (y0, y1) = fixed(axes.y_range, axes.log_y, axes.flip_y)
        .or_else(|| range_of(ys.flatten()))
        .ok_or_else(empty)?;
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err(path))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&axes.title, ("sans-serif", 26))
        .margin(16)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(draw_err(path))?;
    let (lx, ly, fy) = (axes.log_x, axes.log_y, axes.flip_y);
    // A log axis gets its own ticks at decades (plotters would label nice values of log10,
    // i.e. 39.81); a linear one keeps plotters' 1-2-5 labels.
    chart
        .configure_mesh()
        .x_desc(&axes.x_label)
        .y_desc(&axes.y_label)
        .axis_desc_style(("sans-serif", 20))
        .label_style(("sans-serif", 16))
        .x_labels(if lx { 0 } else { 10 })
        .y_labels(if ly { 0 } else { 10 })
        .x_label_formatter(&|v| tick(untransform(*v, lx, false)))
        .y_label_formatter(&|v| tick(untransform(*v, ly, fy)))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(draw_err(path))?;
    let frame = ((x0, x1), (y0, y1));
    if lx {
        log_axis(&root, &mut chart, frame, true, (false, path))?;
    }
    if ly {
        log_axis(&root, &mut chart, frame, false, (fy, path))?;
    }
    for (k, s) in series.iter().enumerate() {
        let (r, g, b) = s.colour.unwrap_or(CYCLE[k % CYCLE.len()]);
        let colour = RGBColor(r, g, b);
        let pts: Vec<(f64, f64)> =
            s.x.iter()
                .zip(&s.y)
                .filter_map(|(x, y)| Some((axes.tx(*x)?, axes.ty(*y)?)))
                .collect();
        if let Some(err) = &s.y_err {
            let bars = s.x.iter().zip(&s.y).zip(err).filter_map(|((x, y), e)| {
                let (px, lo, hi) = (axes.tx(*x)?, axes.ty(*y - *e)?, axes.ty(*y + *e)?);
                Some(PathElement::new(
                    vec![(px, lo), (px, hi)],
                    colour.mix(0.6).stroke_width(1),
                ))
            });
            chart.draw_series(bars).map_err(draw_err(path))?;
        }
        let style = colour.stroke_width(2);
        let anno = match s.style {
            Style::Line | Style::LinePoints => chart
                .draw_series(LineSeries::new(pts.clone(), style))
                .map_err(draw_err(path))?,
            Style::Dashed => chart
                .draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style))
                .map_err(draw_err(path))?,
            Style::Points => chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 4, colour.filled())))
                .map_err(draw_err(path))?,
        };
        if !s.name.is_empty() {
            // Each style its own swatch: observed points and a model line never look alike.
            let (line_w, dot_r) = match s.style {
                Style::Points => (0, 4),
                Style::Line => (3, 0),
                Style::LinePoints => (2, 3),
                Style::Dashed => (1, 0),
            };
            let line = if line_w == 0 {
                TRANSPARENT.stroke_width(1)
            } else {
                colour.stroke_width(line_w)
            };
            let dot = if dot_r == 0 {
                TRANSPARENT.filled()
            } else {
                colour.filled()
            };
            anno.label(&s.name).legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (20, 0)], line)
                    + Circle::new((10, 0), dot_r.max(1), dot)
            });
        }
        if s.style == Style::LinePoints {
            chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 3, colour.filled())))
                .map_err(draw_err(path))?;
        }
    }
    if series.iter().filter(|s| !s.name.is_empty()).count() > 1 {
        chart
            .configure_series_labels()
            .label_font(("sans-serif", 16))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(draw_err(path))?;
    }
    root.present().map_err(draw_err(path))
}

/// The labelled and unlabelled ticks of a colour bar: nice values inside its range
/// ([`super::ticks`]); the two ends when the range holds fewer than two nice values.
pub fn bar_ticks(scale: &ColourScale) -> (Vec<f64>, Vec<f64>) {
    let (major, minor) = if scale.log {
        let t = super::ticks::log_ticks(scale.min, scale.max);
        (t.major, t.minor)
    } else {
        (
            super::ticks::linear_ticks(scale.min, scale.max, 5),
            Vec::new(),
        )
    };
    if major.len() < 2 {
        return (vec![scale.min, scale.max], Vec::new());
    }
    (major, minor)
}

/// The frame of a chart in plotted (transformed) coordinates: ((x0, x1), (y0, y1)).
type Frame = ((f64, f64), (f64, f64));

/// Decade ticks of a log axis (`x` or y, plotted as log10, `flip`ped for a depth axis): a light
/// grid line and a label at each labelled tick, a short mark at each minor one.
fn log_axis(
    root: &DrawingArea<BitMapBackend<'_>, Shift>,
    chart: &mut ChartContext<'_, BitMapBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    ((x0, x1), (y0, y1)): Frame,
    x: bool,
    (flip, path): (bool, &Path),
) -> Result<(), FigureError> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let (w0, w1) = if x { (x0, x1) } else { (y0, y1) };
    let (a, b) = (untransform(w0, true, flip), untransform(w1, true, flip));
    let ticks = super::ticks::log_ticks(a, b);
    let w = |v: f64| transform(v, true, flip);
    let line = |wv: f64| {
        if x {
            vec![(wv, y0), (wv, y1)]
        } else {
            vec![(x0, wv), (x1, wv)]
        }
    };
    let grid = RGBColor(225, 225, 225).stroke_width(1);
    chart
        .draw_series(
            ticks
                .major
                .iter()
                .filter_map(|v| w(*v))
                .map(|wv| PathElement::new(line(wv), grid)),
        )
        .map_err(draw_err(path))?;
    let style = TextStyle::from(("sans-serif", 16).into_font());
    for v in &ticks.major {
        let Some(wv) = w(*v) else { continue };
        let (px, py) = if x {
            chart.backend_coord(&(wv, y0))
        } else {
            chart.backend_coord(&(x0, wv))
        };
        let (pos, at, mark) = if x {
            (
                Pos::new(HPos::Center, VPos::Top),
                (px, py + 8),
                [(px, py), (px, py + 5)],
            )
        } else {
            (
                Pos::new(HPos::Right, VPos::Center),
                (px - 8, py),
                [(px - 5, py), (px, py)],
            )
        };
        root.draw(&PathElement::new(mark.to_vec(), BLACK.stroke_width(1)))
            .map_err(draw_err(path))?;
        root.draw(&Text::new(tick(*v), at, style.pos(pos)))
            .map_err(draw_err(path))?;
    }
    for v in &ticks.minor {
        let Some(wv) = w(*v) else { continue };
        let mark = if x {
            let (px, py) = chart.backend_coord(&(wv, y0));
            [(px, py), (px, py + 3)]
        } else {
            let (px, py) = chart.backend_coord(&(x0, wv));
            [(px - 3, py), (px, py)]
        };
        root.draw(&PathElement::new(mark.to_vec(), BLACK.stroke_width(1)))
            .map_err(draw_err(path))?;
    }
    Ok(())
}

/// Draw a vertical colour bar with its label into `area`.
fn colour_bar(
    area: &DrawingArea<BitMapBackend<'_>, Shift>,
    scale: &ColourScale,
    path: &Path,
) -> Result<(), FigureError> {
    let (w, h) = area.dim_in_pixel();
    let top = 60i32;
    let bottom = h as i32 - 70;
    let left = 14i32;
    let bar_w = 26i32;
    let n = (bottom - top).max(1);
    for i in 0..n {
        let t = 1.0 - f64::from(i) / f64::from(n);
        let c = scale.palette.at(t);
        area.draw(&Rectangle::new(
            [(left, top + i), (left + bar_w, top + i + 1)],
            c.filled(),
        ))
        .map_err(draw_err(path))?;
    }
    area.draw(&Rectangle::new(
        [(left, top), (left + bar_w, bottom)],
        BLACK.stroke_width(1),
    ))
    .map_err(draw_err(path))?;
    // Nice values inside the range (1-2-5 steps; decades with minor ticks on a log bar).
    let (major, minor) = bar_ticks(scale);
    let at = |v: f64| {
        let t = scale.t(v);
        (t.is_finite() && (-1e-9..=1.0 + 1e-9).contains(&t))
            .then(|| bottom - (t.clamp(0.0, 1.0) * f64::from(bottom - top)).round() as i32)
    };
    for v in minor {
        if let Some(y) = at(v) {
            area.draw(&PathElement::new(
                vec![(left + bar_w, y), (left + bar_w + 3, y)],
                BLACK.stroke_width(1),
            ))
            .map_err(draw_err(path))?;
        }
    }
    for v in major {
        let Some(y) = at(v) else {
            continue;
        };
        area.draw(&PathElement::new(
            vec![(left + bar_w, y), (left + bar_w + 6, y)],
            BLACK.stroke_width(1),
        ))
        .map_err(draw_err(path))?;
        area.draw(&Text::new(
            tick(v),
            (left + bar_w + 8, y - 8),
            ("sans-serif", 15),
        ))
        .map_err(draw_err(path))?;
    }
    let label_style =
        TextStyle::from(("sans-serif", 17).into_font()).transform(FontTransform::Rotate270);
    area.draw(&Text::new(
        scale.label.clone(),
        ((w as i32) - 22, (top + bottom) / 2 + 80),
        label_style,
    ))
    .map_err(draw_err(path))?;
    Ok(())
}

/// Cells (polygons in x–z) coloured by value with a colour bar. `alpha` (0–1 per cell) fades
/// poorly covered cells; `overlays` (interfaces, electrodes, the surface) are drawn on top.
pub fn cell_section(
    path: &Path,
    axes: &Axes,
    cells: &[Vec<(f64, f64)>],
    values: &[f64],
    scale: &ColourScale,
    alpha: Option<&[f64]>,
    overlays: &[Series],
) -> Result<(), FigureError> {
    draw_cells(path, axes, cells, values, scale, alpha, overlays, tick)
}

/// [`cell_section`] with the y tick labels written by `y_tick` (a section stored with y
/// negated is labelled with positive depth or time).
#[allow(clippy::too_many_arguments)]
fn draw_cells(
    path: &Path,
    axes: &Axes,
    cells: &[Vec<(f64, f64)>],
    values: &[f64],
    scale: &ColourScale,
    alpha: Option<&[f64]>,
    overlays: &[Series],
    y_tick: fn(f64) -> String,
) -> Result<(), FigureError> {
    ensure_font();
    let empty = || FigureError::Empty {
        title: axes.title.clone(),
        reason: "no cells to draw".into(),
    };
    let (x0, x1) = axes
        .x_range
        .or_else(|| range_of(cells.iter().flatten().map(|p| p.0)))
        .ok_or_else(empty)?;
    let (y0, y1) = axes
        .y_range
        .or_else(|| range_of(cells.iter().flatten().map(|p| p.1)))
        .ok_or_else(empty)?;
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err(path))?;
    let (main, bar) = root.split_horizontally(SIZE.0 - 130);
    let mut chart = ChartBuilder::on(&main)
        .caption(&axes.title, ("sans-serif", 26))
        .margin(16)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(draw_err(path))?;
    chart
        .configure_mesh()
        .x_desc(&axes.x_label)
        .y_desc(&axes.y_label)
        .axis_desc_style(("sans-serif", 20))
        .label_style(("sans-serif", 16))
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| y_tick(*v))
        .disable_mesh()
        .draw()
        .map_err(draw_err(path))?;
    let polys = cells
        .iter()
        .zip(values)
        .enumerate()
        .filter(|(_, (_, v))| v.is_finite())
        .map(|(i, (poly, v))| {
            let c = scale.colour(*v);
            let a = alpha
                .and_then(|a| a.get(i))
                .copied()
                .unwrap_or(1.0)
                .clamp(0.0, 1.0);
            // Fade towards white instead of true transparency: the bitmap has a white ground.
            let mix = |ch: u8| (f64::from(ch) * a + 255.0 * (1.0 - a)).round() as u8;
            Polygon::new(
                poly.clone(),
                RGBColor(mix(c.0), mix(c.1), mix(c.2)).filled(),
            )
        });
    chart.draw_series(polys).map_err(draw_err(path))?;
    for (k, s) in overlays.iter().enumerate() {
        let (r, g, b) = s.colour.unwrap_or(if k == 0 {
            (0, 0, 0)
        } else {
            CYCLE[k % CYCLE.len()]
        });
        let colour = RGBColor(r, g, b);
        let pts: Vec<(f64, f64)> = s.x.iter().zip(&s.y).map(|(x, y)| (*x, *y)).collect();
        match s.style {
            Style::Points => {
                chart
                    .draw_series(
                        pts.iter()
                            .map(|p| TriangleMarker::new(*p, 5, colour.filled())),
                    )
                    .map_err(draw_err(path))?;
            }
            Style::Dashed => {
                chart
                    .draw_series(DashedLineSeries::new(pts, 8, 5, colour.stroke_width(2)))
                    .map_err(draw_err(path))?;
            }
            _ => {
                chart
                    .draw_series(LineSeries::new(pts, colour.stroke_width(2)))
                    .map_err(draw_err(path))?;
            }
        }
    }
    colour_bar(&bar, scale, path)?;
    root.present().map_err(draw_err(path))
}

/// A regular grid as an image: `grid[row][col]`, row 0 at `extent.3` (top) unless
/// `axes.flip_y`, where row 0 is at the smallest y (time or depth zero, drawn at the top).
pub fn image(
    path: &Path,
    axes: &Axes,
    grid: &[Vec<f64>],
    extent: (f64, f64, f64, f64),
    scale: &ColourScale,
    overlays: &[Series],
) -> Result<(), FigureError> {
    let rows = grid.len();
    let cols = grid.first().map_or(0, Vec::len);
    if rows == 0 || cols == 0 {
        return Err(FigureError::Empty {
            title: axes.title.clone(),
            reason: "the grid is empty".into(),
        });
    }
    // Decimate to at most the plot's pixels: nothing finer can be seen.
    let (max_c, max_r) = (900usize, 520usize);
    let cstep = cols.div_ceil(max_c).max(1);
    let rstep = rows.div_ceil(max_r).max(1);
    let (xa, xb, ya, yb) = extent;
    let dx = (xb - xa) / cols as f64;
    let dy = (yb - ya) / rows as f64;
    let mut cells = Vec::new();
    let mut values = Vec::new();
    for r in (0..rows).step_by(rstep) {
        for c in (0..cols).step_by(cstep) {
            let v = grid[r].get(c).copied().unwrap_or(f64::NAN);
            let xl = xa + c as f64 * dx;
            let xr = xl + dx * cstep as f64;
            let (yt, ybm) = if axes.flip_y {
                let y_top = ya + r as f64 * dy;
                (-(y_top), -(y_top + dy * rstep as f64))
            } else {
                let y_top = yb - r as f64 * dy;
                (y_top, y_top - dy * rstep as f64)
            };
            cells.push(vec![(xl, yt), (xr, yt), (xr, ybm), (xl, ybm)]);
            values.push(v);
        }
    }
    let mut a = axes.clone();
    let flip = axes.flip_y;
    a.flip_y = false;
    if flip {
        a.y_range = Some((-yb.max(ya), -ya.min(yb)));
    }
    let overlays: Vec<Series> = overlays
        .iter()
        .map(|s| {
            let mut s = s.clone();
            if flip {
                s.y = s.y.iter().map(|v| -v).collect();
            }
            s
        })
        .collect();
    section_with_labels(path, &a, &cells, &values, scale, &overlays, flip)
}

fn section_with_labels(
    path: &Path,
    axes: &Axes,
    cells: &[Vec<(f64, f64)>],
    values: &[f64],
    scale: &ColourScale,
    overlays: &[Series],
    negate_y_labels: bool,
) -> Result<(), FigureError> {
    let y_tick: fn(f64) -> String = if negate_y_labels { |v| tick(-v) } else { tick };
    draw_cells(path, axes, cells, values, scale, None, overlays, y_tick)
}

/// Stations on a map, coloured by value, with a colour bar.
pub fn station_map(
    path: &Path,
    axes: &Axes,
    x: &[f64],
    y: &[f64],
    values: &[f64],
    scale: &ColourScale,
) -> Result<(), FigureError> {
    ensure_font();
    let empty = || FigureError::Empty {
        title: axes.title.clone(),
        reason: "no stations with finite coordinates".into(),
    };
    let (x0, x1) = range_of(x.iter().copied()).ok_or_else(empty)?;
    let (y0, y1) = range_of(y.iter().copied()).ok_or_else(empty)?;
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err(path))?;
    let (main, bar) = root.split_horizontally(SIZE.0 - 130);
    let mut chart = ChartBuilder::on(&main)
        .caption(&axes.title, ("sans-serif", 26))
        .margin(16)
        .x_label_area_size(55)
        .y_label_area_size(90)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(draw_err(path))?;
    chart
        .configure_mesh()
        .x_desc(&axes.x_label)
        .y_desc(&axes.y_label)
        .axis_desc_style(("sans-serif", 20))
        .label_style(("sans-serif", 16))
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(draw_err(path))?;
    chart
        .draw_series(
            x.iter()
                .zip(y)
                .zip(values)
                .filter(|((a, b), v)| a.is_finite() && b.is_finite() && v.is_finite())
                .map(|((a, b), v)| Circle::new((*a, *b), 5, scale.colour(*v).filled())),
        )
        .map_err(draw_err(path))?;
    colour_bar(&bar, scale, path)?;
    root.present().map_err(draw_err(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_size(path: &Path) -> (u32, u32) {
        let img = image::open(path).unwrap();
        (img.width(), img.height())
    }

    #[test]
    fn palettes_interpolate_between_stops() {
        assert_eq!(Palette::Greys.at(0.5), RGBColor(128, 128, 128));
        assert_eq!(Palette::Viridis.at(0.0), RGBColor(68, 1, 84));
        assert_eq!(Palette::Viridis.at(2.0), RGBColor(253, 231, 37));
        let s = ColourScale::fit(&[1.0, 10.0, 100.0], true, "ρ (Ω·m)", Palette::SpectralR);
        assert!((s.t(10.0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn curves_sections_images_and_maps_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("curve.png");
        let t: Vec<f64> = (0..30)
            .map(|i| 1e-5 * 10f64.powf(i as f64 / 10.0))
            .collect();
        let y: Vec<f64> = t.iter().map(|t| t.powf(-2.5)).collect();
        line_plot(
            &p,
            &Axes::new("Decay", "Time (s)", "dBz/dt (V/m²)").log(true, true),
            &[
                Series::points("observed", t.clone(), y.clone())
                    .errors(y.iter().map(|v| v * 0.05).collect()),
                Series::line("model", t, y),
            ],
        )
        .unwrap();
        assert_eq!(png_size(&p), SIZE);

        let cells: Vec<Vec<(f64, f64)>> = (0..20)
            .flat_map(|i| {
                (0..5).map(move |j| {
                    let (x, z) = (i as f64, -(j as f64));
                    vec![(x, z), (x + 1.0, z), (x + 1.0, z - 1.0), (x, z - 1.0)]
                })
            })
            .collect();
        let vals: Vec<f64> = (0..100).map(|k| 10.0 + k as f64).collect();
        let p2 = dir.path().join("section.png");
        let scale = ColourScale::fit(&vals, true, "Resistivity (Ω·m)", Palette::SpectralR);
        cell_section(
            &p2,
            &Axes::new("Model", "x (m)", "z (m)"),
            &cells,
            &vals,
            &scale,
            Some(&vec![0.5; 100]),
            &[],
        )
        .unwrap();
        assert_eq!(png_size(&p2), SIZE);

        let grid: Vec<Vec<f64>> = (0..200)
            .map(|r| (0..300).map(|c| ((r * c) as f64).sin()).collect())
            .collect();
        let p3 = dir.path().join("image.png");
        image(
            &p3,
            &Axes::new("Radargram", "Distance (m)", "Two-way time (ns)").flipped(),
            &grid,
            (0.0, 30.0, 0.0, 100.0),
            &ColourScale::symmetric(&[1.0], "Amplitude"),
            &[],
        )
        .unwrap();
        assert_eq!(png_size(&p3), SIZE);

        let p4 = dir.path().join("map.png");
        station_map(
            &p4,
            &Axes::new("Stations", "Easting (m)", "Northing (m)"),
            &[0.0, 1.0, 2.0],
            &[0.0, 1.0, 0.5],
            &[1.0, 2.0, 3.0],
            &ColourScale::fit(&[1.0, 3.0], false, "gz (mGal)", Palette::Viridis),
        )
        .unwrap();
        assert_eq!(png_size(&p4), SIZE);
    }

    #[test]
    fn colour_bars_are_labelled_at_nice_values() {
        // Issue 24: a bar that read min/max with odd decimals (925.615) is labelled at 1-2-5
        // values inside its range, a log bar at decades with minor ticks.
        let lin = ColourScale::fit(&[12.3, 925.615], false, "ρ (Ω·m)", Palette::Viridis);
        assert_eq!(bar_ticks(&lin).0, vec![200.0, 400.0, 600.0, 800.0]);
        let log = ColourScale::fit(&[3.0, 4000.0], true, "ρ (Ω·m)", Palette::Viridis);
        let (major, minor) = bar_ticks(&log);
        assert_eq!(major, vec![10.0, 100.0, 1000.0]);
        assert!(minor.contains(&5.0) && minor.contains(&4000.0));
        // A narrow range still gets nice values, all inside it.
        let narrow = ColourScale::fit(&[1.01, 1.02], false, "x", Palette::Viridis);
        let t = bar_ticks(&narrow).0;
        assert!(
            t.len() >= 2 && t.iter().all(|v| (1.01..=1.02).contains(v)),
            "{t:?}"
        );
    }

    #[test]
    fn nothing_finite_is_an_error_not_a_blank_figure() {
        let dir = tempfile::tempdir().unwrap();
        let e = line_plot(
            &dir.path().join("x.png"),
            &Axes::new("Empty", "x", "y").log(true, false),
            &[Series::line("a", vec![-1.0], vec![1.0])],
        );
        assert!(matches!(e, Err(FigureError::Empty { .. })));
    }
}
