//! The report as one self-contained HTML file: Markdown rendered with tables, figures embedded
//! as data URIs so the file can be mailed or archived on its own.

use std::path::Path;

use base64::Engine as _;
use pulldown_cmark::{Event, Options, Parser, Tag, html};

/// The page's style: readable on screen and on paper.
const STYLE: &str = "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;max-width:60em;margin:2em auto;padding:0 1.5em;color:#1d2430;line-height:1.5}
h1{border-bottom:3px solid #2a6f97;padding-bottom:.3em}h2{border-bottom:1px solid #c9d6df;margin-top:2em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #c9d6df;padding:.3em .7em;text-align:left;vertical-align:top}
th{background:#eef3f7}blockquote{border-left:4px solid #e0a100;background:#fff8e5;margin:1em 0;padding:.5em 1em}
img{max-width:100%;border:1px solid #dde3e8}code{background:#f2f4f6;padding:0 .2em}em{color:#4a5561}
@media print{body{max-width:none}h2{page-break-after:avoid}img{page-break-inside:avoid}}";

/// Render `markdown` to a complete HTML page; images given by a path relative to `dir` are
/// embedded.
pub fn render(markdown: &str, dir: &Path, title: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    let parser = Parser::new_ext(markdown, options).map(|event| match event {
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let embedded = embed(dir, &dest_url).unwrap_or_else(|| dest_url.to_string());
            Event::Start(Tag::Image {
                link_type,
                dest_url: embedded.into(),
                title,
                id,
            })
        }
        other => other,
    });
    let mut body = String::new();
    html::push_html(&mut body, parser);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        escape(title)
    )
}

/// A PNG under `dir` as a data URI.
fn embed(dir: &Path, url: &str) -> Option<String> {
    if url.contains("://") || url.starts_with("data:") {
        return None;
    }
    let path = dir.join(url);
    let bytes = std::fs::read(&path).ok()?;
    let mime = match path.extension().and_then(|e| e.to_str()) {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        _ => return None,
    };
    Some(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_embedded_and_tables_rendered() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("figures")).unwrap();
        std::fs::write(dir.path().join("figures/a.png"), [137u8, 80, 78, 71]).unwrap();
        let page = render(
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n![x](figures/a.png)\n",
            dir.path(),
            "R",
        );
        assert!(page.contains("<table>"));
        assert!(
            page.contains("src=\"data:image/png;base64,iVBORw==\""),
            "{page}"
        );
        assert!(!page.contains("figures/a.png"));
    }
}
