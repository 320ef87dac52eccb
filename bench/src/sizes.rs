//! The size of bridge.js after `gzip -9`, and of its parts alone, so that the size can be worked
//! on: the wasm module, the same module as the hex text bridge.js carries (which gzip shrinks a
//! little less than the binary), and the glue.

use std::path::Path;
use std::process::Command;

use serde::Serialize;

use crate::error::Error;
use crate::process::{capture, require};

/// The budget for `bridge.js` after `gzip -9`, in bytes.
pub(crate) const BRIDGE_JS_GZIP_BUDGET: u64 = 16 * 1024;

/// The raw and `gzip -9` size of one file, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Size {
    pub(crate) raw: u64,
    pub(crate) gzip: u64,
}

/// bridge.js and its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BridgeSizes {
    pub(crate) bridge: Size,
    /// `wasm`, `wasm_hex` and `glue`, in that order.
    pub(crate) parts: Vec<(&'static str, Size)>,
}

impl BridgeSizes {
    /// Measures `bridge_js`, the module `wasm` (also written as hex text to `hex_out`) and the
    /// `glue`.
    pub(crate) fn measure(
        bridge_js: &Path,
        wasm: &Path,
        glue: &Path,
        hex_out: &Path,
    ) -> Result<Self, Error> {
        fs_err::write(hex_out, hex::encode(fs_err::read(wasm)?))?;
        Ok(Self {
            bridge: size(bridge_js)?,
            parts: vec![
                ("wasm", size(wasm)?),
                ("wasm_hex", size(hex_out)?),
                ("glue", size(glue)?),
            ],
        })
    }

    /// Whether bridge.js is over its budget.
    pub(crate) fn over(&self) -> bool {
        self.bridge.gzip > BRIDGE_JS_GZIP_BUDGET
    }

    /// What the bench prints: bridge.js against its budget, then a line per part.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "bridge.js  raw {} bytes  gzip -9 {} bytes  budget {BRIDGE_JS_GZIP_BUDGET}  ({})",
            self.bridge.raw,
            self.bridge.gzip,
            if self.over() { "OVER" } else { "ok" }
        )];
        lines.extend(self.parts.iter().map(|(name, part)| {
            format!(
                "  {name:<16} raw {:>7} bytes  gzip -9 {:>6} bytes",
                part.raw, part.gzip
            )
        }));
        lines
    }
}

/// The sizes of `path`: on disk, and of `gzip -9 -c path`'s output.
pub(crate) fn size(path: &Path) -> Result<Size, Error> {
    let raw = fs_err::metadata(path)?.len();
    let gzip = require("gzip", "install it (Debian: gzip)")?;
    let compressed = capture(Command::new(gzip).arg("-9").arg("-c").arg(path))?;
    let gzip = u64::try_from(compressed.len())
        .map_err(|e| Error::failed(format!("gzip output size: {e}")))?;
    Ok(Size { raw, gzip })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_give_the_budget_and_every_part() {
        let sizes = BridgeSizes {
            bridge: Size {
                raw: 60_000,
                gzip: 17_000,
            },
            parts: vec![("wasm", Size { raw: 40, gzip: 30 })],
        };
        assert!(sizes.over());
        assert_eq!(
            sizes.lines(),
            [
                "bridge.js  raw 60000 bytes  gzip -9 17000 bytes  budget 16384  (OVER)",
                "  wasm             raw      40 bytes  gzip -9     30 bytes",
            ]
        );
    }
}
