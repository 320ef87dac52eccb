//! The "api conformance" suite: schemathesis (the release pinned in `pins.rs`, which setup
//! installs into a virtualenv under the target directory) against the OpenAPI document that a
//! fresh debug `toolbridge` server serves at `/api/v1/openapi.json`.
//!
//! It runs once with a key that has every scope the document names (all phases, the stateful
//! one included, so that the links from a new or listed quote are followed), then once per scope
//! with a key of that scope alone (fewer examples; what those keys may not do must answer a
//! documented 403). Every run checks each answer: no 5xx, a documented status code, the
//! documented content type, and headers and body as their schemas say. A run fails on any
//! failure or error; schemathesis prints each failing request as a curl command, and the figures
//! of each run come from its JSON report.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use crate::error::Error;
use crate::figures::grouped;
use crate::files::{create_dir, read_text, write};
use crate::json::{self, Value};
use crate::pins::SCHEMATHESIS;
use crate::process::{self, Ctx, describe};
use crate::toolbridge_server::{Profile, ServerOptions, ToolbridgeServer};

/// What prefixes the lines we print.
const LABEL: &str = "api conformance";

/// Where the document is, on the server.
const DOCUMENT: &str = "/api/v1/openapi.json";

/// Products in the server's catalog: enough for paging, quick to seed.
const PRODUCTS: u32 = 60;

/// The keys' rate limit: far more than a run sends, so that a 429 stays rare (every operation
/// that can answer one still documents it).
const RATE_LIMIT: &str = "1000000/60s";

/// The seed of every run, unless `API_CONFORMANCE_SEED` names another: the same examples each
/// time, so that a failure in CI is one a developer can replay.
const SEED: u64 = 20_260_301;

/// The checks every answer goes through.
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
                      response_headers_conformance,response_schema_conformance";

/// Examples per operation with the key of every scope.
const FULL_EXAMPLES: u32 = 50;

/// Examples per operation with each single-scope key.
const SCOPE_EXAMPLES: u32 = 10;

/// Customers and products whose ids the runs may put into request bodies.
const KNOWN_IDS: u32 = 5;

/// How long one request may take before the run counts it as an error.
const REQUEST_TIMEOUT_SECS: u32 = 30;

/// The virtualenv that setup installs schemathesis into.
pub(crate) fn venv_dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir()
        .join("tools")
        .join(format!("schemathesis-{SCHEMATHESIS}"))
}

/// A program of the virtualenv (`python`, `pip`, `st`).
pub(crate) fn venv_program(ctx: &Ctx, name: &str) -> PathBuf {
    if cfg!(windows) {
        venv_dir(ctx)
            .join("Scripts")
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    } else {
        venv_dir(ctx).join("bin").join(name)
    }
}

/// The version `st --version` reports (`st, version 4.32.5`), if the virtualenv has it.
pub(crate) fn installed_version(ctx: &Ctx) -> Option<String> {
    let st = venv_program(ctx, "st");
    if !st.is_file() {
        return None;
    }
    let output = process::probe(ctx.program(&st).arg("--version"))?;
    output.split_whitespace().last().map(str::to_owned)
}

/// One schemathesis run: whose key, which phases, how many examples.
struct Run {
    /// What the summary calls it: `all scopes`, or the scope.
    label: String,
    /// The key's scopes, comma-separated.
    scopes: String,
    /// `--phases`.
    phases: &'static str,
    /// `--max-examples`.
    max_examples: u32,
}

/// What one run did, from its JSON report.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Figures {
    /// Operations schemathesis tested.
    operations: u64,
    /// Test cases (requests) it generated and sent.
    test_cases: u64,
    /// Failures by check: `ST103 Undocumented status code` and how many.
    failures: Vec<(String, u64)>,
    /// Errors (a request that could not be made, a schema it could not read) and how many.
    errors: Vec<(String, u64)>,
}

impl Figures {
    /// Reads the JSON report of a run.
    fn from_report(text: &str) -> Result<Self, String> {
        let report = json::parse(text)?;
        let number = |value: &Value, path: &[&str]| {
            path.iter()
                .try_fold(value, |value, key| value.get(key))
                .and_then(Value::as_u64)
        };
        let counted = |key: &str, name: &dyn Fn(&Value) -> String| {
            report
                .get(key)
                .and_then(Value::as_array)
                .unwrap_or_default()
                .iter()
                .map(|entry| (name(entry), number(entry, &["count"]).unwrap_or(1)))
                .collect::<Vec<_>>()
        };
        let text_of = |entry: &Value, key: &str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Ok(Self {
            operations: number(&report, &["operations", "tested"])
                .ok_or("it has no operations.tested")?,
            test_cases: number(&report, &["test_cases", "generated"])
                .ok_or("it has no test_cases.generated")?,
            failures: counted("failures", &|entry| {
                format!("{} {}", text_of(entry, "code"), text_of(entry, "title"))
                    .trim()
                    .to_owned()
            }),
            errors: counted("errors", &|entry| text_of(entry, "title")),
        })
    }

    /// Failures and errors together.
    fn problems(&self) -> u64 {
        self.failures
            .iter()
            .chain(&self.errors)
            .map(|(_, count)| count)
            .sum()
    }

    /// `25 operations tested, 2 053 test cases, no failure`, or with the failures by check.
    fn summary(&self) -> String {
        let mut line = format!(
            "{} operations tested, {} test cases, ",
            self.operations,
            grouped(self.test_cases)
        );
        if self.problems() == 0 {
            line.push_str("no failure");
            return line;
        }
        let listed: Vec<String> = self
            .failures
            .iter()
            .chain(&self.errors)
            .map(|(what, count)| format!("{what}: {count}"))
            .collect();
        let _ = write!(line, "{} FAILED ({})", self.problems(), listed.join(", "));
        line
    }
}

/// Runs the suite: `Ok` with whether each run passed, in order; `Err` when it could not start.
pub(crate) fn run(ctx: &Ctx) -> Result<Vec<bool>, Error> {
    if installed_version(ctx).as_deref() != Some(SCHEMATHESIS) {
        return Err(Error::failed(format!(
            "schemathesis {SCHEMATHESIS} is not in {} (see the setup lines above)",
            ctx.shown(&venv_dir(ctx))
        )));
    }
    let dir = ctx.target_dir().join("api-conformance");
    create_dir(&dir)?;
    let server = ToolbridgeServer::start(
        ctx,
        &ServerOptions::new(LABEL, Profile::Debug, dir.join("server"), PRODUCTS),
    )?;
    let scopes = document_scopes(&http_get(server.port(), DOCUMENT, None)?)?;
    println!(
        "{LABEL}: the document names the scopes {}",
        scopes.join(", ")
    );
    let runs = plan(&scopes);
    let keys = runs
        .iter()
        .map(|run| {
            server.create_key(
                ctx,
                &format!("conformance {}", run.label),
                &run.scopes,
                RATE_LIMIT,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let all_scopes = keys
        .first()
        .ok_or_else(|| Error::failed("no run was planned"))?;
    let setting = Setting {
        document_url: format!("{}{DOCUMENT}", server.base_url()),
        config: dir.join("schemathesis.toml"),
        seed: seed()?,
        dir,
    };
    write(
        &setting.config,
        known_ids_config(&server, all_scopes)?.as_bytes(),
    )?;

    let mut outcomes = Vec::new();
    for (run, key) in runs.iter().zip(&keys) {
        let outcome = run_once(ctx, &setting, run, key)?;
        println!("{}", outcome.line);
        outcomes.push(outcome);
    }
    println!();
    for outcome in &outcomes {
        println!("{}", outcome.line);
    }
    let failed = outcomes.iter().filter(|outcome| !outcome.passed).count();
    println!(
        "{LABEL}: {} runs, {} test cases in all, seed {} (set API_CONFORMANCE_SEED to try \
         another), {}",
        outcomes.len(),
        grouped(outcomes.iter().map(|outcome| outcome.test_cases).sum()),
        setting.seed,
        if failed == 0 {
            "all passed".to_owned()
        } else {
            format!(
                "{failed} FAILED; the server's log is {}",
                ctx.shown(server.log())
            )
        }
    );
    Ok(outcomes.iter().map(|outcome| outcome.passed).collect())
}

/// The key of every scope first, with every phase (the stateful one follows the links from a
/// new or listed quote); then each scope alone, with fewer examples.
fn plan(scopes: &[String]) -> Vec<Run> {
    let mut runs = vec![Run {
        label: "all scopes".to_owned(),
        scopes: scopes.join(","),
        phases: "examples,coverage,fuzzing,stateful",
        max_examples: FULL_EXAMPLES,
    }];
    runs.extend(scopes.iter().map(|scope| Run {
        label: scope.clone(),
        scopes: scope.clone(),
        phases: "coverage,fuzzing",
        max_examples: SCOPE_EXAMPLES,
    }));
    runs
}

/// What every run shares.
struct Setting {
    /// Where the reports and the configuration go.
    dir: PathBuf,
    /// The OpenAPI document's URL.
    document_url: String,
    /// The schemathesis configuration (the known ids).
    config: PathBuf,
    /// `--seed`.
    seed: u64,
}

/// How one run ended.
struct Outcome {
    /// No failure, no error.
    passed: bool,
    /// Its summary line.
    line: String,
    /// Test cases it sent.
    test_cases: u64,
}

/// Runs schemathesis once, its output on the terminal, and reads its JSON report.
fn run_once(ctx: &Ctx, setting: &Setting, run: &Run, key: &str) -> Result<Outcome, Error> {
    let report = setting.dir.join(format!(
        "report-{}.json",
        run.label.replace([' ', ':'], "-")
    ));
    if report.exists() {
        std::fs::remove_file(&report)
            .map_err(|e| Error::failed(format!("cannot remove {}: {e}", report.display())))?;
    }
    let mut command = ctx.program(&venv_program(ctx, "st"));
    command
        .arg("--config-file")
        .arg(&setting.config)
        .args(["run", &setting.document_url])
        .args(["--header", &format!("Authorization: Bearer {key}")])
        .args(["--checks", CHECKS])
        .args(["--phases", run.phases])
        .args(["--max-examples", &run.max_examples.to_string()])
        .args(["--seed", &setting.seed.to_string()])
        // One worker: with two threads, CPython 3.11's `ast` module (which Hypothesis uses to
        // describe its strategies) can fail with "AST constructor recursion depth mismatch"
        // (python/cpython#106905); one worker also keeps the order of the requests, and so the
        // run, the same for a seed.
        .args(["--workers", "1"])
        .args(["--request-timeout", &REQUEST_TIMEOUT_SECS.to_string()])
        // No example database: the seed alone decides what is generated.
        .args(["--generation-database", "none"])
        .args(["--report", "json", "--report-json-path"])
        .arg(&report)
        .current_dir(&setting.dir);
    println!(
        "\n{LABEL}: {}: running `{}`",
        run.label,
        describe(&command).replace(key, "<key>")
    );
    let exited_cleanly = process::run(&mut command)?;
    let figures = read_text(&report).and_then(|text| {
        Figures::from_report(&text)
            .map_err(|why| Error::failed(format!("cannot read {}: {why}", ctx.shown(&report))))
    });
    let clean_report = matches!(&figures, Ok(figures) if figures.problems() == 0);
    let (mut line, test_cases) = match &figures {
        Ok(figures) => (
            format!("{LABEL}: {}: {}", run.label, figures.summary()),
            figures.test_cases,
        ),
        Err(error) => (format!("{LABEL}: {}: FAILED: {error}", run.label), 0),
    };
    if clean_report && !exited_cleanly {
        line.push_str("; FAILED: schemathesis exited with an error (see above)");
    }
    Ok(Outcome {
        passed: clean_report && exited_cleanly,
        line,
        test_cases,
    })
}

/// The seed: `API_CONFORMANCE_SEED` when set, else [`SEED`].
fn seed() -> Result<u64, Error> {
    match std::env::var("API_CONFORMANCE_SEED") {
        Ok(text) if !text.trim().is_empty() => text.trim().parse().map_err(|_| {
            Error::failed(format!(
                "API_CONFORMANCE_SEED must be a whole number, not `{text}`"
            ))
        }),
        _ => Ok(SEED),
    }
}

/// Every scope the document's operations require (`security: [{api_key: [...]}]`), sorted.
fn document_scopes(document: &str) -> Result<Vec<String>, Error> {
    let document = json::parse(document)
        .map_err(|why| Error::failed(format!("the OpenAPI document is not JSON: {why}")))?;
    let mut scopes = Vec::new();
    if let Some(Value::Object(paths)) = document.get("paths") {
        for (_, item) in paths {
            let Value::Object(operations) = item else {
                continue;
            };
            for (_, operation) in operations {
                let requirements = operation
                    .get("security")
                    .and_then(Value::as_array)
                    .unwrap_or_default();
                for requirement in requirements {
                    let Value::Object(schemes) = requirement else {
                        continue;
                    };
                    for (_, required) in schemes {
                        scopes.extend(
                            required
                                .as_array()
                                .unwrap_or_default()
                                .iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned),
                        );
                    }
                }
            }
        }
    }
    scopes.sort();
    scopes.dedup();
    if scopes.is_empty() {
        return Err(Error::failed(
            "the OpenAPI document names no scope in any operation's `security`",
        ));
    }
    Ok(scopes)
}

/// A schemathesis configuration that lets request bodies name real customers and products
/// (most of the time, not always): without them every new quote would be refused for its
/// unknown `customerId` or `skuId`, and the successful path of `POST /api/v1/quotes` (and what
/// the links from a new quote lead to) would never be tested.
fn known_ids_config(server: &ToolbridgeServer, key: &str) -> Result<String, Error> {
    let ids = |path: &str| -> Result<Vec<String>, Error> {
        let body = http_get(
            server.port(),
            &format!("{path}?pageSize={KNOWN_IDS}"),
            Some(key),
        )?;
        let page = json::parse(&body)
            .map_err(|why| Error::failed(format!("{path} did not answer JSON: {why}")))?;
        let ids: Vec<String> = page
            .get("items")
            .and_then(Value::as_array)
            .unwrap_or_default()
            .iter()
            .filter_map(|item| item.get("id").and_then(Value::as_str))
            .map(json::quote)
            .collect();
        if ids.is_empty() {
            return Err(Error::failed(format!("{path} listed nothing")));
        }
        Ok(ids)
    };
    let customers = ids("/api/v1/customers")?;
    let products = ids("/api/v1/products")?;
    Ok(format!(
        "# Written by `cargo xtask test` (the api conformance suite) for one run.\n\
         [dictionaries.customers]\nvalues = [{}]\n\n\
         [dictionaries.products]\nvalues = [{}]\n\n\
         [[operations]]\ninclude-name = \"POST /api/v1/quotes\"\n\
         parameters = {{ \"body.customerId\" = {{ dictionary = \"customers\", probability = 0.5 }}, \
         \"body.lines[*].skuId\" = {{ dictionary = \"products\", probability = 0.7 }} }}\n\n\
         [[operations]]\ninclude-name = \"PATCH /api/v1/quotes/{{id}}\"\n\
         parameters = {{ \"body.customerId\" = {{ dictionary = \"customers\", probability = 0.5 }} }}\n",
        customers.join(", "),
        products.join(", ")
    ))
}

/// The body of `GET path` on the server (with `key` as a bearer token), which must answer 200.
fn http_get(port: u16, path: &str, key: Option<&str>) -> Result<String, Error> {
    let failed = |why: String| Error::failed(format!("GET {path}: {why}"));
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
        .map_err(|e| failed(format!("cannot connect: {e}")))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| failed(e.to_string()))?;
    let mut request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    if let Some(key) = key {
        let _ = write!(request, "Authorization: Bearer {key}\r\n");
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| failed(e.to_string()))?;
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .map_err(|e| failed(e.to_string()))?;
    let answer =
        String::from_utf8(answer).map_err(|_| failed("the answer is not UTF-8".to_owned()))?;
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or_else(|| failed("the answer has no end of headers".to_owned()))?;
    let status = head.lines().next().unwrap_or_default();
    if !status.starts_with("HTTP/1.1 200 ") {
        return Err(failed(format!("answered `{status}`")));
    }
    if head
        .lines()
        .any(|line| line.to_ascii_lowercase().starts_with("transfer-encoding:"))
    {
        return Err(failed(
            "the answer is chunked, which this client does not read".to_owned(),
        ));
    }
    Ok(body.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"{
      "schemathesis_version": "4.32.5", "seed": 3, "exit_code": 1,
      "operations": {"total": 25, "selected": 25, "tested": 25, "errored": 0, "skipped": 0},
      "test_cases": {"generated": 1729, "with_failures": 3, "unique_failures": 3},
      "failures": [{"type": "UndefinedStatusCode", "code": "ST103",
                    "title": "Undocumented status code", "count": 3,
                    "operations": ["POST /api/session"]}],
      "errors": [{"title": "Serialization not possible", "count": 1}]
    }"#;

    #[test]
    fn figures_come_from_the_json_report() {
        let figures = Figures::from_report(REPORT).unwrap();
        assert_eq!(
            figures,
            Figures {
                operations: 25,
                test_cases: 1729,
                failures: vec![("ST103 Undocumented status code".to_owned(), 3)],
                errors: vec![("Serialization not possible".to_owned(), 1)],
            }
        );
        assert_eq!(figures.problems(), 4);
        assert_eq!(
            figures.summary(),
            "25 operations tested, 1 729 test cases, 4 FAILED (ST103 Undocumented status \
             code: 3, Serialization not possible: 1)"
        );
    }

    #[test]
    fn a_clean_report_says_no_failure() {
        let clean = r#"{"operations": {"tested": 25}, "test_cases": {"generated": 2053},
                        "failures": [], "errors": []}"#;
        assert_eq!(
            Figures::from_report(clean).unwrap().summary(),
            "25 operations tested, 2 053 test cases, no failure"
        );
        assert!(Figures::from_report("{}").is_err());
    }

    #[test]
    fn scopes_are_collected_from_every_operation() {
        let document = r#"{"paths": {
            "/a": {"get": {"security": [{"api_key": ["b:read"]}]},
                   "post": {"security": [{"api_key": ["a:write"]}]}},
            "/b": {"parameters": [], "get": {"security": [{"api_key": ["b:read"]}]}},
            "/c": {"get": {}}
        }}"#;
        assert_eq!(document_scopes(document).unwrap(), ["a:write", "b:read"]);
        assert!(document_scopes(r#"{"paths": {}}"#).is_err());
    }

    #[test]
    fn the_virtualenv_is_named_after_the_pin() {
        let ctx = Ctx::new().unwrap();
        assert!(
            venv_dir(&ctx)
                .to_string_lossy()
                .ends_with(&format!("schemathesis-{SCHEMATHESIS}"))
        );
    }
}
