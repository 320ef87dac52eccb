//! Workspace crates built for wasm32 and taken through `wasm-bindgen`: the host module for parent
//! pages (`host/dist`), the SDK (bridge.js, see [`crate::bridge_js`]) and the test kit's memory
//! backend (see [`crate::npm_package`]).

use std::path::{Path, PathBuf};

use xshell::cmd;

use crate::ctx::Ctx;
use crate::error::Error;
use crate::pins::WASM_TARGET;

/// The size-oriented cargo profile of bridge.js (see the workspace `Cargo.toml`).
pub(crate) const SIZE_PROFILE: &str = "wasm-release";
/// The speed-oriented cargo profile of the host module, which the host bench measures too.
pub(crate) const SPEED_PROFILE: &str = "host-release";
/// Where the host module goes, relative to the workspace root.
const HOST_DIST: &str = "host/dist";

/// Builds `package` for wasm32 with the cargo `profile` and `extra` arguments; the module's path.
pub(crate) fn build(
    ctx: &Ctx,
    profile: &str,
    package: &str,
    extra: &[&str],
) -> Result<PathBuf, Error> {
    ctx.cargo()
        .args(["build", "-p", package, "--target", WASM_TARGET])
        .args(["--profile", profile])
        .args(extra)
        .run()?;
    let file = format!("{}.wasm", package.replace('-', "_"));
    Ok(ctx.target_dir().join(WASM_TARGET).join(profile).join(file))
}

/// `wasm-bindgen --target TARGET FLAGS --out-dir OUT MODULE`.
pub(crate) fn bindgen(
    ctx: &Ctx,
    module: &Path,
    target: &str,
    flags: &[&str],
    out: &Path,
) -> Result<(), Error> {
    if ctx.find("wasm-bindgen").is_none() {
        return Err(Error::failed(
            "wasm-bindgen not found; run `cargo xtask setup`",
        ));
    }
    let (sh, module, out) = (ctx.sh(), ctx.shown(module), ctx.shown(out));
    Ok(cmd!(
        sh,
        "wasm-bindgen --target {target} {flags...} --out-dir {out} {module}"
    )
    .run()?)
}

/// `host/dist`, absolute.
pub(crate) fn host_dist(ctx: &Ctx) -> PathBuf {
    ctx.root().join(HOST_DIST)
}

/// Builds `host/dist/`: the `toolbridge-host` crate with [`SPEED_PROFILE`], and
/// `wasm-bindgen --target web` writing an ES module, its `.wasm` and its declarations, with the
/// JavaScript the crate imports ([`inline_snippets`]) in the module. The ES module's path.
pub(crate) fn host_module(ctx: &Ctx) -> Result<PathBuf, Error> {
    let module = build(ctx, SPEED_PROFILE, "toolbridge-host", &["--lib"])?;
    let dist = host_dist(ctx);
    let sh = ctx.sh();
    let snippets = dist.join("snippets");
    sh.remove_path(&snippets)?;
    bindgen(ctx, &module, "web", &["--remove-producers-section"], &dist)?;
    let glue = dist.join("toolbridge_host.js");
    let inlined = inline_snippets(&sh.read_file(&glue)?, |path| {
        Ok(sh.read_file(dist.join(path))?)
    })?;
    sh.write_file(&glue, inlined)?;
    sh.remove_path(&snippets)?;
    let wasm = dist.join("toolbridge_host_bg.wasm");
    let size = ctx.sh().read_binary_file(&wasm)?.len();
    println!("host module: wrote {} ({size} bytes)", ctx.shown(&wasm));
    Ok(dist.join("toolbridge_host.js"))
}

/// The ES glue `glue` with each JavaScript file it imports from the crate (wasm-bindgen's
/// `import { a, b } from './snippets/…';` line for a `#[wasm_bindgen(module = "/src/…")]`) put in
/// place of its import, in a function that answers what the glue imports, so that `host/dist`
/// stays the files the server and the npm package hand out. `snippet` reads a file by the path
/// the import names. Fails where an import or a file is not of that form: a file may only declare
/// what it exports with `export function`, and import nothing.
fn inline_snippets(
    glue: &str,
    snippet: impl Fn(&str) -> Result<String, Error>,
) -> Result<String, Error> {
    let mut inlined = String::with_capacity(glue.len());
    for line in glue.split_inclusive('\n') {
        let Some(import) = line.strip_prefix("import ") else {
            inlined.push_str(line);
            continue;
        };
        let form = || Error::failed(format!("the host module's glue imports {import:?}"));
        let (names, path) = import
            .strip_prefix("{ ")
            .and_then(|rest| rest.split_once(" } from '"))
            .ok_or_else(form)?;
        let path = path
            .trim_end()
            .strip_suffix("';")
            .filter(|path| path.starts_with("./snippets/"))
            .ok_or_else(form)?;
        let mut body = String::new();
        for line in snippet(path)?.lines() {
            if line.starts_with("import")
                || line.starts_with("export") && !line.starts_with("export function ")
            {
                return Err(Error::failed(format!(
                    "{path}: the host module's JavaScript may only export functions and import nothing: {line:?}"
                )));
            }
            body.push_str(line.strip_prefix("export ").unwrap_or(line));
            body.push('\n');
        }
        for name in names.split(", ") {
            let declared = format!("function {name}(");
            if !body.lines().any(|line| line.starts_with(&declared)) {
                return Err(Error::failed(format!(
                    "{path} exports no function {name:?}"
                )));
            }
        }
        inlined.push_str("const { ");
        inlined.push_str(names);
        inlined.push_str(" } = (() => {\n");
        inlined.push_str(&body);
        inlined.push_str("return { ");
        inlined.push_str(names);
        inlined.push_str(" };\n})();\n");
    }
    if inlined.contains("'./snippets/") {
        return Err(Error::failed(
            "the host module's glue still names a snippet",
        ));
    }
    Ok(inlined)
}

#[cfg(test)]
mod tests {
    use super::inline_snippets;
    use crate::error::Error;

    const SNIPPET: &str = "const TWO = 2;\n\nexport function twice(x) {\n  return x * TWO;\n}\n";

    fn read(path: &str) -> Result<String, Error> {
        match path {
            "./snippets/host-1/src/lines.js" => Ok(SNIPPET.to_owned()),
            "./snippets/host-1/src/bad.js" => Ok("export const x = 1;\n".to_owned()),
            _ => Err(Error::failed(format!("no {path}"))),
        }
    }

    #[test]
    fn a_snippet_goes_in_place_of_its_import() {
        let glue = "let wasm;\nimport { twice } from './snippets/host-1/src/lines.js';\nexport function f() { return twice(3); }\n";
        let inlined = inline_snippets(glue, read).unwrap();
        assert_eq!(
            inlined,
            "let wasm;\nconst { twice } = (() => {\nconst TWO = 2;\n\nfunction twice(x) {\n  return x * TWO;\n}\nreturn { twice };\n})();\nexport function f() { return twice(3); }\n"
        );
    }

    #[test]
    fn an_import_or_a_snippet_of_another_form_fails() {
        for glue in [
            "import { twice as two } from './snippets/host-1/src/lines.js';\n",
            "import { missing } from './snippets/host-1/src/lines.js';\n",
            "import { x } from './snippets/host-1/src/bad.js';\n",
            "import * as all from './snippets/host-1/src/lines.js';\n",
            "import { twice } from './other.js';\n",
        ] {
            assert!(inline_snippets(glue, read).is_err(), "{glue}");
        }
    }
}
