//! The `Content-Type` for each allowed file type.

use crate::name::extension;

/// The `Content-Type` to serve a bundle file with, by its extension
/// (case-insensitive); `application/octet-stream` for anything else.
pub(crate) fn media_type(path: &str) -> &'static str {
    match extension(path).as_deref() {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg") => "image/jpeg",
        Some("woff2") => "font/woff2",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::media_type;
    use crate::ALLOWED_EXTENSIONS;

    #[test]
    fn every_allowed_extension_has_a_type() {
        for ext in ALLOWED_EXTENSIONS {
            assert_ne!(
                media_type(&format!("a.{ext}")),
                "application/octet-stream",
                "{ext}"
            );
        }
        assert_eq!(media_type("img/A.PNG"), "image/png");
        assert_eq!(media_type("run.exe"), "application/octet-stream");
        assert_eq!(media_type("README"), "application/octet-stream");
    }
}
