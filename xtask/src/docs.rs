//! The documentation: the book in `docs/` built with mdBook, and the API reference page beside it,
//! into `docs/book/`, which the server serves at `/docs/` (and the release binary carries).
//!
//! mdBook builds a staged copy of `docs/` (`target/docs/stage/`) to which two things are added:
//! the error code page, `errors.md`, written here from the protocol's list of codes
//! ([`ErrorCode::ALL`] and each code's [`ErrorCode::reference`]), so that a new code cannot be
//! left out of it; and the screenshots of the app's tour as the e2e suite last took them
//! (`target/docs/screenshots/`), in place of the committed copies in `docs/src/images/`. Then
//! the API reference (`docs/api/`: a page that has Redoc, pinned in `sdk/js-tools`, render the
//! server's OpenAPI document) is copied in as `api/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolbridge_protocol::error::ErrorCode;

use crate::ctx::Ctx;
use crate::error::Error;
use crate::js_tools;
use crate::wasm;

/// The book's sources, relative to the workspace root.
const SOURCES: &str = "docs";

/// Where the built documentation goes, relative to the workspace root.
pub(crate) const OUTPUT: &str = "docs/book";

/// The generated error code page, inside the book's `src/`.
const ERRORS_PAGE: &str = "errors.md";

/// The committed screenshots, inside the book's `src/`.
const IMAGES: &str = "images";

/// `docs/book`, absolute.
pub(crate) fn output_dir(ctx: &Ctx) -> PathBuf {
    ctx.root().join(OUTPUT)
}

/// Where the e2e suite writes the screenshots of the app's tour.
pub(crate) fn screenshots_dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir().join("docs").join("screenshots")
}

/// Builds the book and the API reference page into `docs/book/` and returns that folder.
pub(crate) fn build(ctx: &Ctx) -> Result<PathBuf, Error> {
    let sh = ctx.sh();
    let mdbook = ctx.find("mdbook").ok_or_else(|| {
        Error::failed("mdbook is not installed; run `cargo xtask setup`, which installs it")
    })?;
    let redoc = js_tools::script(ctx, js_tools::REDOC)?;

    let stage = ctx.target_dir().join("docs").join("stage");
    if stage.exists() {
        sh.remove_path(&stage)?;
    }
    let sources = ctx.root().join(SOURCES);
    sh.create_dir(&stage)?;
    sh.copy_file(sources.join("book.toml"), stage.join("book.toml"))?;
    wasm::mirror(ctx, &sources.join("src"), &stage.join("src"))?;
    sh.write_file(stage.join("src").join(ERRORS_PAGE), errors_page())?;
    let fresh = fresh_screenshots(ctx, &stage.join("src").join(IMAGES))?;
    if fresh > 0 {
        println!(
            "docs: {fresh} screenshots from the last e2e run ({})",
            ctx.shown(&screenshots_dir(ctx))
        );
    }

    // Built beside, then mirrored: a file that came out the same keeps its modification time,
    // so that cargo does not compile the release server, which carries the book, again.
    let built = ctx.target_dir().join("docs").join("book");
    if built.exists() {
        sh.remove_path(&built)?;
    }
    sh.cmd(mdbook)
        .arg("build")
        .arg(&stage)
        .arg("--dest-dir")
        .arg(&built)
        .run()?;
    let api = built.join("api");
    wasm::mirror(ctx, &sources.join("api"), &api)?;
    let script = without_outside_logo(&sh.read_file(&redoc)?)?;
    sh.write_file(api.join("redoc.standalone.js"), script)?;
    let licence = redoc.with_extension("js.LICENSE.txt");
    if licence.is_file() {
        sh.copy_file(&licence, api.join("redoc.standalone.js.LICENSE.txt"))?;
    }
    let output = output_dir(ctx);
    wasm::mirror(ctx, &built, &output)?;
    Ok(output)
}

/// The address of the logo Redoc's side bar shows beside "API docs by Redocly", on Redocly's
/// servers.
const REDOC_LOGO: &str = "\"https://cdn.redoc.ly/redoc/logo-mini.svg\"";

/// Redoc's standalone script with its one request to another origin, its side bar's logo, made
/// an empty `data:` image, which fails and is taken away (Redoc drops the logo when it cannot
/// load); the link to Redocly stays. A release of Redoc without that address exactly once is
/// refused, so that a new one is looked at for what it fetches.
fn without_outside_logo(script: &str) -> Result<String, Error> {
    match script.matches(REDOC_LOGO).count() {
        1 => Ok(script.replacen(REDOC_LOGO, "\"data:,\"", 1)),
        found => Err(Error::failed(format!(
            "Redoc's standalone script names {REDOC_LOGO} {found} times, not once: see what this \
             release of Redoc fetches from other origins, and update xtask/src/docs.rs"
        ))),
    }
}

/// lychee over the built documentation `book`, offline: every link from one of its pages to
/// another and every `#anchor` must exist. mdBook's 404 page is left out: its links are absolute
/// (`/docs/…`), for whatever address it answers; and so are links to the server's API, which is
/// no file of the book.
pub(crate) fn check_links(ctx: &Ctx, book: &Path) -> Result<(), Error> {
    let lychee = ctx.find("lychee").ok_or_else(|| {
        Error::failed("lychee is not installed; run `cargo xtask setup`, which installs it")
    })?;
    let pages = format!("{}/**/*.html", book.display());
    ctx.sh()
        .cmd(lychee)
        .args(["--offline", "--include-fragments", "--no-progress"])
        .arg("--root-dir")
        .arg(book)
        .args(["--exclude-path", r"/404\.html$"])
        .args(["--exclude", "/api/v1/"])
        .arg(pages)
        .run()?;
    Ok(())
}

/// Puts each screenshot the e2e suite took over the committed copy of the same name in `images`
/// (a staged folder), and returns how many there were. One without a committed copy is refused:
/// the book would show it only after an e2e run.
fn fresh_screenshots(ctx: &Ctx, images: &Path) -> Result<usize, Error> {
    let taken = screenshots_dir(ctx);
    if !taken.is_dir() {
        return Ok(0);
    }
    let mut count = 0;
    for shot in ctx.sh().read_dir(&taken)? {
        let Some(name) = shot.file_name() else {
            continue;
        };
        let committed = images.join(name);
        if !committed.is_file() {
            return Err(Error::failed(format!(
                "the e2e suite took {}, which docs/src/{IMAGES}/ has no copy of: copy it there \
                 and commit it",
                ctx.shown(&shot)
            )));
        }
        ctx.sh().copy_file(&shot, &committed)?;
        count += 1;
    }
    Ok(count)
}

/// The error code page: one section per code, its anchor the code itself, as the `type` of a
/// problem body (`/docs/errors#NOT_FOUND`) names it.
pub(crate) fn errors_page() -> String {
    let mut page = String::from(
        "# Error codes\n\n\
         Every error toolbridge gives carries one of the codes below. A tool sees it as `code` on \
         the `BridgeError` its promise rejects with (on the wire, JSON-RPC's numeric code is \
         `error.code` and the name is `error.data.code`). A REST client sees it as `code` in the \
         `application/problem+json` body, whose `type` is the address of the code's entry on \
         this page, and by the HTTP status. The `requestId` of a REST answer is what to quote \
         when you report a problem: the server's log has a line with it.\n\n\
         | code | over REST | JSON-RPC code |\n|---|---|---|\n",
    );
    for code in ErrorCode::ALL {
        let name = code.as_str();
        let _ = writeln!(
            page,
            "| [`{name}`](#{name}) | {} | {} |",
            rest(code),
            code.rpc_code()
        );
    }
    for code in ErrorCode::ALL {
        let name = code.as_str();
        let reference = code.reference();
        let _ = write!(
            page,
            "\n## `{name}` {{#{name}}}\n\n\
             {rest} · JSON-RPC {rpc}\n\n\
             {meaning}\n\n\
             **Where it comes from.** {given_by}\n\n\
             **What to do.** {what_to_do}\n",
            rest = match code.rest_status() {
                Some(status) => format!("HTTP {status}"),
                None => "Bridge only".to_owned(),
            },
            rpc = code.rpc_code(),
            meaning = reference.meaning,
            given_by = reference.given_by,
            what_to_do = reference.what_to_do,
        );
    }
    page
}

/// The status a code comes with over REST, or that the REST API never sends it.
fn rest(code: ErrorCode) -> String {
    code.rest_status().map_or_else(
        || "never (bridge only)".to_owned(),
        |status| status.to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redocs_logo_is_fetched_from_nowhere() {
        let script = "a(\"img\",{src:\"https://cdn.redoc.ly/redoc/logo-mini.svg\"})";
        assert_eq!(
            without_outside_logo(script).unwrap(),
            "a(\"img\",{src:\"data:,\"})"
        );
        assert!(without_outside_logo("a(\"img\")").is_err());
    }

    #[test]
    fn the_error_page_has_an_anchor_for_every_code() {
        let page = errors_page();
        for code in ErrorCode::ALL {
            let heading = format!("\n## `{0}` {{#{0}}}\n", code.as_str());
            assert_eq!(page.matches(&heading).count(), 1, "{heading}");
            assert!(page.contains(&format!("[`{0}`](#{0})", code.as_str())));
        }
    }
}
