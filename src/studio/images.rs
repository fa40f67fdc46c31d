//! Figures as textures: a PNG is decoded once (with the `image` crate) and kept for the
//! session, keyed by path and modification time, so a figure rewritten by a later step is
//! shown anew.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Decoded figures by path.
#[derive(Default)]
pub struct ImageCache {
    map: HashMap<PathBuf, (Option<SystemTime>, Option<egui::TextureHandle>)>,
}

impl std::fmt::Debug for ImageCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageCache")
            .field("figures", &self.map.len())
            .finish()
    }
}

impl ImageCache {
    /// The texture for `path`, decoded on first use; `None` when it cannot be read.
    pub fn texture(&mut self, ctx: &egui::Context, path: &Path) -> Option<egui::TextureHandle> {
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        if let Some((when, tex)) = self.map.get(path)
            && *when == modified
        {
            return tex.clone();
        }
        let tex = image::open(path).ok().map(|img| {
            let rgba = img.to_rgba8();
            let size = [rgba.width() as usize, rgba.height() as usize];
            let color = egui::ColorImage::from_rgba_unmultiplied(size, rgba.as_raw());
            ctx.load_texture(
                path.display().to_string(),
                color,
                egui::TextureOptions::LINEAR,
            )
        });
        self.map.insert(path.to_path_buf(), (modified, tex.clone()));
        tex
    }

    /// Show `path` scaled to fit `max` (points); the caption is the hover text, and stands in
    /// when the file cannot be read.
    pub fn show(
        &mut self,
        ui: &mut egui::Ui,
        path: &Path,
        caption: &str,
        max: egui::Vec2,
    ) -> Option<egui::Response> {
        match self.texture(ui.ctx(), path) {
            Some(tex) => {
                let size = tex.size_vec2();
                let scale = (max.x / size.x).min(max.y / size.y).min(1.0);
                Some(
                    ui.add(egui::Image::new((tex.id(), size * scale)))
                        .on_hover_text(caption),
                )
            }
            None => {
                ui.small(format!("(figure not readable: {})", path.display()));
                None
            }
        }
    }
}
