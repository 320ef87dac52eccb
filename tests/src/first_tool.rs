//! The book's first tool, and its test, taken from the book itself: a fenced block of
//! `docs/src/tools/first-tool.md` whose info string names a file of the example's folders
//! (```` ```html my-tool/index.html ````, ```` ```js my-tool-tests/tool.test.js ````) is that
//! file. The end-to-end suites serve the tool as a `--dev-tool` folder, with the mistake every
//! first tool makes beside it (its script written inline in the page, which the tool origin
//! refuses and the app must explain); the tool kit's suites run its test on the test host.

use std::path::{Path, PathBuf};

use fs_err::{create_dir_all as create_dir, read_to_string as read_text, write};

use crate::Error;
use crate::book::{self, Mark};

/// The page the example lives in, relative to the workspace root.
pub const PAGE: &str = "docs/src/tools/first-tool.md";

/// The folder the example lives in.
const FOLDER: &str = "my-tool";

/// The folder of the example's test page.
const TESTS_FOLDER: &str = "my-tool-tests";

/// The page's files of `folder`: `(name inside the folder, contents)`, in page order.
fn example_files(page: &str, folder: &str) -> Vec<(String, String)> {
    book::blocks(page)
        .0
        .into_iter()
        .filter_map(|block| match block.mark {
            Mark::File(path) => {
                let name = path.strip_prefix(folder)?.strip_prefix('/')?.to_owned();
                Some((name, block.body))
            }
            _ => None,
        })
        .collect()
}

/// The page, read from the workspace `root`.
fn read_page(root: &Path) -> Result<String, Error> {
    Ok(read_text(root.join(PAGE))?)
}

/// Writes `files` into the folder `dir`.
fn write_files(dir: &Path, files: &[(String, String)]) -> Result<(), Error> {
    create_dir(dir)?;
    for (name, body) in files {
        write(dir.join(name), body)?;
    }
    Ok(())
}

/// The book's first tool and its tests, written under `dir` as `my-tool/` and
/// `my-tool-tests/`.
pub fn write_example(root: &Path, dir: &Path) -> Result<(), Error> {
    let page = read_page(root)?;
    for folder in [FOLDER, TESTS_FOLDER] {
        let files = example_files(&page, folder);
        if files.is_empty() {
            return Err(Error::failed(format!(
                "{PAGE} has no ```… {folder}/… blocks: the tool kit's suites run the book's first tool and its test from them"
            )));
        }
        write_files(&dir.join(folder), &files)?;
    }
    Ok(())
}

/// The example's folders, written under `dir`: the book's own (`my-tool`) and the same page
/// with its script inline (`inline-script`). Answers both paths, for `--dev-tool`.
pub fn write_folders(root: &Path, dir: &Path) -> Result<[PathBuf; 2], Error> {
    let page = read_page(root)?;
    let files = example_files(&page, FOLDER);
    let file = |name: &str| {
        files
            .iter()
            .find(|(file, _)| file == name)
            .map(|(_, body)| body.as_str())
            .ok_or_else(|| {
                Error::failed(format!(
                    "{PAGE} has no ```… {FOLDER}/{name} block: the end-to-end suites run the book's first tool from it"
                ))
            })
    };
    let (manifest, page, script) = (
        file("manifest.json")?,
        file("index.html")?,
        file("tool.js")?,
    );
    let tag = "<script src=\"tool.js\" defer></script>";
    if !page.contains(tag) {
        return Err(Error::failed(format!(
            "{PAGE}'s {FOLDER}/index.html no longer loads its script with {tag}: update tests/src/first_tool.rs to match"
        )));
    }

    let own = dir.join(FOLDER);
    write_files(&own, &files)?;

    // The same tool, its script in the page after the paragraph it fills.
    let inline = dir.join("inline-script");
    create_dir(&inline)?;
    let renamed = manifest.replacen("\"My tool\"", "\"Inline script\"", 2);
    if renamed == manifest {
        return Err(Error::failed(format!(
            "{PAGE}'s {FOLDER}/manifest.json no longer names the tool \"My tool\": update tests/src/first_tool.rs to match"
        )));
    }
    write(inline.join("manifest.json"), renamed)?;
    let page = format!("{}<script>\n{script}</script>\n", page.replace(tag, ""));
    write(inline.join("index.html"), page)?;
    Ok([own, inline])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_blocks_that_name_a_file_of_the_folder_are_taken() {
        let page = "intro\n```json my-tool/manifest.json\n{}\n```\n```sh run\nls\n```\n\
                    ```html my-tool/index.html\n<p>\n```\n```js other/tool.js\nno\n```\n";
        let files = example_files(page, FOLDER);
        assert_eq!(
            files,
            vec![
                ("manifest.json".to_owned(), "{}\n".to_owned()),
                ("index.html".to_owned(), "<p>\n".to_owned()),
            ]
        );
    }
}
