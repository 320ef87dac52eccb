//! A tool's install settings and outside origins over HTTP: the origins in
//! its Content-Security-Policy, the values an admin sets per tenant, read
//! back in the tool list and heard live, and what a tool under development
//! reports of what its frame refused.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use toolbridge_server::tools::{self, DevTool, ToolSites};

use crate::harness::{Server, call, json, upload};

const PAGE: &str = "<!doctype html><title>T</title><script src=\"/sdk/bridge.js\"></script>";

/// The manifest of the flooring-like test tool, with `extra` fields merged.
pub(crate) fn manifest(short_name: &str, version: &str, extra: &Value) -> Value {
    let mut manifest = json!({
        "name": format!("{short_name} tool"), "shortName": short_name, "type": "standalone",
        "version": version, "description": "A test tool.", "entry": "index.html",
    });
    for (key, value) in extra.as_object().unwrap() {
        manifest[key] = value.clone();
    }
    manifest
}

/// Writes a tool folder with this manifest into `dir`.
fn write_folder(dir: &Path, manifest: &Value) {
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(dir.join("index.html"), PAGE).unwrap();
}

/// The bundle .zip of a tool with this manifest.
pub(crate) fn zip(manifest: &Value) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), manifest);
    let folder = toolbridge_bundle::read_dir(dir.path()).unwrap();
    toolbridge_bundle::pack(&folder.bundle).unwrap()
}

/// The bundle .zip of a tool with this manifest, written by hand: `pack` would refuse a manifest
/// that breaks a rule before the server does.
fn zip_by_hand(manifest: &Value) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (name, body) in [
        ("manifest.json", manifest.to_string()),
        ("index.html", PAGE.to_owned()),
    ] {
        writer.start_file(name, options).unwrap();
        std::io::Write::write_all(&mut writer, body.as_bytes()).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// Installs a tool with this manifest straight into the server's store.
pub(crate) async fn install(server: &Server, manifest: &Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    write_folder(dir.path(), manifest);
    let bundle = toolbridge_bundle::read_dir(dir.path()).unwrap().bundle;
    tools::install(&server.store, &bundle, None)
        .await
        .unwrap()
        .tool
        .slug
}

/// The Content-Security-Policy of the tool `slug`'s entry page.
async fn policy(server: &Server, slug: &str) -> String {
    let page = server
        .to_tool(slug, Method::GET, "/index.html")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200, "{slug}");
    page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// The policy's directives, by name.
fn directives(policy: &str) -> Vec<(String, String)> {
    policy
        .split(';')
        .map(str::trim)
        .filter(|directive| !directive.is_empty())
        .map(|directive| {
            let (name, value) = directive.split_once(' ').unwrap_or((directive, ""));
            (name.to_owned(), value.to_owned())
        })
        .collect()
}

fn connect_src(policy: &str) -> String {
    let found: Vec<String> = directives(policy)
        .into_iter()
        .filter(|(name, _)| name == "connect-src")
        .map(|(_, value)| value)
        .collect();
    assert_eq!(found.len(), 1, "{policy}");
    found[0].clone()
}

#[tokio::test]
async fn a_declared_origin_is_added_to_connect_src_and_nothing_else_changes() {
    let server = Server::start().await;
    let plain = install(&server, &manifest("Plain", "1.0.0", &json!({}))).await;
    let vendor = install(
        &server,
        &manifest(
            "Vendor",
            "1.0.0",
            &json!({"permissions": {"connect": ["https://api.vendor.example"]}}),
        ),
    )
    .await;
    let two = install(
        &server,
        &manifest(
            "Two",
            "1.0.0",
            &json!({"permissions": {"connect": ["https://b.vendor.example:8443", "https://a.vendor.example"]}}),
        ),
    )
    .await;

    let plain_policy = policy(&server, &plain).await;
    let vendor_policy = policy(&server, &vendor).await;
    assert_eq!(connect_src(&plain_policy), "'self'");
    assert_eq!(
        connect_src(&vendor_policy),
        "'self' https://api.vendor.example"
    );
    assert_eq!(
        connect_src(&policy(&server, &two).await),
        "'self' https://b.vendor.example:8443 https://a.vendor.example"
    );
    // Every other directive is the same as the plain tool's.
    let others = |policy: &str| -> Vec<(String, String)> {
        directives(policy)
            .into_iter()
            .filter(|(name, _)| name != "connect-src")
            .collect()
    };
    assert_eq!(others(&vendor_policy), others(&plain_policy));
    assert!(
        others(&plain_policy)
            .iter()
            .any(|(name, value)| name == "script-src" && value == "'self' 'wasm-unsafe-eval'"),
        "{plain_policy}"
    );
    // The origin reaches no other directive.
    assert_eq!(vendor_policy.matches("vendor.example").count(), 1);
    // An error answer of the tool's origin carries the same policy.
    let missing = server
        .to_tool(&vendor, Method::GET, "/absent.js")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.headers()["content-security-policy"]
            .to_str()
            .unwrap(),
        vendor_policy
    );
}

#[tokio::test]
async fn a_dev_tools_policy_follows_its_folders_manifest_as_it_is_now() {
    let folder = tempfile::tempdir().unwrap();
    let declaring = |origins: &[&str]| {
        manifest(
            "Live",
            "1.0.0",
            &json!({"permissions": {"connect": origins}}),
        )
    };
    write_folder(folder.path(), &declaring(&["https://api.vendor.example"]));
    let dir = folder.path().to_owned();
    let server = dev_server("live", dir).await;
    assert_eq!(
        connect_src(&policy(&server, "live").await),
        "'self' https://api.vendor.example"
    );
    write_folder(
        folder.path(),
        &declaring(&["https://prices.vendor.example"]),
    );
    assert_eq!(
        connect_src(&policy(&server, "live").await),
        "'self' https://prices.vendor.example"
    );
    write_folder(folder.path(), &manifest("Live", "1.0.0", &json!({})));
    assert_eq!(connect_src(&policy(&server, "live").await), "'self'");
}

/// A server that serves the folder `dir` as the dev tool `slug`.
async fn dev_server(slug: &str, dir: std::path::PathBuf) -> Server {
    let slug = slug.to_owned();
    Server::start_with(move |state| {
        let sites = ToolSites::clone(&state.tool_sites).with_dev_tool(DevTool { slug, dir });
        state.serving_tools(sites)
    })
    .await
}

// ---------------------------------------------------------------- dev reports

#[tokio::test]
async fn a_dev_tool_takes_reports_of_what_its_frame_refused() {
    let folder = tempfile::tempdir().unwrap();
    write_folder(folder.path(), &manifest("Live", "1.0.0", &json!({})));
    let server = dev_server("live", folder.path().to_owned()).await;
    install(&server, &manifest("Plain", "1.0.0", &json!({}))).await;
    let office = server.sign_in("office@harbour.test").await;
    let report = json!({"kind": "policy", "detail": "script-src-elem inline"});

    let answer = server
        .as_user(&office, Method::POST, "/api/dev-tools/live/blocked")
        .json(&report)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 204);

    // An installed tool, or no tool at all: no reports.
    for slug in ["plain", "absent"] {
        let (status, problem) = call(
            &server,
            &office,
            Method::POST,
            &format!("/api/dev-tools/{slug}/blocked"),
            Some(&report),
        )
        .await;
        assert_eq!(status, 404, "{slug}: {problem}");
    }

    for (body, path) in [
        (json!({"kind": "sneaky", "detail": "x"}), "kind"),
        (json!({"detail": "x"}), "kind"),
        (json!({"kind": "modal"}), "detail"),
        (json!({"kind": "modal", "detail": 5}), "detail"),
        (json!(["modal"]), ""),
    ] {
        let (status, problem) = call(
            &server,
            &office,
            Method::POST,
            "/api/dev-tools/live/blocked",
            Some(&body),
        )
        .await;
        assert_eq!(status, 422, "{body}: {problem}");
        assert_eq!(problem["errors"][0]["path"], path, "{body}: {problem}");
    }

    // Only from the app's signed-in pages.
    let (status, _) = json(
        server
            .request(Method::POST, "/api/dev-tools/live/blocked")
            .json(&report)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);
}

// ---------------------------------------------------------------- settings

fn declared() -> Value {
    json!({
        "settings": [
            {"key": "wastePercent", "label": "Waste allowance (%)", "type": "number", "default": 10},
            {"key": "region", "label": "Region", "type": "select", "options": ["North", "South"], "required": true},
            {"key": "supplier", "label": "Default supplier", "type": "string"},
            {"key": "showCost", "label": "Show cost", "type": "boolean", "default": false}
        ],
        "permissions": {"connect": ["https://api.vendor.example"]}
    })
}

/// A server with the tool `floor` installed (declaring [`declared`]'s settings), and its
/// tenant's admin signed in.
async fn floor_installed() -> (Server, String) {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let (status, installed) = upload(
        &server,
        &admin,
        zip(&manifest("Floor", "1.0.0", &declared())),
    )
    .await;
    assert_eq!(status, 201, "{installed}");
    (server, admin)
}

pub(crate) async fn put_settings(
    server: &Server,
    cookie: &str,
    slug: &str,
    values: &Value,
) -> (u16, Value) {
    call(
        server,
        cookie,
        Method::PUT,
        &format!("/api/settings/tools/{slug}/settings"),
        Some(values),
    )
    .await
}

/// The tool `slug` in `GET /api/tools` as the user of `cookie`.
pub(crate) async fn listed(server: &Server, cookie: &str, slug: &str) -> Value {
    let (status, tools) = call(server, cookie, Method::GET, "/api/tools", None).await;
    assert_eq!(status, 200, "{tools}");
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["slug"] == slug)
        .unwrap_or_else(|| panic!("{slug} not listed: {tools}"))
        .clone()
}

/// An open `GET /api/events` stream.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn open(server: &Server, cookie: &str) -> Self {
        let response = server
            .as_user(cookie, Method::GET, "/api/events")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next event of any name, and its data.
    async fn next(&mut self) -> (String, Value) {
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let event = block.lines().find_map(|line| line.strip_prefix("event: "));
                let data = block.lines().find_map(|line| line.strip_prefix("data: "));
                if let (Some(event), Some(data)) = (event, data) {
                    return (event.to_owned(), serde_json::from_str(data).unwrap());
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(5), self.response.chunk())
                .await
                .unwrap_or_else(|_| panic!("no event within 5 s; got {:?}", self.buffer))
                .unwrap()
                .unwrap_or_else(|| panic!("the stream ended; got {:?}", self.buffer));
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

#[tokio::test]
async fn an_admin_sets_a_tools_settings_and_the_tenants_pages_read_and_hear_them() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let office = server.sign_in("office@harbour.test").await;
    let other = server.sign_in("admin@other.test").await;

    let (status, installed) = upload(
        &server,
        &admin,
        zip(&manifest("Floor", "1.0.0", &declared())),
    )
    .await;
    assert_eq!(status, 201, "{installed}");
    let tool = &installed["tool"];
    assert_eq!(tool["slug"], "floor");
    // As declared, with `required` spelled out.
    assert_eq!(
        tool["settingDeclarations"],
        json!([
            {"key": "wastePercent", "label": "Waste allowance (%)", "type": "number", "required": false, "default": 10},
            {"key": "region", "label": "Region", "type": "select", "options": ["North", "South"], "required": true},
            {"key": "supplier", "label": "Default supplier", "type": "string", "required": false},
            {"key": "showCost", "label": "Show cost", "type": "boolean", "required": false, "default": false}
        ])
    );
    assert_eq!(
        tool["settings"],
        json!({"wastePercent": 10, "showCost": false})
    );
    assert_eq!(tool["connect"], json!(["https://api.vendor.example"]));

    let mut harbour_events = Events::open(&server, &office).await;
    let mut other_events = Events::open(&server, &other).await;

    let (status, answer) = put_settings(
        &server,
        &admin,
        "floor",
        &json!({"wastePercent": 12.5, "region": "South", "supplier": "Acme"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let seen =
        json!({"wastePercent": 12.5, "region": "South", "supplier": "Acme", "showCost": false});
    assert_eq!(answer["settings"], seen);
    assert_eq!(answer["slug"], "floor");
    assert_eq!(answer["settingDeclarations"].as_array().unwrap().len(), 4);
    assert_eq!(answer["connect"], json!(["https://api.vendor.example"]));
    assert_eq!(answer["enabled"], true);

    // Every user of the tenant reads them; the admin's list agrees.
    let in_list = listed(&server, &office, "floor").await;
    assert_eq!(in_list["settings"], seen);
    assert_eq!(in_list["connect"], json!(["https://api.vendor.example"]));
    let (_, installed_list) = call(&server, &admin, Method::GET, "/api/settings/tools", None).await;
    assert_eq!(installed_list[0]["settings"], seen);

    let (name, data) = harbour_events.next().await;
    assert_eq!(name, "toolSettings");
    assert_eq!(data, json!({"slug": "floor", "settings": seen}));

    // The other tenant sees the defaults and heard nothing: the first event it hears is about its
    // own change.
    let theirs = listed(&server, &other, "floor").await;
    assert_eq!(
        theirs["settings"],
        json!({"wastePercent": 10, "showCost": false})
    );
    let (status, answer) =
        put_settings(&server, &other, "floor", &json!({"region": "North"})).await;
    assert_eq!(status, 200, "{answer}");
    let (name, data) = other_events.next().await;
    assert_eq!(name, "toolSettings");
    assert_eq!(
        data,
        json!({"slug": "floor", "settings": {"wastePercent": 10, "region": "North", "showCost": false}})
    );
    // …and the first tenant's values did not move.
    assert_eq!(listed(&server, &office, "floor").await["settings"], seen);

    // A key left out is unset: the default applies again.
    let (status, answer) =
        put_settings(&server, &admin, "floor", &json!({"region": "South"})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["settings"],
        json!({"wastePercent": 10, "region": "South", "showCost": false})
    );
}

#[tokio::test]
async fn invalid_values_are_refused_naming_each_key() {
    let (server, admin) = floor_installed().await;
    let (status, _) = put_settings(
        &server,
        &admin,
        "floor",
        &json!({"region": "North", "supplier": "Acme"}),
    )
    .await;
    assert_eq!(status, 200);

    for (body, key, message) in [
        (
            json!({"region": "North", "wastePercent": "12"}),
            "wastePercent",
            "must be a number",
        ),
        (
            json!({"region": "North", "colour": "red"}),
            "colour",
            "is not a setting of this tool",
        ),
        (
            json!({"region": "East"}),
            "region",
            "\"East\" is not one of its options: North, South",
        ),
        (json!({"supplier": "Acme"}), "region", "is required"),
        (json!({"region": ""}), "region", "is required"),
        (
            json!({"region": "North", "showCost": "yes"}),
            "showCost",
            "must be true or false",
        ),
        (
            json!({"region": "North", "supplier": "x".repeat(1001)}),
            "supplier",
            "must be at most 1000 characters",
        ),
    ] {
        let (status, problem) = put_settings(&server, &admin, "floor", &body).await;
        assert_eq!(status, 422, "{body}: {problem}");
        assert_eq!(problem["code"], "INVALID_PARAMS", "{problem}");
        let errors = problem["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{problem}");
        assert_eq!(errors[0]["path"], key, "{problem}");
        assert!(
            errors[0]["message"].as_str().unwrap().starts_with(message),
            "{problem}"
        );
    }
    // Every problem at once.
    let (status, problem) = put_settings(
        &server,
        &admin,
        "floor",
        &json!({"wastePercent": "12", "region": "East", "colour": "red"}),
    )
    .await;
    assert_eq!(status, 422);
    let paths: Vec<&str> = problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["colour", "region", "wastePercent"]);
    // Not an object at all.
    let (status, problem) = put_settings(&server, &admin, "floor", &json!(["North"])).await;
    assert_eq!(status, 422, "{problem}");
    // Nothing refused was stored.
    let (_, list) = call(&server, &admin, Method::GET, "/api/settings/tools", None).await;
    assert_eq!(
        list[0]["settings"],
        json!({"wastePercent": 10, "region": "North", "supplier": "Acme", "showCost": false})
    );
}

#[tokio::test]
async fn only_admins_set_values_and_only_of_installed_tools() {
    let (server, admin) = floor_installed().await;
    let body = json!({"region": "North"});
    for email in ["office@harbour.test", "field@harbour.test"] {
        let cookie = server.sign_in(email).await;
        let (status, problem) = put_settings(&server, &cookie, "floor", &body).await;
        assert_eq!(status, 403, "{email}: {problem}");
    }
    let super_user = server.sign_in("super@harbour.test").await;
    assert_eq!(
        put_settings(&server, &super_user, "floor", &body).await.0,
        200
    );
    let (status, problem) = put_settings(&server, &admin, "absent", &body).await;
    assert_eq!(status, 404, "{problem}");
    // Without the session, and with an API key: never.
    let (status, _) = json(
        server
            .request(Method::PUT, "/api/settings/tools/floor/settings")
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);
    let key = server.full_key().await;
    let (status, _) = json(
        server
            .request(Method::PUT, "/api/settings/tools/floor/settings")
            .bearer_auth(key)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 403);
    // The session from another site's page does not count.
    let (status, _) = json(
        server
            .request(Method::PUT, "/api/settings/tools/floor/settings")
            .header("cookie", &admin)
            .header("sec-fetch-site", "cross-site")
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_reinstall_drops_stored_values_that_no_longer_fit() {
    let (server, admin) = floor_installed().await;
    let (status, _) = put_settings(
        &server,
        &admin,
        "floor",
        &json!({"wastePercent": 12, "region": "South", "supplier": "Acme", "showCost": true}),
    )
    .await;
    assert_eq!(status, 200);

    // 2.0.0: South is no longer a region, the supplier is a number, showCost is gone.
    let next = json!({"settings": [
        {"key": "wastePercent", "label": "Waste allowance (%)", "type": "number", "default": 10},
        {"key": "region", "label": "Region", "type": "select", "options": ["North", "East"], "default": "North"},
        {"key": "supplier", "label": "Supplier number", "type": "number"}
    ]});
    let (status, installed) =
        upload(&server, &admin, zip(&manifest("Floor", "2.0.0", &next))).await;
    assert_eq!(status, 201, "{installed}");
    assert_eq!(
        installed["tool"]["settings"],
        json!({"wastePercent": 12, "region": "North"})
    );
    assert_eq!(installed["tool"]["connect"], json!([]));
    assert_eq!(installed["replaced"]["version"], "1.0.0");
    let office = server.sign_in("office@harbour.test").await;
    assert_eq!(
        listed(&server, &office, "floor").await["settings"],
        json!({"wastePercent": 12, "region": "North"})
    );
}

#[tokio::test]
async fn a_tool_without_settings_lists_empty_ones() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let (status, installed) = upload(
        &server,
        &admin,
        zip(&manifest("Plain", "1.0.0", &json!({}))),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(installed["tool"]["settingDeclarations"], json!([]));
    assert_eq!(installed["tool"]["settings"], json!({}));
    assert_eq!(installed["tool"]["connect"], json!([]));
    let listed = listed(&server, &admin, "plain").await;
    assert_eq!(
        (&listed["settings"], &listed["connect"]),
        (&json!({}), &json!([]))
    );
    assert!(listed.get("settingDeclarations").is_none(), "{listed}");
    let (status, answer) = put_settings(&server, &admin, "plain", &json!({})).await;
    assert_eq!(status, 200, "{answer}");
    let (status, problem) = put_settings(&server, &admin, "plain", &json!({"x": 1})).await;
    assert_eq!(
        (status, problem["errors"][0]["path"].clone()),
        (422, json!("x"))
    );
}

#[tokio::test]
async fn a_bundle_with_a_malformed_declaration_or_origin_is_refused_naming_the_rule() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let bad = manifest(
        "Bad",
        "1.0.0",
        &json!({
            "settings": [{"key": "region", "label": "Region", "type": "select"}],
            "permissions": {"connect": ["https://api.vendor.example/"], "storage": true}
        }),
    );
    let (status, problem) = upload(&server, &admin, zip_by_hand(&bad)).await;
    assert_eq!(status, 422, "{problem}");
    let messages: Vec<String> = problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}: {}",
                e["path"].as_str().unwrap(),
                e["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert!(messages[0].starts_with("manifest.json: settings[0].options: is required"));
    assert!(messages[0].ends_with("[settings]"));
    assert!(messages.iter().any(|m| {
        m.starts_with("manifest.json: permissions.storage: unknown permission")
            && m.ends_with("[permissions]")
    }));
    assert!(messages.iter().any(
        |m| m.starts_with("manifest.json: permissions.connect[0]:") && m.contains("trailing /")
    ));
}

/// A tool with a secret API key (required), a secret password and a plain setting.
fn with_secrets(version: &str, password_secret: bool) -> Value {
    manifest(
        "Vault",
        version,
        &json!({"settings": [
            {"key": "region", "label": "Region", "type": "string"},
            {"key": "apiKey", "label": "API key", "type": "string", "secret": true, "required": true},
            {"key": "password", "label": "Password", "type": "string", "secret": password_secret}
        ]}),
    )
}

#[tokio::test]
async fn a_secret_setting_is_write_only_and_answers_say_only_whether_it_is_set() {
    const SECRET: &str = "sk-hidden-4711";
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let office = server.sign_in("office@harbour.test").await;
    let (status, installed) = upload(&server, &admin, zip(&with_secrets("1.0.0", true))).await;
    assert_eq!(status, 201, "{installed}");
    assert_eq!(
        installed["tool"]["secrets"],
        json!({"apiKey": {"set": false}, "password": {"set": false}})
    );
    let mut events = Events::open(&server, &office).await;

    // Set: the answer, the list, the tool list and the live event say only that it is set.
    let (status, saved) = put_settings(
        &server,
        &admin,
        "vault",
        &json!({"region": "North", "apiKey": SECRET}),
    )
    .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(
        saved["secrets"],
        json!({"apiKey": {"set": true}, "password": {"set": false}})
    );
    assert_eq!(saved["settings"], json!({"region": "North"}));
    let (event, data) = events.next().await;
    assert_eq!(event, "toolSettings");
    assert_eq!(data["settings"], json!({"region": "North"}));
    let (_, all) = call(&server, &admin, Method::GET, "/api/settings/tools", None).await;
    let (_, tools) = call(&server, &office, Method::GET, "/api/tools", None).await;
    for answer in [&saved, &all, &tools, &data] {
        assert!(!answer.to_string().contains(SECRET), "{answer}");
    }
    assert_eq!(
        listed(&server, &office, "vault").await["settings"],
        json!({"region": "North"})
    );

    // Left out, it stays; every bad value is refused at its key, echoing none; null clears it.
    let (status, kept) = put_settings(&server, &admin, "vault", &json!({"region": "South"})).await;
    assert_eq!(
        (status, &kept["secrets"]["apiKey"]),
        (200, &json!({"set": true}))
    );
    let (status, refused) = put_settings(
        &server,
        &admin,
        "vault",
        &json!({"apiKey": 42, "password": format!("{SECRET}\n"), "nope": "x"}),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    let paths: Vec<&str> = refused["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["nope", "apiKey", "password"], "{refused}");
    assert!(!refused.to_string().contains(SECRET), "{refused}");
    let (status, refused) = put_settings(
        &server,
        &admin,
        "vault",
        &json!({"apiKey": "k".repeat(1001)}),
    )
    .await;
    assert_eq!(
        (status, refused["errors"][0]["path"].as_str()),
        (422, Some("apiKey"))
    );
    let (status, refused) = put_settings(&server, &admin, "vault", &json!({"apiKey": null})).await;
    assert_eq!(
        status, 422,
        "a required secret cannot be cleared: {refused}"
    );
    let (status, set) = put_settings(&server, &admin, "vault", &json!({"password": "pw"})).await;
    assert_eq!(status, 200, "{set}");
    let (status, cleared) =
        put_settings(&server, &admin, "vault", &json!({"password": null})).await;
    assert_eq!(status, 200, "{cleared}");
    assert_eq!(
        cleared["secrets"],
        json!({"apiKey": {"set": true}, "password": {"set": false}})
    );

    // A new version keeps the secrets still declared secret and drops the others.
    put_settings(&server, &admin, "vault", &json!({"password": "pw"})).await;
    let (status, reinstalled) = upload(&server, &admin, zip(&with_secrets("2.0.0", false))).await;
    assert_eq!(status, 201, "{reinstalled}");
    assert_eq!(
        reinstalled["tool"]["secrets"],
        json!({"apiKey": {"set": true}})
    );
    let tenant = server.tenant().await;
    let kept = server.store.tool_secrets(&tenant, "vault").await.unwrap();
    assert_eq!(kept.keys().collect::<Vec<_>>(), ["apiKey"]);
    assert_eq!(kept["apiKey"], SECRET);
}

#[tokio::test]
async fn a_secret_setting_must_be_a_string_without_a_default() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let bad = manifest(
        "Bad",
        "1.0.0",
        &json!({"settings": [
            {"key": "a", "label": "A", "type": "number", "secret": true},
            {"key": "b", "label": "B", "type": "string", "secret": true, "default": "x"}
        ]}),
    );
    let (status, refused) = upload(&server, &admin, zip_by_hand(&bad)).await;
    assert_eq!(status, 422, "{refused}");
    let text = refused.to_string();
    assert!(
        text.contains("settings[0].secret") && text.contains("settings[1].default"),
        "{text}"
    );
}
