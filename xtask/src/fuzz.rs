//! The fuzz suites of `cargo xtask test --fuzz`: each cargo-fuzz target runs for a fixed time,
//! from its committed seeds, on the nightly toolchain that cargo-fuzz needs. A crash, a leak or
//! a timeout found by libFuzzer fails the suite; the input that caused it is written under the
//! fuzz crate's `artifacts/` directory, and libFuzzer prints how to replay it.

use std::path::Path;

use crate::error::Error;
use crate::files::create_dir;
use crate::process::{self, Ctx, describe};
use crate::setup;

/// How long each target runs, in seconds.
const SECONDS_PER_TARGET: u32 = 60;

/// One fuzz target: the cargo-fuzz crate (relative to the workspace root), the target's name, and
/// its committed seed inputs (relative to that crate).
pub(crate) struct Target {
    pub(crate) crate_dir: &'static str,
    pub(crate) name: &'static str,
    pub(crate) seeds: &'static str,
}

/// The bundle validator: arbitrary bytes as a bundle .zip.
pub(crate) const BUNDLE_READ_ZIP: Target = Target {
    crate_dir: "bundle/fuzz",
    name: "read_zip",
    seeds: "seeds/read_zip",
};

/// Runs `target` for [`SECONDS_PER_TARGET`] seconds; `Ok(false)` when libFuzzer found something.
pub(crate) fn run(ctx: &Ctx, target: &Target) -> Result<bool, Error> {
    if !setup::ensure_fuzz_tools(ctx) {
        return Err(Error::failed(
            "the fuzz tools are missing (see the setup lines above)",
        ));
    }
    let fuzz_dir = ctx.root().join(target.crate_dir);
    // The working corpus grows as the fuzzer finds new paths; it lives in target/, and the
    // committed seeds are read as a second corpus directory.
    let corpus = ctx
        .target_dir()
        .join("fuzz")
        .join("corpus")
        .join(target.name);
    create_dir(&corpus)?;
    let mut command = ctx.command("rustup");
    command
        .args([
            "run",
            setup::FUZZ_TOOLCHAIN,
            "cargo",
            "fuzz",
            "run",
            target.name,
        ])
        .arg(&corpus)
        .arg(Path::new(target.seeds))
        .args([
            "--",
            &format!("-max_total_time={SECONDS_PER_TARGET}"),
            "-print_final_stats=1",
        ])
        .current_dir(&fuzz_dir)
        .env(
            "CARGO_TARGET_DIR",
            ctx.target_dir().join("fuzz").join("build"),
        );
    println!(
        "fuzz: running `{}` in {} for {SECONDS_PER_TARGET} s",
        describe(&command),
        ctx.shown(&fuzz_dir)
    );
    process::run(&mut command)
}
