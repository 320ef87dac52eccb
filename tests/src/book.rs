//! The code blocks of the book (`docs/src/**/*.md`), each with what its info string says about
//! running it. After the language word, every fenced block says one of:
//!
//! - a file, by its path: one of the book's first tool (```` ```html my-tool/index.html ````),
//!   which the tool kit and end-to-end suites write out and run ([`crate::first_tool`]), or one
//!   the page's `run` blocks use (```` ```python receiver/receiver.py ````), written beside them;
//! - `run`: a shell block the docs suite runs against a demo server ([`script`]);
//! - `output`: what a command printed or a server answered, not itself something to run;
//! - `norun` and the reason it is not run (```` ```sh norun needs root on a fresh machine ````).
//!
//! A block that says none of these, or `norun` without a reason, is a [`Problem`], so that no
//! example in the book is left unchecked without saying why.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::Error;

/// The book's sources, relative to the workspace root.
pub const SOURCES: &str = "docs/src";

/// What a block's info string says about running it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A file of an example tool, by its path (`my-tool/index.html`).
    File(String),
    /// Run by the docs suite.
    Run,
    /// What something printed or answered.
    Output,
    /// Not run, for this reason.
    NoRun(String),
}

/// One fenced code block of a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The line of its opening fence, from 1.
    pub line: usize,
    /// The language word (`sh`, `json`).
    pub language: String,
    /// What it says about running it.
    pub mark: Mark,
    /// Its text, each line ending in a newline.
    pub body: String,
}

/// A block whose info string does not say what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The line of its opening fence, from 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The fenced blocks of a page, and the problems of those that do not say what they are.
pub fn blocks(markdown: &str) -> (Vec<Block>, Vec<Problem>) {
    let mut blocks = Vec::new();
    let mut problems = Vec::new();
    // The block being read: its fence, first line, info string and text so far.
    let mut open: Option<(String, usize, String, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.take() {
            Some((fence, start, info, body)) if trimmed.trim_end() == fence => match mark(&info) {
                Ok((language, mark)) => blocks.push(Block {
                    line: start,
                    language,
                    mark,
                    body,
                }),
                Err(message) => problems.push(Problem {
                    line: start,
                    message,
                }),
            },
            Some((fence, start, info, mut body)) => {
                body.push_str(line);
                body.push('\n');
                open = Some((fence, start, info, body));
            }
            None => {
                let ticks = trimmed.chars().take_while(|c| *c == '`').count();
                if ticks >= 3 {
                    let (fence, info) = trimmed.split_at(ticks);
                    open = Some((
                        fence.to_owned(),
                        index + 1,
                        info.trim().to_owned(),
                        String::new(),
                    ));
                }
            }
        }
    }
    if let Some((_, start, _, _)) = open {
        problems.push(Problem {
            line: start,
            message: "the block is never closed".to_owned(),
        });
    }
    (blocks, problems)
}

/// The language and mark of an info string, or what is missing.
fn mark(info: &str) -> Result<(String, Mark), String> {
    let mut words = info.split_whitespace();
    let Some(language) = words.next() else {
        return Err("the block names no language (```sh, ```json …)".to_owned());
    };
    let rest: Vec<&str> = words.collect();
    let mark = match rest.split_first() {
        Some((&"run", [])) => Mark::Run,
        Some((&"output", [])) => Mark::Output,
        Some((&"norun", reason)) if !reason.is_empty() => Mark::NoRun(reason.join(" ")),
        Some((&"norun", _)) => {
            return Err(format!(
                "```{info}: `norun` needs the reason the block is not run"
            ));
        }
        Some((path, [])) if path.contains('/') => Mark::File((*path).to_owned()),
        _ => {
            return Err(format!(
                "```{info} does not say what the block is: after the language, write `run` \
                 (the docs suite runs it), `output` (what something printed), `norun <reason>`, \
                 or the example file it is (`my-tool/tool.js`)"
            ));
        }
    };
    Ok((language.to_owned(), mark))
}

/// Every page of the book under `root` (the workspace), relative to the root, sorted.
pub fn pages(root: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut pages = Vec::new();
    let mut folders = vec![root.join(SOURCES)];
    while let Some(folder) = folders.pop() {
        for entry in fs_err::read_dir(&folder)? {
            let path = entry?.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|extension| extension == "md") {
                let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                pages.push(relative);
            }
        }
    }
    pages.sort();
    Ok(pages)
}

/// The shell script of a page's `run` blocks, in order: a `sh` block as written, and of a
/// `console` block the commands after `$ ` (with the lines a trailing `\` continues onto), its
/// output lines left out. Every `http://localhost:8080` becomes `base_url`.
pub fn script(blocks: &[Block], base_url: &str) -> String {
    let mut script = String::from("set -euo pipefail\n");
    for block in blocks.iter().filter(|block| block.mark == Mark::Run) {
        let _ = std::fmt::Write::write_fmt(
            &mut script,
            format_args!("# the block at line {}\n", block.line),
        );
        if block.language == "console" {
            let mut continued = false;
            for line in block.body.lines() {
                let command = if continued {
                    Some(line)
                } else {
                    line.strip_prefix("$ ")
                };
                if let Some(command) = command {
                    script.push_str(command);
                    script.push('\n');
                    continued = command.ends_with('\\');
                }
            }
        } else {
            script.push_str(&block.body);
        }
    }
    script.replace("http://localhost:8080", base_url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_block_is_read_with_its_mark() {
        let page = "text\n```json my-tool/manifest.json\n{}\n```\n\n  ```sh norun needs root\n  \
                    apt-get install x\n  ```\n```console run\n$ curl -s \\\n    \
                    http://localhost:8080/healthz\nok\n```\n````md output\n```\n````\n";
        let (blocks, problems) = blocks(page);
        assert_eq!(problems, []);
        let marks: Vec<&Mark> = blocks.iter().map(|block| &block.mark).collect();
        assert_eq!(
            marks,
            [
                &Mark::File("my-tool/manifest.json".to_owned()),
                &Mark::NoRun("needs root".to_owned()),
                &Mark::Run,
                &Mark::Output,
            ]
        );
        assert_eq!(blocks[3].body, "```\n");
        assert_eq!(
            script(&blocks, "http://127.0.0.1:1234"),
            "set -euo pipefail\n# the block at line 9\ncurl -s \\\n    \
             http://127.0.0.1:1234/healthz\n"
        );
    }

    #[test]
    fn a_block_that_says_nothing_is_a_problem() {
        let page = "```sh\nls\n```\n```\nx\n```\n```sh norun\nx\n```\n```sh run\n";
        let (blocks, problems) = blocks(page);
        assert_eq!(blocks, []);
        let lines: Vec<usize> = problems.iter().map(|problem| problem.line).collect();
        assert_eq!(lines, [1, 4, 7, 10]);
        assert!(
            problems[0]
                .message
                .contains("does not say what the block is")
        );
        assert!(problems[1].message.contains("no language"));
        assert!(problems[2].message.contains("needs the reason"));
        assert!(problems[3].message.contains("never closed"));
    }
}
