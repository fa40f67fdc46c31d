//! The report as one self-contained HTML file: Markdown rendered with tables, figures embedded
//! as data URIs so the file can be mailed or archived on its own.

use std::path::Path;

use base64::Engine as _;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd, html};

/// The page's style: readable on screen and on paper.
const STYLE: &str = "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;max-width:60em;margin:2em auto;padding:0 1.5em;color:#1d2430;line-height:1.5}
h1{border-bottom:3px solid #2a6f97;padding-bottom:.3em}h2{border-bottom:1px solid #c9d6df;margin-top:2em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #c9d6df;padding:.3em .7em;text-align:left;vertical-align:top}
th{background:#eef3f7}blockquote{border-left:4px solid #e0a100;background:#fff8e5;margin:1em 0;padding:.5em 1em}
img{max-width:100%;border:1px solid #dde3e8}code{background:#f2f4f6;padding:0 .2em}em{color:#4a5561}
@media print{body{max-width:none}h2{page-break-after:avoid}img{page-break-inside:avoid}}";

/// Render `markdown` to a complete HTML page. Every string in the report may hold text from
/// outside (the goal, a data file's bytes quoted in an error, a model's words), so raw HTML
/// in the Markdown is shown as text, never passed through; links keep only http(s), mailto
/// and in-page targets; images are embedded only from the run's own `figures/` folder, and any
/// other image is named in the text instead of being loaded.
pub fn render(markdown: &str, dir: &Path, title: &str) -> String {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    let mut in_refused_image = false;
    let parser = Parser::new_ext(markdown, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => match embed(dir, &dest_url) {
            Some(embedded) => Event::Start(Tag::Image {
                link_type,
                dest_url: embedded.into(),
                title,
                id,
            }),
            None => {
                in_refused_image = true;
                Event::Text(format!("[figure not embedded: {dest_url}] ").into())
            }
        },
        Event::End(TagEnd::Image) if in_refused_image => {
            in_refused_image = false;
            Event::Text("".into())
        }
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: if safe_link(&dest_url) {
                dest_url
            } else {
                "#".into()
            },
            title,
            id,
        }),
        other => other,
    });
    let mut body = String::new();
    html::push_html(&mut body, parser);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        escape(title)
    )
}

/// The largest figure embedded (a figure is a few hundred kB; anything larger is not ours).
const MAX_FIGURE_BYTES: u64 = 32 * 1024 * 1024;

/// A link target that cannot run script or reach the reader's files: http(s), mailto, an
/// in-page anchor, or a relative path without a scheme.
fn safe_link(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        Some((scheme, _)) if !scheme.contains('/') && !scheme.contains('#') => {
            matches!(scheme, "http" | "https" | "mailto")
        }
        _ => !lower.starts_with("//"),
    }
}

/// A PNG, JPEG or SVG from the run's `figures/` folder as a data URI; `None` for anything
/// else (an absolute path, `..`, a link out of the folder, a device, a URL).
fn embed(dir: &Path, url: &str) -> Option<String> {
    let relative = Path::new(url);
    let plain = relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain || !relative.starts_with("figures") {
        return None;
    }
    let figures = dir.join("figures").canonicalize().ok()?;
    let path = dir.join(relative).canonicalize().ok()?;
    let meta = std::fs::metadata(&path).ok()?;
    if !path.starts_with(&figures) || !meta.is_file() || meta.len() > MAX_FIGURE_BYTES {
        return None;
    }
    let mime = match path.extension().and_then(|e| e.to_str()) {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        _ => return None,
    };
    let bytes = std::fs::read(&path).ok()?;
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

    /// Issue 19: the goal, a file's bytes in an error and a model's words reach the report's
    /// Markdown; none of it may become markup, script, a javascript: link or a local file
    /// embedded from outside the run's figures.
    #[test]
    fn untrusted_text_cannot_inject_markup_or_embed_local_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("figures")).unwrap();
        let outside = tempfile::NamedTempFile::with_suffix(".svg").unwrap();
        std::fs::write(outside.path(), "<svg>secret</svg>").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("figures/link.svg")).unwrap();
        let md = format!(
            "# Goal: <script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n\
             Inline <b onmouseover=alert(3)>x</b> and [a](javascript:alert(4)) and \
             [b](JavaScript:alert(5)) and [ok](https://example.org).\n\n\
             ![abs]({}) ![up](figures/../../etc/passwd) ![link](figures/link.svg)\n",
            outside.path().display()
        );
        let page = render(&md, dir.path(), "R <script>");
        let lower = page.to_ascii_lowercase();
        assert!(!lower.contains("<script"), "{page}");
        assert!(!lower.contains("<img src=x"), "{page}");
        assert!(!lower.contains("<b "), "{page}");
        assert!(!lower.contains("javascript:"), "{page}");
        assert!(!page.contains("secret"), "{page}");
        assert!(!page.contains("<img"), "no image was embeddable: {page}");
        assert!(page.contains("href=\"https://example.org\""));
        assert!(
            page.contains("[figure not embedded: figures/link.svg]"),
            "{page}"
        );
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}"
        );
    }
}
