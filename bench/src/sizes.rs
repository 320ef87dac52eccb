//! The size of bridge.js after `gzip -9`, and of its parts alone, so that the size can be worked
//! on: the wasm module, the same module as the hex text bridge.js carries (which gzip shrinks a
//! little less than the binary), and the glue. And the host module the app's pages load
//! (`host/dist`): its wasm and its JavaScript glue, raw, after `gzip -9` and as brotli at quality
//! 11 (the server's best, with its window of 4 MiB), against the wasm's brotli goal.

use std::path::Path;
use std::process::Command;

use serde::Serialize;

use crate::error::Error;
use crate::process::{capture, require};

/// The budget for `bridge.js` after `gzip -9`, in bytes.
pub(crate) const BRIDGE_JS_GZIP_BUDGET: u64 = 16 * 1024;

/// The goal for the host module's wasm as brotli at quality 11, in bytes (issue 34).
pub(crate) const HOST_WASM_BROTLI_GOAL: u64 = 100 * 1024;

/// Brotli's quality for the host module's sizes: the best, as the server uses for files up to
/// 256 KiB (it uses 10 above that, which the bench's `http_transfer` figure shows).
const BROTLI_QUALITY: i32 = 11;

/// Brotli's window, as a power of two: 22 (4 MiB), the encoder's default, as the server's.
const BROTLI_WINDOW: i32 = 22;

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

/// The raw, `gzip -9` and brotli (quality 11) size of one file, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ServedSize {
    pub(crate) raw: u64,
    pub(crate) gzip: u64,
    pub(crate) brotli: u64,
}

/// The host module as `host/dist` holds it and the server serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HostModuleSizes {
    /// `toolbridge_host_bg.wasm`.
    pub(crate) wasm: ServedSize,
    /// `toolbridge_host.js`, the glue the page imports.
    pub(crate) glue: ServedSize,
}

/// The host module's files in its folder.
pub(crate) const HOST_WASM: &str = "toolbridge_host_bg.wasm";
pub(crate) const HOST_GLUE: &str = "toolbridge_host.js";

impl HostModuleSizes {
    /// Measures the module's wasm and glue in `dist` (`host/dist`).
    pub(crate) fn measure(dist: &Path) -> Result<Self, Error> {
        let three = |name: &str| -> Result<ServedSize, Error> {
            let path = dist.join(name);
            let Size { raw, gzip } = size(&path)?;
            let brotli = brotli_size(&fs_err::read(&path)?)?;
            Ok(ServedSize { raw, gzip, brotli })
        };
        Ok(Self {
            wasm: three(HOST_WASM)?,
            glue: three(HOST_GLUE)?,
        })
    }

    /// Whether the wasm as brotli is within its goal.
    pub(crate) fn wasm_within_goal(&self) -> bool {
        self.wasm.brotli <= HOST_WASM_BROTLI_GOAL
    }

    /// What the bench prints: the wasm against its goal, then the glue.
    pub(crate) fn lines(&self) -> [String; 2] {
        [
            format!(
                "host module wasm  raw {} bytes  gzip -9 {} bytes  brotli 11 {} bytes  goal brotli \
                 ≤ {HOST_WASM_BROTLI_GOAL}  ({})",
                self.wasm.raw,
                self.wasm.gzip,
                self.wasm.brotli,
                if self.wasm_within_goal() {
                    "ok"
                } else {
                    "OVER"
                }
            ),
            format!(
                "  glue (js)       raw {:>7} bytes  gzip -9 {:>6} bytes  brotli 11 {:>6} bytes",
                self.glue.raw, self.glue.gzip, self.glue.brotli
            ),
        ]
    }
}

/// The size of `bytes` as brotli at [`BROTLI_QUALITY`] with a window of 2^[`BROTLI_WINDOW`].
pub(crate) fn brotli_size(bytes: &[u8]) -> Result<u64, Error> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: BROTLI_QUALITY,
        lgwin: BROTLI_WINDOW,
        size_hint: bytes.len(),
        ..brotli::enc::BrotliEncoderParams::default()
    };
    let mut output = Vec::with_capacity(bytes.len() / 3);
    brotli::BrotliCompress(&mut &bytes[..], &mut output, &params)
        .map_err(|e| Error::failed(format!("brotli: {e}")))?;
    u64::try_from(output.len()).map_err(|e| Error::failed(format!("brotli output size: {e}")))
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

    #[test]
    fn the_host_module_s_lines_give_its_goal() {
        let glue = ServedSize {
            raw: 59_665,
            gzip: 12_000,
            brotli: 10_500,
        };
        let mut sizes = HostModuleSizes {
            wasm: ServedSize {
                raw: 923_518,
                gzip: 300_000,
                brotli: 236_212,
            },
            glue,
        };
        assert!(!sizes.wasm_within_goal());
        assert_eq!(
            sizes.lines(),
            [
                "host module wasm  raw 923518 bytes  gzip -9 300000 bytes  brotli 11 236212 bytes  \
                 goal brotli ≤ 102400  (OVER)",
                "  glue (js)       raw   59665 bytes  gzip -9  12000 bytes  brotli 11  10500 bytes",
            ]
        );
        sizes.wasm.brotli = HOST_WASM_BROTLI_GOAL;
        assert!(sizes.wasm_within_goal());
        assert!(sizes.lines()[0].ends_with("(ok)"));
    }

    #[test]
    fn brotli_shrinks_what_repeats() {
        let text = "addLines ".repeat(1000);
        let size = brotli_size(text.as_bytes()).unwrap();
        assert!(size > 0 && size < 100, "{size}");
        assert_eq!(brotli_size(b"").unwrap(), 1);
    }
}
