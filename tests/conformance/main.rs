//! The API conformance suite: schemathesis against the OpenAPI document that a fresh debug
//! `toolbridge` server serves, with every check schemathesis has, under a seed that is new each
//! run and printed so that a failure can be replayed (`API_CONFORMANCE_SEED`).
//!
//! One test per run: first a key that has every scope the document names (all phases, the
//! stateful one included, so that the links from a new or listed quote are followed), then a
//! key of each scope alone (fewer examples; what it may not do must answer a documented 403). A
//! run fails on any failure or error; schemathesis prints each failing request as a curl
//! command, and the figures of each run come from its JSON report.
//!
//! `cargo xtask test` runs it with the server binary (`TOOLBRIDGE_BIN`), schemathesis' `st`
//! (`TOOLBRIDGE_SCHEMATHESIS`) and the folder for the database, the configuration and the
//! reports (`TOOLBRIDGE_CONFORMANCE_DIR`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::{Arc, Mutex, PoisonError};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use toolbridge_e2e::Error;
use toolbridge_e2e::schemathesis::{
    self, CHECKS, DOCUMENT, Figures, LABEL, Run, grouped, known_ids_config, page_ids, replay,
};
use toolbridge_e2e::server::{ServerOptions, ToolbridgeServer, describe};

/// Products in the server's catalog: enough for paging, quick to seed.
const PRODUCTS: u32 = 60;

/// The keys' rate limit: far more than a run sends, so that a 429 stays rare (every operation
/// that can answer one still documents it).
const RATE_LIMIT: &str = "1000000/60s";

/// Customers and products whose ids the runs may put into request bodies.
const KNOWN_IDS: u32 = 5;

/// How long one request may take before the run counts it as an error.
const REQUEST_TIMEOUT_SECS: u32 = 30;

fn main() -> ExitCode {
    let mut arguments = Arguments::from_args();
    // The runs share one server, and each prints schemathesis' output as it comes.
    arguments.test_threads = Some(1);
    match Suite::start() {
        Ok(suite) => {
            let suite = Arc::new(suite);
            let trials = suite.trials();
            let conclusion = libtest_mimic::run(&arguments, trials);
            suite.summarise();
            // `exit` ends the process without dropping the server: stop it first.
            drop(suite);
            if conclusion.has_failed() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(error) => {
            eprintln!("{LABEL}: {}", error.chain());
            ExitCode::FAILURE
        }
    }
}

/// The running server, the runs and their keys, and what the runs did.
struct Suite {
    server: ToolbridgeServer,
    st: PathBuf,
    dir: PathBuf,
    config: PathBuf,
    document_url: String,
    seed: u64,
    runs: Vec<(Run, String)>,
    lines: Mutex<Vec<(String, u64)>>,
}

impl Suite {
    /// Starts the server on a fresh database, reads the scopes its document names, makes a key
    /// per run, and writes the configuration with the ids of real customers and products.
    fn start() -> Result<Self, Error> {
        let binary = setting("TOOLBRIDGE_BIN")?;
        let st = setting("TOOLBRIDGE_SCHEMATHESIS")?;
        let dir = setting("TOOLBRIDGE_CONFORMANCE_DIR")?;
        let seed = schemathesis::seed()?;
        println!("{LABEL}: seed {seed}; replay it with `{}`", replay(seed));
        fs_err::create_dir_all(&dir)?;
        let options = ServerOptions::new(LABEL, dir.join("server"), PRODUCTS);
        let server = ToolbridgeServer::start(&binary, &options)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::io("cannot start a tokio runtime"))?;
        let base = server.base_url();
        let document = runtime.block_on(get_json(&format!("{base}{DOCUMENT}"), None))?;
        let scopes = schemathesis::document_scopes(&document)?;
        println!(
            "{LABEL}: the document names the scopes {}",
            scopes.join(", ")
        );
        let runs = schemathesis::plan(&scopes)
            .into_iter()
            .map(|run| {
                let key = server.create_key(
                    &format!("conformance {}", run.label),
                    &run.scopes,
                    RATE_LIMIT,
                )?;
                Ok((run, key))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let every_scope = runs
            .first()
            .map(|(_, key)| key.as_str())
            .ok_or_else(|| Error::failed("no run was planned"))?;
        let ids = |path: &str| {
            let url = format!("{base}{path}?pageSize={KNOWN_IDS}");
            let ids = page_ids(&runtime.block_on(get_json(&url, Some(every_scope)))?);
            if ids.is_empty() {
                return Err(Error::failed(format!("{path} listed nothing")));
            }
            Ok(ids)
        };
        let config = dir.join("schemathesis.toml");
        let customers = ids("/api/v1/customers")?;
        let products = ids("/api/v1/products")?;
        let hooks = dir.join("hooks.py");
        fs_err::write(&hooks, schemathesis::HOOKS)?;
        fs_err::write(&config, known_ids_config(&customers, &products, &hooks))?;
        Ok(Self {
            document_url: format!("{base}{DOCUMENT}"),
            server,
            st,
            dir,
            config,
            seed,
            runs,
            lines: Mutex::new(Vec::new()),
        })
    }

    /// A test per run, in order.
    fn trials(self: &Arc<Self>) -> Vec<Trial> {
        (0..self.runs.len())
            .map(|index| {
                let suite = Arc::clone(self);
                let name = self.runs[index].0.label.clone();
                Trial::test(name, move || suite.run(index))
            })
            .collect()
    }

    /// Runs schemathesis once, its output on the terminal, and reads its JSON report.
    fn run(&self, index: usize) -> Result<(), Failed> {
        let (run, key) = &self.runs[index];
        let report = self.dir.join(run.report_name());
        if report.exists() {
            fs_err::remove_file(&report).map_err(|e| e.to_string())?;
        }
        let mut command = Command::new(&self.st);
        command
            .arg("--config-file")
            .arg(&self.config)
            .args(["run", &self.document_url])
            .args(["--header", &format!("Authorization: Bearer {key}")])
            .args(["--checks", CHECKS])
            .args(["--phases", run.phases])
            .args(["--max-examples", &run.max_examples.to_string()])
            .args(["--seed", &self.seed.to_string()])
            // One worker: with two threads, CPython 3.11's `ast` module (which Hypothesis uses
            // to describe its strategies) can fail with "AST constructor recursion depth
            // mismatch" (python/cpython#106905); one worker also keeps the order of the
            // requests, and so the run, the same for a seed.
            .args(["--workers", "1"])
            .args(["--request-timeout", &REQUEST_TIMEOUT_SECS.to_string()])
            // No example database: the seed alone decides what is generated.
            .args(["--generation-database", "none"])
            .args(["--report", "json", "--report-json-path"])
            .arg(&report)
            .current_dir(&self.dir);
        let shown = describe(&command).replace(key.as_str(), "<key>");
        println!("\n{LABEL}: {}: running `{shown}`", run.label);
        let exited_cleanly = command
            .status()
            .map_err(|e| format!("cannot start `{shown}`: {e}"))?
            .success();
        let figures = read_report(&report);
        let (line, test_cases, passed) = match &figures {
            Ok(figures) => {
                let clean = figures.problems() == 0;
                let mut line = format!("{LABEL}: {}: {}", run.label, figures.summary());
                if clean && !exited_cleanly {
                    line.push_str("; FAILED: schemathesis exited with an error (see above)");
                }
                (line, figures.test_cases, clean && exited_cleanly)
            }
            Err(why) => (format!("{LABEL}: {}: FAILED: {why}", run.label), 0, false),
        };
        println!("{line}");
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((line.clone(), test_cases));
        if passed { Ok(()) } else { Err(line.into()) }
    }

    /// Each run's line again, and the totals with the seed and how to replay it.
    fn summarise(&self) {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        println!();
        for (line, _) in lines.iter() {
            println!("{line}");
        }
        let failed = lines
            .iter()
            .filter(|(line, _)| line.contains("FAILED"))
            .count();
        println!(
            "{LABEL}: {} runs, {} test cases in all, seed {} (replay: `{}`), {}",
            lines.len(),
            grouped(lines.iter().map(|(_, cases)| cases).sum()),
            self.seed,
            replay(self.seed),
            if failed == 0 {
                "all passed".to_owned()
            } else {
                format!(
                    "{failed} FAILED; the server's log is {}",
                    self.server.log().display()
                )
            }
        );
    }
}

/// The figures of a run's JSON report, or why there are none.
fn read_report(report: &Path) -> Result<Figures, String> {
    let text = fs_err::read_to_string(report).map_err(|e| e.to_string())?;
    Figures::from_report(&text).map_err(|why| format!("cannot read {}: {why}", report.display()))
}

/// The path a variable that `cargo xtask test` sets names.
fn setting(name: &str) -> Result<PathBuf, Error> {
    std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            Error::failed(format!(
                "{name} is not set: run the suite with `cargo xtask test --only \"{LABEL}\"`"
            ))
        })
}

/// The JSON body of `GET url` (with `key` as a bearer token), which must answer 200.
async fn get_json(url: &str, key: Option<&str>) -> Result<Value, Error> {
    let failed = |why: String| Error::failed(format!("GET {url}: {why}"));
    let mut request = reqwest::Client::new().get(url);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.map_err(|e| failed(e.to_string()))?;
    if response.status() != reqwest::StatusCode::OK {
        return Err(failed(format!("answered {}", response.status())));
    }
    response.json().await.map_err(|e| failed(e.to_string()))
}
