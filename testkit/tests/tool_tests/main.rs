//! The tool author's kit under test: each example tool's own tests (`example-tools/tests/`) and
//! the page helpers' (`sdk/ui/tests/`, run under `example_tools` as the tools import them),
//! written with `@toolbridge/sdk/testing` and run in a real headless browser; and the package
//! installed into a scratch TypeScript project, type-checked, and its small tool tested
//! (`package::`). `cargo xtask test` builds the package and starts the browser's driver, and
//! names them here.
//!
//! Each example tool's tests, and the helpers', also run against a copy with its logic broken on
//! purpose (one mutation, served in place of the file): they must fail then, or they test
//! nothing.

// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod browser;
mod package;
mod site;

use std::path::PathBuf;

use browser::{outcomes, setting};
use site::{Mutation, Site};

/// The repository's `example-tools` folder.
fn example_tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../example-tools")
}

/// The package's files as installed (the unpacked tarball).
fn package() -> PathBuf {
    PathBuf::from(setting("TOOLBRIDGE_KIT_PACKAGE"))
}

/// The page helpers' tests (`sdk/ui/tests/`).
fn helper_tests() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../sdk/ui/tests")
}

/// The package at the path an import map names, and its bridge.js and page helpers where the
/// platform serves them to tools.
fn with_package(site: Site) -> Site {
    let package = package();
    site.mount("/node_modules/@toolbridge/sdk/", &package)
        .mount("/sdk/bridge.js", package.join("bridge.js"))
        .mount("/sdk/ui.js", package.join("ui.js"))
        .mount("/sdk/ui.css", package.join("ui.css"))
}

/// Runs an example tool's test page, with `mutation` made to the tool when given.
async fn example_tool_page(page: &str, mutation: Option<Mutation>) -> Vec<browser::Outcome> {
    let mut site = with_package(Site::default()).mount("/example-tools/", example_tools());
    if let Some(mutation) = mutation {
        site = site.mutate(mutation);
    }
    let served = site.serve().await;
    outcomes(&format!("{}/example-tools/tests/{page}", served.origin)).await
}

/// Fails naming each of the page's tests that did not pass.
fn assert_all_passed(page: &str, outcomes: &[browser::Outcome]) {
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|outcome| !outcome.ok)
        .map(|outcome| outcome.name.as_str())
        .collect();
    assert!(failed.is_empty(), "{page}: failed: {failed:?}");
}

/// Every test of the page passed.
async fn passes(page: &str) {
    assert_all_passed(page, &example_tool_page(page, None).await);
}

/// The page helpers' test page, with `mutation` made to the package's `ui.js` when given.
async fn helper_page(mutation: Option<Mutation>) -> Vec<browser::Outcome> {
    let mut site = with_package(Site::default()).mount("/ui-tests/", helper_tests());
    if let Some(mutation) = mutation {
        site = site.mutate(mutation);
    }
    let served = site.serve().await;
    outcomes(&format!("{}/ui-tests/ui.html", served.origin)).await
}

/// With the tool broken by `mutation`, each test named in `catch` fails.
async fn catches(page: &str, mutation: Mutation, catch: &[&str]) {
    let outcomes = example_tool_page(page, Some(mutation)).await;
    assert_caught(page, mutation, &outcomes, catch);
}

/// Each test named in `catch` failed in `outcomes`, the page's run with `mutation`.
fn assert_caught(page: &str, mutation: Mutation, outcomes: &[browser::Outcome], catch: &[&str]) {
    for name in catch {
        let outcome = outcomes
            .iter()
            .find(|outcome| outcome.name == *name)
            .unwrap_or_else(|| panic!("{page} has no test {name:?}"));
        assert!(
            !outcome.ok,
            "{page}: {name:?} passed with the tool broken ({} → {})",
            mutation.find, mutation.replace
        );
    }
}

mod example_tools {
    use super::*;

    /// The book's first tool (`my-tool/`) passes the test the book gives for it
    /// (`my-tool-tests/`), both taken from `docs/src/tools/first-tool.md` by `cargo xtask test`.
    #[tokio::test]
    async fn the_books_first_tool_passes_its_test() {
        let example = PathBuf::from(setting("TOOLBRIDGE_KIT_FIRST_TOOL"));
        let served = with_package(Site::default())
            .mount("/my-tool/", example.join("my-tool"))
            .mount("/my-tool-tests/", example.join("my-tool-tests"))
            .serve()
            .await;
        let page = format!("{}/my-tool-tests/index.html", served.origin);
        assert_all_passed("the first tool's test", &outcomes(&page).await);
    }

    const FLOORING: &str = "flooring-estimator.html";
    const QUICK_QUOTE: &str = "quick-quote.html";
    const JOB_LOOKUP: &str = "job-lookup.html";
    const SUPPLIER_PRICES: &str = "supplier-prices.html";

    /// The page helpers the example tools import from `/sdk/ui.js`, as the package ships them,
    /// pass their own tests.
    #[tokio::test]
    async fn the_page_helpers_pass_their_tests() {
        assert_all_passed("ui.html", &helper_page(None).await);
    }

    #[tokio::test]
    async fn the_page_helpers_tests_fail_when_a_link_is_not_checked() {
        let mutation = Mutation {
            path: "/node_modules/@toolbridge/sdk/ui.js",
            find: "element.setAttribute(\"href\", safeHref(value));",
            replace: "element.setAttribute(\"href\", String(value));",
        };
        let outcomes = helper_page(Some(mutation)).await;
        assert_caught(
            "ui.html",
            mutation,
            &outcomes,
            &["links only go to http(s) or this origin"],
        );
    }

    #[tokio::test]
    async fn the_flooring_estimator_passes_its_tests() {
        passes(FLOORING).await;
    }

    #[tokio::test]
    async fn the_flooring_estimator_tests_fail_when_the_waste_allowance_is_not_added() {
        catches(
            FLOORING,
            Mutation {
                path: "/example-tools/flooring-estimator/app.js",
                find: "qty: round2(room.area * (1 + estimate.waste / 100)),",
                replace: "qty: round2(room.area),",
            },
            &[
                "rooms become sections, groups, task lines and totals",
                "takes its default waste allowance and markup from settings, and follows changes",
            ],
        )
        .await;
    }

    #[tokio::test]
    async fn quick_quote_passes_its_tests() {
        passes(QUICK_QUOTE).await;
    }

    #[tokio::test]
    async fn quick_quote_tests_fail_when_the_email_is_not_checked_first() {
        catches(
            QUICK_QUOTE,
            Mutation {
                path: "/example-tools/quick-quote/app.js",
                find: "} else if (!ui.customerEmail.checkValidity()) {",
                replace: "} else if (false) {",
            },
            &["refuses an invalid email before any call"],
        )
        .await;
    }

    #[tokio::test]
    async fn job_lookup_passes_its_tests() {
        passes(JOB_LOOKUP).await;
    }

    #[tokio::test]
    async fn job_lookup_tests_fail_when_the_search_minds_letter_case() {
        catches(
            JOB_LOOKUP,
            Mutation {
                path: "/example-tools/job-lookup/app.js",
                find: ".some((text) => text && text.toLowerCase().includes(query));",
                replace: ".some((text) => text && text.includes(query));",
            },
            &[
                "filters the loaded page as you type, in any letter case",
                "searches every page",
            ],
        )
        .await;
    }

    #[tokio::test]
    async fn job_lookup_tests_fail_when_times_ignore_the_time_zone() {
        catches(
            JOB_LOOKUP,
            Mutation {
                path: "/example-tools/job-lookup/app.js",
                find: "  state.format = formatter(context);\n",
                replace: "  state.format = formatter(context.cultureCode);\n",
            },
            &["shows a quote's time in the organisation's time zone and currency"],
        )
        .await;
    }

    #[tokio::test]
    async fn supplier_prices_passes_its_tests() {
        passes(SUPPLIER_PRICES).await;
    }

    #[tokio::test]
    async fn supplier_prices_tests_fail_when_the_key_is_not_sent() {
        catches(
            SUPPLIER_PRICES,
            Mutation {
                path: "/example-tools/supplier-prices/app.js",
                find: "\"X-Api-Key\": \"{{secret.apiKey}}\",",
                replace: "",
            },
            &["looks prices up with the secret key and a token, and adds a part at the markup"],
        )
        .await;
    }

    #[tokio::test]
    async fn supplier_prices_tests_fail_when_the_markup_is_not_added() {
        catches(
            SUPPLIER_PRICES,
            Mutation {
                path: "/example-tools/supplier-prices/app.js",
                find: "return round2(cost * (1 + state.settings.markupPercent / 100));",
                replace: "return round2(cost);",
            },
            &["looks prices up with the secret key and a token, and adds a part at the markup"],
        )
        .await;
    }
}
