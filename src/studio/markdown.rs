//! The report's Markdown drawn as a document (issue 24, item 5): headings, paragraphs with
//! emphasis and code, bullet and numbered lists, tables as grids, figures as images (from the
//! report's own folder), rules and code blocks. Parsed with pulldown-cmark (the same parser
//! the HTML report uses); raw HTML in the text is shown as text, never interpreted.

use std::path::Path;

use egui::text::{LayoutJob, TextFormat};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::images::ImageCache;

/// One piece of inline text and how it is set.
#[derive(Debug, Clone, Default)]
struct Span {
    text: String,
    strong: bool,
    italic: bool,
    code: bool,
}

/// What the renderer is inside of.
#[derive(Debug, Default)]
struct State {
    spans: Vec<Span>,
    strong: usize,
    italic: usize,
    /// Inside a code block: its text.
    code_block: Option<String>,
    /// Inside an image: its path and the alt text so far.
    image: Option<(String, String)>,
    /// Inside a table: rows of cells (plain text), and whether the first is the header.
    table: Option<Vec<Vec<String>>>,
    cell: Option<String>,
    /// List nesting: `Some(n)` for a numbered list at item n, `None` for bullets.
    lists: Vec<Option<u64>>,
    tables_drawn: usize,
}

/// Draw `markdown` into `ui`. Figures named relative to `base` (the report's folder) are
/// drawn from there; a figure outside it or missing shows its caption instead.
pub fn markdown_ui(ui: &mut egui::Ui, markdown: &str, base: &Path, images: &mut ImageCache) {
    let width = visible_width(ui);
    ui.vertical(|ui| {
        // Labels wrap at the available width: bound it by what is visible.
        ui.set_max_width(width);
        let mut st = State::default();
        let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
        for event in Parser::new_ext(markdown, options) {
            event_ui(ui, &mut st, event, base, images);
        }
        flush_paragraph(ui, &mut st, None);
    });
}

fn event_ui(
    ui: &mut egui::Ui,
    st: &mut State,
    event: Event<'_>,
    base: &Path,
    images: &mut ImageCache,
) {
    match event {
        Event::Start(tag) => start(ui, st, tag),
        Event::End(tag) => end(ui, st, tag, base, images),
        Event::Text(t) => text(st, &t, false),
        Event::Code(t) => text(st, &t, true),
        // Raw HTML is shown as the text it is; nothing in a report is interpreted as markup.
        Event::Html(t) | Event::InlineHtml(t) => text(st, &t, false),
        Event::SoftBreak => text(st, " ", false),
        Event::HardBreak => text(st, "\n", false),
        Event::Rule => {
            flush_paragraph(ui, st, None);
            ui.separator();
        }
        _ => {}
    }
}

fn start(ui: &mut egui::Ui, st: &mut State, tag: Tag<'_>) {
    match tag {
        Tag::Strong => st.strong += 1,
        Tag::Emphasis => st.italic += 1,
        Tag::CodeBlock(_) => st.code_block = Some(String::new()),
        Tag::Image { dest_url, .. } => st.image = Some((dest_url.to_string(), String::new())),
        Tag::Table(_) => {
            flush_paragraph(ui, st, None);
            st.table = Some(Vec::new());
        }
        Tag::TableHead | Tag::TableRow => {
            if let Some(t) = &mut st.table {
                t.push(Vec::new());
            }
        }
        Tag::TableCell => st.cell = Some(String::new()),
        Tag::List(first) => {
            flush_paragraph(ui, st, None);
            st.lists.push(first);
        }
        Tag::Paragraph if !st.lists.is_empty() => {}
        Tag::Heading { .. } | Tag::Paragraph | Tag::Item => flush_paragraph(ui, st, None),
        _ => {}
    }
}

fn end(ui: &mut egui::Ui, st: &mut State, tag: TagEnd, base: &Path, images: &mut ImageCache) {
    match tag {
        TagEnd::Strong => st.strong = st.strong.saturating_sub(1),
        TagEnd::Emphasis => st.italic = st.italic.saturating_sub(1),
        TagEnd::CodeBlock => {
            if let Some(code) = st.code_block.take() {
                ui.add(egui::Label::new(
                    egui::RichText::new(code.trim_end()).monospace(),
                ));
            }
        }
        TagEnd::Image => {
            if let Some((dest, alt)) = st.image.take() {
                figure_ui(ui, base, &dest, &alt, images);
            }
        }
        TagEnd::TableCell => {
            if let (Some(cell), Some(t)) = (st.cell.take(), &mut st.table)
                && let Some(row) = t.last_mut()
            {
                row.push(cell);
            }
        }
        TagEnd::Table => {
            if let Some(rows) = st.table.take() {
                table_ui(ui, &rows, st.tables_drawn);
                st.tables_drawn += 1;
            }
        }
        TagEnd::Heading(level) => flush_paragraph(ui, st, Some(level)),
        // Inside a list the item draws its text (with its marker).
        TagEnd::Paragraph if st.lists.is_empty() => flush_paragraph(ui, st, None),
        TagEnd::Item => {
            let marker = match st.lists.last_mut() {
                Some(Some(n)) => {
                    *n += 1;
                    format!("{}. ", *n - 1)
                }
                _ => "• ".to_string(),
            };
            st.spans.insert(
                0,
                Span {
                    text: format!(
                        "{}{marker}",
                        "    ".repeat(st.lists.len().saturating_sub(1))
                    ),
                    ..Default::default()
                },
            );
            flush_paragraph(ui, st, None);
        }
        TagEnd::List(_) => {
            st.lists.pop();
        }
        _ => {}
    }
}

/// Inline text goes to the open code block, image caption, table cell or paragraph.
fn text(st: &mut State, t: &str, code: bool) {
    if let Some(block) = &mut st.code_block {
        block.push_str(t);
    } else if let Some((_, alt)) = &mut st.image {
        alt.push_str(t);
    } else if let Some(cell) = &mut st.cell {
        cell.push_str(t);
    } else {
        st.spans.push(Span {
            text: t.to_string(),
            strong: st.strong > 0,
            italic: st.italic > 0,
            code,
        });
    }
}

/// Draw the collected inline text as a heading (of `level`) or a paragraph.
fn flush_paragraph(ui: &mut egui::Ui, st: &mut State, level: Option<HeadingLevel>) {
    if st.spans.is_empty() {
        return;
    }
    let spans = std::mem::take(&mut st.spans);
    if let Some(level) = level {
        let plain: String = spans.iter().map(|s| s.text.as_str()).collect();
        ui.add_space(6.0);
        match level {
            HeadingLevel::H1 | HeadingLevel::H2 => ui.heading(plain),
            _ => ui.label(egui::RichText::new(plain).strong().size(15.0)),
        };
        return;
    }
    let mut job = LayoutJob::default();
    let style = ui.style();
    let body = egui::TextStyle::Body.resolve(style);
    let mono = egui::TextStyle::Monospace.resolve(style);
    let (normal, strong) = (
        style.visuals.text_color(),
        style.visuals.strong_text_color(),
    );
    for s in &spans {
        job.append(
            &s.text,
            0.0,
            TextFormat {
                font_id: if s.code { mono.clone() } else { body.clone() },
                color: if s.strong { strong } else { normal },
                italics: s.italic,
                ..Default::default()
            },
        );
    }
    job.wrap.max_width = visible_width(ui);
    ui.label(job);
}

/// The width text may take: what is left of the row, but no more than is visible (a panel
/// inside a horizontal scroll area offers an unbounded width, and a paragraph laid out to it
/// runs under the next panel).
fn visible_width(ui: &egui::Ui) -> f32 {
    let visible = ui.clip_rect().right() - ui.cursor().left() - 8.0;
    ui.available_width().min(visible).max(120.0)
}

/// A Markdown table as a striped grid, the header row strong.
fn table_ui(ui: &mut egui::Ui, rows: &[Vec<String>], n: usize) {
    // Columns share the visible width and their cells wrap: a wide grid would widen the
    // document and push every paragraph after it out of view.
    let n_cols = rows.iter().map(Vec::len).max().unwrap_or(1).max(1) as f32;
    let col = ((visible_width(ui) - 12.0 * (n_cols - 1.0)) / n_cols).max(60.0);
    egui::Grid::new(("report_table", n))
        .striped(true)
        .spacing([12.0, 4.0])
        .max_col_width(col)
        .show(ui, |ui| {
            for (i, row) in rows.iter().enumerate() {
                for cell in row {
                    let text = if i == 0 {
                        egui::RichText::new(cell).strong()
                    } else {
                        egui::RichText::new(cell)
                    };
                    ui.add(egui::Label::new(text).wrap());
                }
                ui.end_row();
            }
        });
    ui.add_space(4.0);
}

/// A figure of the report: drawn from the report's folder (never a path outside it), with
/// its caption on hover; the caption stands in when it cannot be drawn.
fn figure_ui(ui: &mut egui::Ui, base: &Path, dest: &str, alt: &str, images: &mut ImageCache) {
    let rel = Path::new(dest);
    let inside = rel.is_relative()
        && rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    let width = visible_width(ui).clamp(200.0, 900.0);
    let shown = inside
        && images
            .show(ui, &base.join(rel), alt, egui::vec2(width, 0.75 * width))
            .is_some();
    if !shown {
        ui.label(egui::RichText::new(format!("[figure: {alt}]")).italics());
    }
}
