//! The fuzz suites of `cargo xtask test --fuzz` and `--long`: each cargo-fuzz target runs for a
//! fixed time, from its committed seeds, on the nightly toolchain that cargo-fuzz needs. A crash,
//! a leak or a timeout found by libFuzzer fails the target; the input that caused it is written
//! under the fuzz crate's `artifacts/` directory, and libFuzzer prints how to replay it.

use std::time::Instant;

use crate::ctx::{self, Ctx, Stream};
use crate::error::Error;
use crate::setup;

/// How long each target runs under `--fuzz`, in seconds.
pub(crate) const SECONDS: u32 = 60;

/// How long each target runs under `--long`, in seconds.
pub(crate) const LONG_SECONDS: u32 = 300;

/// A cargo-fuzz crate (relative to the workspace root) and its targets. A target's committed
/// seeds are in the crate's `seeds/<target>/`, and its libFuzzer dictionary, when it has one, is
/// `dict/<target>.dict`.
pub(crate) struct Crate {
    dir: &'static str,
    pub(crate) targets: &'static [&'static str],
}

/// The bundle validator: arbitrary bytes as a bundle .zip.
pub(crate) const BUNDLE: Crate = Crate {
    dir: "bundle/fuzz",
    targets: &["read_zip"],
};

/// The protocol's readers of untrusted JSON: the messages the host reads from a tool, the
/// `quotes.addLines` merge, the `quotes.create` rules, and the catalog index's own reader
/// (against `serde_json`'s).
pub(crate) const PROTOCOL: Crate = Crate {
    dir: "protocol/fuzz",
    targets: &["wire_message", "add_lines", "create_quote", "catalog_index"],
};

/// Runs `target` of `krate` for `seconds`. Whether it ended without a finding, and its figures
/// in one line (libFuzzer's `Done` line and final stats, and where a finding's input went).
pub(crate) fn run(
    ctx: &Ctx,
    krate: &Crate,
    target: &str,
    seconds: u32,
) -> Result<(bool, String), Error> {
    if !setup::ensure_fuzz_tools(ctx) {
        return Err(Error::failed(
            "the fuzz tools are missing (see the setup lines above)",
        ));
    }
    let sh = ctx.sh();
    let fuzz_dir = ctx.root().join(krate.dir);
    // The working corpus grows as the fuzzer finds new paths; it lives in target/, and the
    // committed seeds are read as a second corpus directory.
    let corpus = ctx.target_dir().join("fuzz/corpus").join(target);
    sh.create_dir(&corpus)?;
    let dict = fuzz_dir.join(format!("dict/{target}.dict"));
    let _in_crate = sh.push_dir(&fuzz_dir);
    let command = sh
        .cmd("rustup")
        .args(["run", setup::FUZZ_TOOLCHAIN, "cargo", "fuzz", "run", target])
        .arg(&corpus)
        .arg(format!("seeds/{target}"))
        .args([
            "--",
            &format!("-max_total_time={seconds}"),
            "-print_final_stats=1",
        ])
        .args(dict.is_file().then(|| format!("-dict={}", dict.display())))
        .env("CARGO_TARGET_DIR", ctx.target_dir().join("fuzz/build"));
    let mut figures = Vec::new();
    let mut artifact = None;
    let started = Instant::now();
    // cargo-fuzz and libFuzzer write everything to stderr.
    let clean = ctx::run_watching(command, Stream::Stderr, &mut |line| {
        read_line(line, &mut figures, &mut artifact);
    })?;
    if figures.is_empty() {
        figures.push(format!("ran {} s", started.elapsed().as_secs()));
    }
    figures.push(match (clean, artifact) {
        (true, _) => "no finding".to_owned(),
        (false, Some(path)) => format!("FINDING: {path}"),
        (false, None) => "FAILED (see the output above)".to_owned(),
    });
    Ok((clean, format!("fuzz: {target}: {}", figures.join(", "))))
}

/// Keeps the figures of one line of libFuzzer's output, and the path of a finding's input.
fn read_line(line: &str, figures: &mut Vec<String>, artifact: &mut Option<String>) {
    let stat = line
        .strip_prefix("stat::")
        .and_then(|stat| stat.split_once(':'));
    if line.starts_with("Done ") {
        figures.push(line.to_owned());
    } else if let Some((name @ ("new_units_added" | "peak_rss_mb"), value)) = stat {
        figures.push(format!("{name} {}", value.trim()));
    }
    if let Some((_, path)) = line.split_once("Test unit written to ") {
        *artifact = Some(path.trim().to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_final_figures_and_a_finding_are_kept() {
        let (mut figures, mut artifact) = (Vec::new(), None);
        for line in [
            "#4096\tpulse  cov: 812 ft: 2301 corp: 402/31Kb lim: 4096 exec/s: 2048 rss: 310Mb",
            "Done 1234567 runs in 61 second(s)",
            "stat::number_of_executed_units: 1234567",
            "stat::new_units_added:          812",
            "stat::peak_rss_mb:              310",
            "artifact_prefix='/w/a/'; Test unit written to /w/a/crash-70cc6c",
        ] {
            read_line(line, &mut figures, &mut artifact);
        }
        assert_eq!(
            figures,
            [
                "Done 1234567 runs in 61 second(s)",
                "new_units_added 812",
                "peak_rss_mb 310"
            ]
        );
        assert_eq!(artifact.as_deref(), Some("/w/a/crash-70cc6c"));
    }

    #[test]
    fn target_names_are_unique_as_they_share_the_corpus_folder() {
        let all: Vec<&str> = [BUNDLE, PROTOCOL]
            .iter()
            .flat_map(|c| c.targets)
            .copied()
            .collect();
        for (i, name) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(name), "{name}");
        }
    }

    #[test]
    fn every_target_has_its_seeds() {
        for krate in [BUNDLE, PROTOCOL] {
            for target in krate.targets {
                let seeds = Ctx::new()
                    .unwrap()
                    .root()
                    .join(krate.dir)
                    .join("seeds")
                    .join(target);
                assert!(seeds.is_dir(), "{}", seeds.display());
            }
        }
    }
}
