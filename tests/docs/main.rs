//! The book's code blocks (`docs/src/`), as `cargo xtask test` checks them in the docs suite:
//! every block says what it is (`tests/src/book.rs`), and the `run` blocks of each page run, in
//! order, as one bash script against a fresh `toolbridge serve --demo --allow-private-webhooks`
//! (the debug server named in `TOOLBRIDGE_BIN`), in the folder that holds its database and the
//! page's example files, with that `toolbridge` first on `PATH`. Each page's server and script output go to `TOOLBRIDGE_DOCS_DIR/<page>/`.

// Test code: a panic is how a test reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use toolbridge_e2e::book::{self, Mark};
use toolbridge_e2e::first_tool;
use toolbridge_e2e::server::{ServerOptions, ToolbridgeServer};

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn setting(name: &str) -> PathBuf {
    let value = env::var_os(name);
    let value = value
        .unwrap_or_else(|| panic!("{name} is not set: `cargo xtask test --only docs` sets it"));
    PathBuf::from(value)
}

/// Each page with its blocks.
fn book() -> Vec<(PathBuf, Vec<book::Block>, Vec<book::Problem>)> {
    let root = root();
    book::pages(&root)
        .unwrap()
        .into_iter()
        .map(|page| {
            let text = fs_err::read_to_string(root.join(&page)).unwrap();
            let (blocks, problems) = book::blocks(&text);
            (page, blocks, problems)
        })
        .collect()
}

#[test]
fn every_code_block_says_what_it_is() {
    let mut problems = Vec::new();
    for (page, blocks, page_problems) in book() {
        for problem in page_problems {
            problems.push(format!("{}: {problem}", page.display()));
        }
        // A file is used by the first tool's suites, or by the page's own `run` blocks.
        let runs = blocks.iter().any(|block| block.mark == Mark::Run);
        for block in blocks {
            if matches!(block.mark, Mark::File(_)) && !runs && page != Path::new(first_tool::PAGE) {
                problems.push(format!(
                    "{}: line {}: the file is used by nothing: only {} and pages with `run` \
                     blocks may have example files",
                    page.display(),
                    block.line,
                    first_tool::PAGE
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_run_blocks_of_every_page_run() {
    let binary = setting("TOOLBRIDGE_BIN");
    let dir = setting("TOOLBRIDGE_DOCS_DIR");
    let bin_dir = binary.parent().unwrap().to_path_buf();
    let path = env::join_paths(
        std::iter::once(bin_dir).chain(env::split_paths(&env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let mut ran = 0;
    let mut failures = Vec::new();
    for (page, blocks, _) in book() {
        if !blocks.iter().any(|block| block.mark == Mark::Run) {
            continue;
        }
        let name = page
            .strip_prefix(book::SOURCES)
            .unwrap_or(&page)
            .with_extension("")
            .display()
            .to_string()
            .replace('/', "-");
        let mut options = ServerOptions::new("docs", dir.join(&name), 1000);
        // The webhooks page's receiver listens on this machine, as in `cargo xtask serve`.
        options.allow_private_webhooks = true;
        let server = ToolbridgeServer::start(&binary, &options).unwrap();
        // The page's files (a receiver, say), where its blocks expect them.
        for block in &blocks {
            if let Mark::File(path) = &block.mark {
                let file = options.dir.join(path);
                fs_err::create_dir_all(file.parent().unwrap()).unwrap();
                fs_err::write(file, &block.body).unwrap();
            }
        }
        let script = book::script(&blocks, &server.base_url());
        fs_err::write(options.dir.join("script.sh"), &script).unwrap();
        let output = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&options.dir)
            .env("PATH", &path)
            .output()
            .unwrap();
        let transcript = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        fs_err::write(options.dir.join("output.txt"), &transcript).unwrap();
        println!(
            "docs: {} ran its run blocks: {}",
            page.display(),
            output.status
        );
        ran += 1;
        if !output.status.success() {
            failures.push(format!(
                "{}: its run blocks failed ({}); the script is {}, and it printed:\n{transcript}",
                page.display(),
                output.status,
                options.dir.join("script.sh").display()
            ));
        }
        drop(server);
    }
    assert!(ran > 0, "no page of the book has a `run` block");
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// Every page under `docs/src/` is a chapter of `SUMMARY.md` (mdBook builds only those, so a page
/// left out would be lost without a word), and every chapter the summary lists is a page there,
/// but for the error code page, which the build writes.
#[test]
fn every_page_is_in_the_summary_and_every_chapter_is_a_page() {
    let root = root();
    let sources = root.join(book::SOURCES);
    let summary = fs_err::read_to_string(sources.join("SUMMARY.md")).unwrap();
    let chapters: Vec<&str> = summary
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .collect();
    let pages: Vec<String> = book::pages(&root)
        .unwrap()
        .iter()
        .map(|page| {
            page.strip_prefix(book::SOURCES)
                .unwrap()
                .display()
                .to_string()
        })
        .filter(|page| page != "SUMMARY.md")
        .collect();
    for page in &pages {
        assert!(
            chapters.contains(&page.as_str()),
            "docs/src/{page} is not in docs/src/SUMMARY.md, so the book leaves it out"
        );
    }
    for chapter in &chapters {
        assert!(
            pages.iter().any(|page| page == chapter) || *chapter == "errors.md",
            "docs/src/SUMMARY.md lists {chapter}, which is no page of docs/src/"
        );
    }
}
