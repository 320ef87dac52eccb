//! The fuzz suites of `cargo xtask test --fuzz` and `--long`: each cargo-fuzz target runs for a
//! fixed time, from its committed seeds, on the nightly toolchain that cargo-fuzz needs. A crash,
//! a leak or a timeout found by libFuzzer fails the target; the input that caused it is written
//! under the fuzz crate's `artifacts/` directory, and libFuzzer prints how to replay it.

use std::path::Path;
use std::time::Instant;

use crate::error::Error;
use crate::process::{self, Ctx, Stream, describe};
use crate::setup;

/// How long each target runs under `--fuzz`, in seconds.
pub(crate) const SECONDS: u32 = 60;

/// How long each target runs under `--long`, in seconds.
pub(crate) const LONG_SECONDS: u32 = 300;

/// One fuzz target: the cargo-fuzz crate (relative to the workspace root), the target's name, its
/// committed seed inputs and its libFuzzer dictionary, if any (both relative to that crate).
pub(crate) struct Target {
    pub(crate) crate_dir: &'static str,
    pub(crate) name: &'static str,
    pub(crate) seeds: &'static str,
    pub(crate) dict: Option<&'static str>,
}

/// The bundle validator: arbitrary bytes as a bundle .zip.
pub(crate) const BUNDLE: &[Target] = &[Target {
    crate_dir: "bundle/fuzz",
    name: "read_zip",
    seeds: "seeds/read_zip",
    dict: None,
}];

/// The protocol's readers of untrusted JSON: the messages the host reads from a tool, the
/// `quotes.addLines` merge, and the `quotes.create` rules.
pub(crate) const PROTOCOL: &[Target] = &[
    Target {
        crate_dir: "protocol/fuzz",
        name: "wire_message",
        seeds: "seeds/wire_message",
        dict: Some("dict/wire_message.dict"),
    },
    Target {
        crate_dir: "protocol/fuzz",
        name: "add_lines",
        seeds: "seeds/add_lines",
        dict: Some("dict/add_lines.dict"),
    },
    Target {
        crate_dir: "protocol/fuzz",
        name: "create_quote",
        seeds: "seeds/create_quote",
        dict: Some("dict/create_quote.dict"),
    },
];

/// What one run of a target did: whether libFuzzer finished without a finding, and its figures.
#[derive(Debug)]
pub(crate) struct Report {
    /// The run ended without a finding (and the build succeeded).
    pub(crate) clean: bool,
    /// The figures libFuzzer printed.
    pub(crate) stats: Stats,
}

/// The figures of one libFuzzer run, read from its output (`-print_final_stats=1`); `None` for
/// what it did not print.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Inputs executed (`stat::number_of_executed_units`).
    runs: Option<u64>,
    /// Seconds spent fuzzing (`Done N runs in S second(s)`).
    seconds: Option<u64>,
    /// Inputs added to the corpus because they reached new code (`stat::new_units_added`).
    new_units: Option<u64>,
    /// Inputs in the corpus at the last status line (`corp: N/...`).
    corpus: Option<u64>,
    /// Peak resident memory (`stat::peak_rss_mb`).
    peak_rss_mb: Option<u64>,
    /// Where libFuzzer wrote the input of a finding (`Test unit written to PATH`).
    artifact: Option<String>,
}

impl Stats {
    /// Takes in one line of libFuzzer's output.
    fn read_line(&mut self, line: &str) {
        let number = |text: &str| text.trim().parse::<u64>().ok();
        if let Some((name, value)) = line
            .strip_prefix("stat::")
            .and_then(|stat| stat.split_once(':'))
        {
            let value = || number(value);
            match name {
                "number_of_executed_units" => self.runs = value(),
                "new_units_added" => self.new_units = value(),
                "peak_rss_mb" => self.peak_rss_mb = value(),
                _ => {}
            }
        }
        if let Some(rest) = line.strip_prefix("Done ") {
            // `Done 504243 runs in 61 second(s)`
            let mut words = rest.split_whitespace();
            if let (Some(runs), Some("runs"), Some("in"), Some(seconds)) =
                (words.next(), words.next(), words.next(), words.next())
            {
                self.runs = number(runs).or(self.runs);
                self.seconds = number(seconds);
            }
        }
        // Status lines: `#4096  pulse  cov: 812 ft: 2301 corp: 402/31Kb lim: 4096 exec/s: ...`
        if line.starts_with('#') {
            if let Some((_, rest)) = line.split_once(" corp: ") {
                if let Some(count) = rest.split('/').next().and_then(number) {
                    self.corpus = Some(count);
                }
            }
        }
        if let Some((_, path)) = line.split_once("Test unit written to ") {
            self.artifact = Some(path.trim().to_owned());
        }
    }

    /// The summary line of a target: `fuzz: add_lines: 1 234 567 runs in 60 s, 812 new units
    /// (corpus 1 024), peak 310 MB, no finding`.
    pub(crate) fn figure(&self, ctx: &Ctx, name: &str, clean: bool) -> String {
        let Some(runs) = self.runs else {
            return format!("fuzz: {name}: did not fuzz (see the output above)");
        };
        let mut parts = vec![match self.seconds {
            Some(seconds) => format!("{} runs in {} s", grouped(runs), grouped(seconds)),
            None => format!("{} runs", grouped(runs)),
        }];
        match (self.new_units, self.corpus) {
            (Some(new), Some(corpus)) => parts.push(format!(
                "{} new units (corpus {})",
                grouped(new),
                grouped(corpus)
            )),
            (Some(new), None) => parts.push(format!("{} new units", grouped(new))),
            (None, Some(corpus)) => parts.push(format!("corpus {}", grouped(corpus))),
            (None, None) => {}
        }
        if let Some(peak) = self.peak_rss_mb {
            parts.push(format!("peak {} MB", grouped(peak)));
        }
        parts.push(match (clean, &self.artifact) {
            (true, _) => "no finding".to_owned(),
            (false, Some(path)) => format!("FINDING: {}", ctx.shown(Path::new(path))),
            (false, None) => "FAILED (see the output above)".to_owned(),
        });
        format!("fuzz: {name}: {}", parts.join(", "))
    }
}

/// Runs `target` for `seconds` and reads its figures from libFuzzer's output.
pub(crate) fn run(ctx: &Ctx, target: &Target, seconds: u32) -> Result<Report, Error> {
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
    fs_err::create_dir_all(&corpus)?;
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
            &format!("-max_total_time={seconds}"),
            "-print_final_stats=1",
        ])
        .current_dir(&fuzz_dir)
        .env(
            "CARGO_TARGET_DIR",
            ctx.target_dir().join("fuzz").join("build"),
        );
    if let Some(dict) = target.dict {
        command.arg(format!("-dict={}", fuzz_dir.join(dict).display()));
    }
    println!(
        "fuzz: running `{}` in {} for {seconds} s",
        describe(&command),
        ctx.shown(&fuzz_dir)
    );
    let mut stats = Stats::default();
    let mut fuzzing_since = None;
    // cargo-fuzz and libFuzzer write everything to stderr.
    let clean = process::run_watching(&mut command, Stream::Stderr, &mut |line| {
        if line.starts_with("INFO: Seed:") {
            fuzzing_since = Some(Instant::now());
        }
        stats.read_line(line);
    })?;
    // A finding ends the run without a `Done` line: the time is then measured here.
    if stats.seconds.is_none() {
        stats.seconds = fuzzing_since.map(|since| since.elapsed().as_secs());
    }
    Ok(Report { clean, stats })
}

/// `1234567` as `1 234 567`.
fn grouped(number: u64) -> String {
    let digits = number.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_stats_and_status_lines_are_read() {
        let mut stats = Stats::default();
        for line in [
            "INFO: Seed: 1234",
            "#2\tINITED cov: 10 ft: 11 corp: 1/1b exec/s: 0 rss: 30Mb",
            "#4096\tpulse  cov: 812 ft: 2301 corp: 402/31Kb lim: 4096 exec/s: 2048 rss: 310Mb",
            "Done 1234567 runs in 61 second(s)",
            "stat::number_of_executed_units: 1234567",
            "stat::average_exec_per_sec:     20238",
            "stat::new_units_added:          812",
            "stat::slowest_unit_time_sec:    0",
            "stat::peak_rss_mb:              310",
        ] {
            stats.read_line(line);
        }
        assert_eq!(
            stats,
            Stats {
                runs: Some(1_234_567),
                seconds: Some(61),
                new_units: Some(812),
                corpus: Some(402),
                peak_rss_mb: Some(310),
                artifact: None,
            }
        );
    }

    #[test]
    fn a_finding_names_its_input() {
        let mut stats = Stats::default();
        stats.read_line(
            "artifact_prefix='/w/protocol/fuzz/artifacts/add_lines/'; \
             Test unit written to /w/protocol/fuzz/artifacts/add_lines/crash-70cc6c",
        );
        assert_eq!(
            stats.artifact.as_deref(),
            Some("/w/protocol/fuzz/artifacts/add_lines/crash-70cc6c")
        );
    }

    #[test]
    fn the_figure_is_one_line() {
        let ctx = Ctx::new().unwrap();
        let stats = Stats {
            runs: Some(1_234_567),
            seconds: Some(60),
            new_units: Some(812),
            corpus: Some(1024),
            peak_rss_mb: Some(310),
            artifact: None,
        };
        assert_eq!(
            stats.figure(&ctx, "add_lines", true),
            "fuzz: add_lines: 1 234 567 runs in 60 s, 812 new units (corpus 1 024), \
             peak 310 MB, no finding"
        );
        let crashed = Stats {
            runs: Some(3),
            artifact: Some(ctx.root().join("a/crash-1").display().to_string()),
            ..Stats::default()
        };
        assert_eq!(
            crashed.figure(&ctx, "x", false),
            "fuzz: x: 3 runs, FINDING: a/crash-1"
        );
        assert_eq!(
            Stats::default().figure(&ctx, "x", false),
            "fuzz: x: did not fuzz (see the output above)"
        );
    }

    #[test]
    fn target_names_are_unique_as_they_share_the_corpus_folder() {
        let all: Vec<&str> = BUNDLE.iter().chain(PROTOCOL).map(|t| t.name).collect();
        for (i, name) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(name), "{name}");
        }
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1 000");
        assert_eq!(grouped(1_234_567), "1 234 567");
        assert_eq!(grouped(123_456_789), "123 456 789");
    }
}
