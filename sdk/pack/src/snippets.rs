//! The host module's glue with the JavaScript files its crate imports put inside it.
//!
//! A `#[wasm_bindgen(module = "/src/…")]` import makes wasm-bindgen's `web` target write the file
//! beside the glue under `snippets/` and import it; [`inline_snippets`] puts each such file in the
//! glue instead, so that `host/dist` stays the three files the server and the npm package hand out.

use crate::Error;

/// The ES glue `glue` with each JavaScript file it imports from the crate (wasm-bindgen's
/// `import { a, b } from './snippets/…';` line for a `#[wasm_bindgen(module = "/src/…")]`) put in
/// place of its import, in a function that answers what the glue imports, so that `host/dist`
/// stays the files the server and the npm package hand out. `snippet` reads a file by the path
/// the import names. Fails where an import or a file is not of that form: a file may only declare
/// what it exports with `export function`, and import nothing.
///
/// # Errors
///
/// [`Error::Glue`] for an import or a file of another form; what `snippet` fails with.
pub fn inline_snippets<E: From<Error>>(
    glue: &str,
    snippet: impl Fn(&str) -> Result<String, E>,
) -> Result<String, E> {
    let mut inlined = String::with_capacity(glue.len());
    for line in glue.split_inclusive('\n') {
        let Some(import) = line.strip_prefix("import ") else {
            inlined.push_str(line);
            continue;
        };
        let form = || Error::Glue(format!("the host module's glue imports {import:?}"));
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
                return Err(Error::Glue(format!(
                    "{path}: the host module's JavaScript may only export functions and import nothing: {line:?}"
                ))
                .into());
            }
            body.push_str(line.strip_prefix("export ").unwrap_or(line));
            body.push('\n');
        }
        for name in names.split(", ") {
            let declared = format!("function {name}(");
            if !body.lines().any(|line| line.starts_with(&declared)) {
                return Err(Error::Glue(format!("{path} exports no function {name:?}")).into());
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
        return Err(Error::Glue("the host module's glue still names a snippet".to_owned()).into());
    }
    Ok(inlined)
}

#[cfg(test)]
mod tests {
    use super::{Error, inline_snippets};

    const SNIPPET: &str = "const TWO = 2;\n\nexport function twice(x) {\n  return x * TWO;\n}\n";

    fn read(path: &str) -> Result<String, Error> {
        match path {
            "./snippets/host-1/src/lines.js" => Ok(SNIPPET.to_owned()),
            "./snippets/host-1/src/bad.js" => Ok("export const x = 1;\n".to_owned()),
            _ => Err(Error::Glue(format!("no {path}"))),
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
