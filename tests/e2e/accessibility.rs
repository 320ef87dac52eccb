//! axe-core (Deque's accessibility engine, pinned in `sdk/js-tools/package.json` and installed
//! by `cargo xtask setup`) run on the page the browser shows: what it finds, one line per rule
//! and the elements that break it.

use serde_json::Value;

use crate::browser::Browser;

/// axe-core's `axe.min.js`, as its npm package ships it, where setup installs it.
fn axe_script() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sdk/js-tools/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read axe-core at {} ({e}): run `cargo xtask setup`",
            path.display()
        )
    })
}

/// Runs axe-core with its default rules (WCAG 2.0 to 2.2 A and AA, and Deque's best practices)
/// on the app's page and answers its violations, each as `rule (impact): help — targets`; empty
/// when it finds none. Frames are left out: a tool's page is the tool's own, and its origin is
/// not the app's.
pub(crate) async fn axe_violations(browser: &Browser) -> Vec<String> {
    // Put into the page once per page load (the app's routes do not load a new page).
    let loaded = browser
        .client
        .execute("return typeof window.axe === 'object';", vec![])
        .await
        .unwrap();
    if loaded != Value::Bool(true) {
        browser.client.execute(&axe_script(), vec![]).await.unwrap();
    }
    let answer = browser
        .run(
            "const results = await axe.run(document, { iframes: false, resultTypes: ['violations'] });
             return results.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes
               .slice(0, 6).map((node) => node.target.join(' ')).join(', ')}${v.nodes.length > 6
               ? `, and ${v.nodes.length - 6} more` : ''}`);",
        )
        .await;
    assert!(answer.get("thrown").is_none(), "axe-core failed: {answer}");
    answer
        .as_array()
        .unwrap_or_else(|| panic!("axe-core answered {answer}"))
        .iter()
        .map(|violation| violation.as_str().unwrap().to_owned())
        .collect()
}
