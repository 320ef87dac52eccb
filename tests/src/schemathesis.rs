//! What the API conformance suite (`tests/conformance/`) knows about schemathesis and about the
//! document it tests: which runs to make (a key of every scope, then each scope alone), the
//! configuration that lets request bodies name real customers and products, the seed, and the
//! figures of a run's JSON report.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::Error;

/// What prefixes the lines the suite prints, and the suite's name in `cargo xtask test`.
pub const LABEL: &str = "api conformance";

/// Where the document is, on the server.
pub const DOCUMENT: &str = "/api/v1/openapi.json";

/// The checks: every one schemathesis has. Beyond each answer's own conformance (no 5xx; a
/// documented status, content type, headers and body), the server must refuse what the
/// document forbids and accept what it allows, answer 401 without a key or with a wrong one,
/// 405 with an `Allow` header to a method a path does not have, and keep what it creates
/// where the document's links say it is.
pub const CHECKS: &str = "all";

/// Examples per operation with the key of every scope.
const FULL_EXAMPLES: u32 = 50;

/// Examples per operation with each single-scope key.
const SCOPE_EXAMPLES: u32 = 10;

/// The variable that replays a seed.
pub const SEED_VARIABLE: &str = "API_CONFORMANCE_SEED";

/// One schemathesis run: whose key, which phases, how many examples.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// What the summary calls it: `all scopes`, or the scope.
    pub label: String,
    /// The key's scopes, comma-separated.
    pub scopes: String,
    /// `--phases`.
    pub phases: &'static str,
    /// `--max-examples`.
    pub max_examples: u32,
}

impl Run {
    /// The file name of its JSON report: `report-all-scopes.json`.
    pub fn report_name(&self) -> String {
        format!("report-{}.json", self.label.replace([' ', ':'], "-"))
    }
}

/// The key of every scope first, with every phase (the stateful one follows the links from a
/// new or listed quote); then each scope alone, in the coverage phase only: the server checks
/// the scope before it reads the request, so random data there would only meet the same 403s
/// again (leaving it out keeps the suite about as quick as before it ran every check).
pub fn plan(scopes: &[String]) -> Vec<Run> {
    let mut runs = vec![Run {
        label: "all scopes".to_owned(),
        scopes: scopes.join(","),
        phases: "examples,coverage,fuzzing,stateful",
        max_examples: FULL_EXAMPLES,
    }];
    runs.extend(scopes.iter().map(|scope| Run {
        label: scope.clone(),
        scopes: scope.clone(),
        phases: "coverage",
        max_examples: SCOPE_EXAMPLES,
    }));
    runs
}

/// The seed: [`SEED_VARIABLE`] when set, else a new one each run, so that every run tries other
/// examples (printed first, so that a failure can be replayed).
pub fn seed() -> Result<u64, Error> {
    match std::env::var(SEED_VARIABLE) {
        Ok(text) if !text.trim().is_empty() => text.trim().parse().map_err(|_| {
            Error::failed(format!(
                "{SEED_VARIABLE} must be a whole number, not `{text}`"
            ))
        }),
        _ => Ok(random_seed()),
    }
}

/// The command that runs the suite again with `seed`.
pub fn replay(seed: u64) -> String {
    format!("{SEED_VARIABLE}={seed} cargo xtask test --only \"{LABEL}\"")
}

/// A seed of up to nine digits (short enough to type again) from the standard library's
/// randomly keyed hasher and the clock.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    if let Ok(since_epoch) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(since_epoch.as_nanos());
    }
    hasher.finish() % 1_000_000_000
}

/// Every scope the document's operations require (`security: [{api_key: [...]}]`), sorted.
pub fn document_scopes(document: &Value) -> Result<Vec<String>, Error> {
    let mut scopes: Vec<String> = document
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|paths| paths.values())
        .filter_map(Value::as_object)
        .flat_map(|operations| operations.values())
        .filter_map(|operation| operation.get("security")?.as_array())
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|schemes| schemes.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    scopes.sort();
    scopes.dedup();
    if scopes.is_empty() {
        return Err(Error::failed(
            "the OpenAPI document names no scope in any operation's `security`",
        ));
    }
    Ok(scopes)
}

/// The ids of a page's items (`{"items": [{"id": ...}]}`).
pub fn page_ids(page: &Value) -> Vec<String> {
    page.get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| item.get("id")?.as_str())
        .map(str::to_owned)
        .collect()
}

/// A schemathesis configuration that lets request bodies name real customers and products
/// (most of the time, not always): without them every new quote would be refused for its
/// unknown `customerId` or `skuId`, and the successful path of `POST /api/v1/quotes` (and what
/// the links from a new quote lead to) would never be tested. It loads [`HOOKS`] from the file
/// `hooks`, and counts a 413 (a body over the server's limit, such as the 10 001 lines past a
/// quote's `maxItems` that the coverage phase sends) as refusing a request the document forbids,
/// as the statuses `negative_data_rejection` takes by default do. New webhook endpoints and
/// changes of one name `https://192.0.2.1/hook` (a public address routed nowhere) half of the
/// time.
pub fn known_ids_config(customers: &[String], products: &[String], hooks: &Path) -> String {
    let list = |ids: &[String]| {
        ids.iter()
            .map(|id| Value::from(id.as_str()).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "# Written by `cargo xtask test` (the api conformance suite) for one run.\n\
         hooks = {}\n\n\
         [dictionaries.customers]\nvalues = [{}]\n\n\
         [dictionaries.products]\nvalues = [{}]\n\n\
         [checks.negative_data_rejection]\nexpected-statuses = [{NEGATIVE_DATA_REFUSED}]\n\n\
         [[operations]]\ninclude-name = \"POST /api/v1/quotes\"\n\
         parameters = {{ \"body.customerId\" = {{ dictionary = \"customers\", probability = 0.5 }}, \
         \"body.lines[*].skuId\" = {{ dictionary = \"products\", probability = 0.7 }} }}\n\n\
         [[operations]]\ninclude-name = \"PATCH /api/v1/quotes/{{id}}\"\n\
         parameters = {{ \"body.customerId\" = {{ dictionary = \"customers\", probability = 0.5 }} }}\n\n\
         [dictionaries.webhook_urls]\nvalues = [{}]\n\n\
         [[operations]]\ninclude-name = \"POST /api/v1/webhook-endpoints\"\n\
         parameters = {{ \"body.url\" = {{ dictionary = \"webhook_urls\", probability = 0.5 }} }}\n\n\
         [[operations]]\ninclude-name = \"PATCH /api/v1/webhook-endpoints/{{id}}\"\n\
         parameters = {{ \"body.url\" = {{ dictionary = \"webhook_urls\", probability = 0.5 }} }}\n",
        Value::from(hooks.to_string_lossy()),
        list(customers),
        list(products),
        Value::from(WEBHOOK_URL)
    )
}

/// A webhook URL whose host is public (TEST-NET-1, RFC 5737: routed nowhere), so that the server
/// keeps endpoints with it and the operations on an endpoint are tested too; the URLs generated
/// from the document's pattern name hosts that do not resolve, or non-public addresses.
const WEBHOOK_URL: &str = "https://192.0.2.1/hook";

/// The statuses that refuse a request the document forbids: schemathesis' defaults
/// (`NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES`) and 413.
const NEGATIVE_DATA_REFUSED: &str = "\"400\", \"401\", \"403\", \"404\", \"405\", \"406\", \"409\", \
                                     \"413\", \"415\", \"422\", \"428\", \"429\", \"5xx\"";

/// The schemathesis hooks (Python) of every run. `positive_data_acceptance` holds the server
/// to accepting every request the document allows; these let through only the documented 422s
/// for rules that no JSON Schema can state, because they depend on what the tenant has, on
/// earlier requests, or on how the parts of one request relate: a `customerId` or `skuId` that
/// names nothing, a quote reference or `Idempotency-Key` already used, a line number used twice
/// or a parent line that is not in the request, a webhook URL whose host does not resolve or
/// resolves to a non-public address (DNS, and the server's `--allow-private-webhooks`). Each such
/// answer must name only those rules (its `errors[]`, path and message);
/// `server/tests/api/quotes.rs` and `server/tests/api/webhooks.rs` test each over HTTP. They
/// also let through a 412 `CONFLICT` to a request that sent `If-Match`: whether its entity tags
/// name the quote's current version depends on the quote, not on the request's shape
/// (`server/tests/api/versions.rs`). What they let through is counted in schemathesis' summary,
/// as dropped by `filter_failure`.
pub const HOOKS: &str = r#"# Written by `cargo xtask test` (the api conformance suite) for one run.
import json
import re

import schemathesis

# (path, message) of each refusal that depends on more than the request's own shape.
STATEFUL_REFUSALS = [
    (re.compile(p), re.compile(m, re.DOTALL))
    for p, m in [
        (r"customerId", r"no customer has the id .*"),
        (r"lines\[\d+\]\.skuId", r"no active product has the id .*"),
        (r"quoteRef", r"another quote already has the reference .*"),
        (r"Idempotency-Key", r"was already used with a different request body"),
        (r"lines\[\d+\]\.lineNo", r"\d+ is used twice"),
        (r"lines\[\d+\]\.parentLineNo", r"\d+ is not a line of this quote"),
        (r"url", r".* does not resolve: .*"),
        (r"url", r".* is .* \(.*\); webhooks go to public addresses only"),
    ]
]


def problem_code(response):
    """The `code` of a problem body, or None."""
    try:
        return json.loads(response.content).get("code")
    except (ValueError, AttributeError):
        return None


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but a schema-valid request's 422 for those refusals alone, and its
    412 CONFLICT for an If-Match that names no version the quote is at."""
    if type(failure).__name__ != "RejectedPositiveData":
        return True
    if response.status_code == 412:
        sent = {name.lower() for name in (case.headers or {})}
        return not ("if-match" in sent and problem_code(response) == "CONFLICT")
    if response.status_code != 422:
        return True
    try:
        errors = json.loads(response.content)["errors"]
    except (ValueError, KeyError, TypeError):
        return True
    stateful = isinstance(errors, list) and len(errors) > 0 and all(
        isinstance(error, dict)
        and any(
            path.fullmatch(str(error.get("path")))
            and message.fullmatch(str(error.get("message")))
            for path, message in STATEFUL_REFUSALS
        )
        for error in errors
    )
    return not stateful
"#;

/// What one run did, from its JSON report.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Figures {
    /// Operations schemathesis tested.
    pub operations: u64,
    /// Test cases (requests) it generated and sent.
    pub test_cases: u64,
    /// Failures by check: `ST103 Undocumented status code` and how many.
    pub failures: Vec<(String, u64)>,
    /// Errors (a request that could not be made, a schema it could not read) and how many.
    pub errors: Vec<(String, u64)>,
}

impl Figures {
    /// Reads the JSON report of a run.
    pub fn from_report(text: &str) -> Result<Self, String> {
        let report: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let number = |path: &str| report.pointer(path).and_then(Value::as_u64);
        let text_of = |entry: &Value, key: &str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let counted = |key: &str, name: &dyn Fn(&Value) -> String| {
            report
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|entry| {
                    let count = entry.get("count").and_then(Value::as_u64).unwrap_or(1);
                    (name(entry), count)
                })
                .collect::<Vec<_>>()
        };
        Ok(Self {
            operations: number("/operations/tested").ok_or("it has no operations.tested")?,
            test_cases: number("/test_cases/generated").ok_or("it has no test_cases.generated")?,
            failures: counted("failures", &|entry| {
                format!("{} {}", text_of(entry, "code"), text_of(entry, "title"))
                    .trim()
                    .to_owned()
            }),
            errors: counted("errors", &|entry| text_of(entry, "title")),
        })
    }

    /// Failures and errors together.
    pub fn problems(&self) -> u64 {
        self.failures
            .iter()
            .chain(&self.errors)
            .map(|(_, count)| count)
            .sum()
    }

    /// `25 operations tested, 2 053 test cases, no failure`, or with the failures by check.
    pub fn summary(&self) -> String {
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

/// `1 729` for 1729: digits in groups of three, as the suites print their figures.
pub fn grouped(number: u64) -> String {
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
        assert!(Figures::from_report("not json").is_err());
    }

    #[test]
    fn scopes_are_collected_from_every_operation() {
        let document = serde_json::json!({"paths": {
            "/a": {"get": {"security": [{"api_key": ["b:read"]}]},
                   "post": {"security": [{"api_key": ["a:write"]}]}},
            "/b": {"parameters": [], "get": {"security": [{"api_key": ["b:read"]}]}},
            "/c": {"get": {}}
        }});
        assert_eq!(document_scopes(&document).unwrap(), ["a:write", "b:read"]);
        assert!(document_scopes(&serde_json::json!({"paths": {}})).is_err());
    }

    #[test]
    fn every_scope_gets_a_run_of_its_own_after_the_run_of_all() {
        let runs = plan(&["a:write".to_owned(), "b:read".to_owned()]);
        let labels: Vec<&str> = runs.iter().map(|run| run.label.as_str()).collect();
        assert_eq!(labels, ["all scopes", "a:write", "b:read"]);
        assert_eq!(runs[0].scopes, "a:write,b:read");
        assert!(runs[0].phases.contains("stateful"));
        assert_eq!(runs[1].report_name(), "report-a-write.json");
    }

    #[test]
    fn the_known_ids_are_quoted_in_the_configuration() {
        let config = known_ids_config(
            &["c_1".to_owned()],
            &["p_1".to_owned(), "p_2".to_owned()],
            Path::new("/run/hooks.py"),
        );
        assert!(config.contains("hooks = \"/run/hooks.py\"\n"));
        assert!(config.contains("[dictionaries.customers]\nvalues = [\"c_1\"]"));
        assert!(config.contains("[dictionaries.products]\nvalues = [\"p_1\", \"p_2\"]"));
        assert!(
            config.contains("[dictionaries.webhook_urls]\nvalues = [\"https://192.0.2.1/hook\"]")
        );
        let page = serde_json::json!({"items": [{"id": "a"}, {"name": "no id"}, {"id": "b"}]});
        assert_eq!(page_ids(&page), ["a", "b"]);
    }

    #[test]
    fn figures_are_grouped_by_thousands() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(1729), "1 729");
        assert_eq!(grouped(1_000_000), "1 000 000");
    }
}
