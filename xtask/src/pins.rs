//! Tool versions: the ones pinned here, and the `wasm-bindgen` version the workspace pins.

use crate::ctx::Ctx;
use crate::error::Error;

/// The rustup target every wasm crate builds for.
pub(crate) const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// The `wasm-pack` release `cargo xtask setup` installs.
pub(crate) const WASM_PACK: &str = "0.15.1";

/// The `mdbook` release that builds the book in `docs/` (`cargo xtask setup` installs it, with only
/// the `search` feature: the book is built, never served by mdBook).
pub(crate) const MDBOOK: &str = "0.5.4";

/// The `lychee` release whose `--offline` link check runs over the built book in the docs suite
/// (installed without its e-mail check: the check is offline).
pub(crate) const LYCHEE: &str = "0.24.2";

/// The `cargo-fuzz` release `cargo xtask test --fuzz` installs.
pub(crate) const CARGO_FUZZ: &str = "0.13.2";

/// The `geckodriver` release `cargo xtask setup` installs.
pub(crate) const GECKODRIVER: &str = "0.37.1";

/// The `schemathesis` release (from the Python Package Index) that `cargo xtask setup` installs into a virtualenv
/// for the "api conformance" suite: the newest release when the suite was written, of the 4.x
/// line whose command line (`st run --phases`, `--report json`, dictionaries in
/// `schemathesis.toml`) the suite uses; 3.x had another. Pinned exactly, because each release
/// changes what it generates and checks, and a new one must not turn CI red on its own.
pub(crate) const SCHEMATHESIS: &str = "4.32.5";

/// The `PyJWT` release (from the Python Package Index) that the e2e suite's tool vendor server
/// verifies identity tokens with, as a vendor would: a third-party JOSE library, not ours.
pub(crate) const PYJWT: &str = "2.15.1";

/// The `cryptography` release `PyJWT`'s ES256 support runs on, beside [`PYJWT`].
pub(crate) const CRYPTOGRAPHY: &str = "50.0.2";

/// The `wasm-bindgen` version the workspace uses, which the `wasm-bindgen-cli` must match exactly:
/// what `cargo pkgid wasm-bindgen` resolves from Cargo.lock (the root `Cargo.toml` pins it with
/// `=`, so there is only ever one). Cargo refuses when there are several.
pub(crate) fn wasm_bindgen_version(ctx: &Ctx) -> Result<String, Error> {
    let pkgid = ctx.cargo().args(["pkgid", "wasm-bindgen"]).quiet().read()?;
    version_of_pkgid(&pkgid)
        .ok_or_else(|| Error::failed(format!("`cargo pkgid wasm-bindgen` printed {pkgid:?}")))
}

/// `0.2.130` from `registry+https://github.com/rust-lang/crates.io-index#wasm-bindgen@0.2.130`.
fn version_of_pkgid(pkgid: &str) -> Option<String> {
    let (_, version) = pkgid.trim().rsplit_once('@')?;
    Some(version.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_from_the_package_id() {
        assert_eq!(
            version_of_pkgid(
                "registry+https://github.com/rust-lang/crates.io-index#wasm-bindgen@0.2.130\n"
            )
            .as_deref(),
            Some("0.2.130")
        );
        assert_eq!(version_of_pkgid("path+file:///x#wasm-bindgen"), None);
    }

    #[test]
    fn the_real_workspace_pins_wasm_bindgen_exactly() {
        let version = wasm_bindgen_version(&Ctx::new().unwrap()).unwrap();
        assert_eq!(version.split('.').count(), 3, "{version}");
    }
}
