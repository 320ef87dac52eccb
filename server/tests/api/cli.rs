//! The `toolbridge tool`, `tenants`, `users` and `keys` commands and the first start, run as a
//! user runs them: the built binary, its output and its exit status.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::serving::{self, DEMO, Serving};

/// The repository's example tools.
fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../example-tools")
}

/// The environment variable that names the database when `--db` does not.
const DATABASE_VAR: &str = "TOOLBRIDGE_DATABASE_URL";

/// The demo tenant (of `serve --demo`), which the `keys` commands must name: a demo database has
/// two tenants.
const HARBOUR: &str = "Harbour Flooring Ltd";

/// `toolbridge args…` in `dir`, without the tests' own `TOOLBRIDGE_*` variables (one may name a
/// database) and `RUST_LOG`: see [`serving::toolbridge`].
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = serving::toolbridge(dir);
    command.args(args);
    command
}

/// Runs `toolbridge args…` in `dir`.
fn toolbridge(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().unwrap()
}

/// Runs `toolbridge args…` in `dir` with [`DATABASE_VAR`] set to `database`.
fn toolbridge_on(dir: &Path, database: &str, args: &[&str]) -> Output {
    command(dir, args)
        .env(DATABASE_VAR, database)
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn every_example_tool_packs_validates_and_installs() {
    let work = tempfile::tempdir().unwrap();
    for (folder, slug, tool_type) in [
        ("flooring-estimator", "flooring", "quoting_extension"),
        ("quick-quote", "quick-quote", "standalone"),
        ("job-lookup", "job-lookup", "standalone"),
        ("supplier-prices", "supplier-prices", "quoting_extension"),
    ] {
        let source = examples().join(folder);
        let zip = format!("{slug}.zip");
        let packed = toolbridge(
            work.path(),
            &["tool", "pack", source.to_str().unwrap(), "-o", &zip],
        );
        assert!(packed.status.success(), "{}", text(&packed));

        let validated = toolbridge(work.path(), &["tool", "validate", &zip]);
        assert!(validated.status.success(), "{}", text(&validated));
        let said = text(&validated);
        assert!(
            said.contains(&format!("type         {tool_type}")),
            "{said}"
        );
        assert!(said.contains(&format!("slug         {slug}")), "{said}");

        let installed = toolbridge(
            work.path(),
            &["tool", "install", &zip, "--db", "tools.sqlite3"],
        );
        assert!(installed.status.success(), "{}", text(&installed));
        assert!(
            text(&installed).contains(&format!("as the tool {slug}")),
            "{}",
            text(&installed)
        );
    }
    let listed = toolbridge(work.path(), &["tool", "list", "--db", "tools.sqlite3"]);
    let said = text(&listed);
    for slug in ["flooring", "quick-quote", "job-lookup", "supplier-prices"] {
        assert!(said.contains(slug), "{said}");
    }

    let disabled = toolbridge(
        work.path(),
        &["tool", "disable", "job-lookup", "--db", "tools.sqlite3"],
    );
    assert!(disabled.status.success(), "{}", text(&disabled));
    let listed = toolbridge(work.path(), &["tool", "list", "--db", "tools.sqlite3"]);
    assert!(
        text(&listed)
            .lines()
            .any(|line| line.starts_with("job-lookup") && line.contains("disabled")),
        "{}",
        text(&listed)
    );
    let removed = toolbridge(
        work.path(),
        &["tool", "remove", "job-lookup", "--db", "tools.sqlite3"],
    );
    assert!(removed.status.success(), "{}", text(&removed));
    let again = toolbridge(
        work.path(),
        &["tool", "remove", "job-lookup", "--db", "tools.sqlite3"],
    );
    assert!(!again.status.success());
    assert!(
        text(&again).contains("no tool job-lookup is installed"),
        "{}",
        text(&again)
    );
}

#[test]
fn pack_refuses_a_folder_validate_would_refuse_and_writes_nothing() {
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("tool");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("manifest.json"),
        r#"{"name":"T","shortName":"T","type":"standalone","version":"1.0","description":"d","entry":"index.html"}"#,
    )
    .unwrap();
    std::fs::write(folder.join("index.html"), "<!doctype html>").unwrap();
    std::fs::write(folder.join("setup.exe"), "MZ").unwrap();
    let packed = toolbridge(work.path(), &["tool", "pack", "tool", "-o", "out.zip"]);
    assert!(!packed.status.success());
    let said = text(&packed);
    assert!(said.contains("setup.exe"), "{said}");
    assert!(said.contains("[extension]"), "{said}");
    assert!(!work.path().join("out.zip").exists());
    assert!(!work.path().join("out.zip.partial").exists());
}

#[test]
fn validate_refuses_what_is_not_a_bundle_without_reading_all_of_it() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("notes.zip"), "just text").unwrap();
    let refused = toolbridge(work.path(), &["tool", "validate", "notes.zip"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("not a valid tool bundle"),
        "{}",
        text(&refused)
    );

    // A sparse 11 GB file: refused for its size, having read ~10 MB of it.
    let huge = std::fs::File::create(work.path().join("huge.zip")).unwrap();
    huge.set_len(11 * 1024 * 1024 * 1024).unwrap();
    let refused = toolbridge(work.path(), &["tool", "validate", "huge.zip"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("compressed-size"),
        "{}",
        text(&refused)
    );
}

#[test]
fn the_first_start_installs_the_example_tools() {
    let work = tempfile::tempdir().unwrap();
    let mut server = command(
        work.path(),
        &[
            "serve",
            "--demo",
            "--port",
            "0",
            "--seed-products",
            "20",
            "--example-tools",
        ],
    )
    .arg(examples())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit())
    .spawn()
    .unwrap();
    let stdout = server.stdout.take().unwrap();
    let mut said = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let listening = line.starts_with("toolbridge listening on");
        said.push(line);
        if listening {
            break;
        }
    }
    server.kill().unwrap();
    server.wait().unwrap();
    let said = said.join("\n");
    for slug in ["flooring", "quick-quote", "job-lookup", "supplier-prices"] {
        assert!(
            said.contains(&format!("Installed the example tool {slug} ")),
            "{said}"
        );
        assert!(
            said.contains(&format!("at http://{slug}.tools.localhost:")),
            "{said}"
        );
    }
}

#[tokio::test]
async fn serve_prints_a_dev_tools_refusal_with_what_to_change() {
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("ten-lines");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("manifest.json"),
        r#"{"name":"Ten lines","shortName":"Ten lines","type":"standalone","version":"1.0.0","description":"d","entry":"index.html"}"#,
    )
    .unwrap();
    std::fs::write(
        folder.join("index.html"),
        "<!doctype html><script>go()</script>",
    )
    .unwrap();
    let dev_tool = ["--dev-tool", folder.to_str().unwrap()];
    let server = Serving::start(work.path(), &[&DEMO[..], &dev_tool].concat(), &[]);

    let client = reqwest::Client::new();
    let signed_in = client
        .post(format!("{}/api/session", server.base))
        .header("sec-fetch-site", "same-origin")
        .json(&serde_json::json!({"email": "office@harbour.test", "password": "demo-password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 200);
    let cookie = signed_in.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let report = |slug: &str, body: serde_json::Value| {
        client
            .post(format!("{}/api/dev-tools/{slug}/blocked", server.base))
            .header("cookie", &cookie)
            .header("sec-fetch-site", "same-origin")
            .json(&body)
            .send()
    };

    let inline = serde_json::json!({"kind": "policy", "detail": "script-src-elem inline"});
    let answer = report("ten-lines", inline.clone()).await.unwrap();
    assert_eq!(answer.status(), 204);
    let advice = toolbridge_protocol::blocked::read_blocked_params(&inline)
        .unwrap()
        .advice();
    assert!(
        advice.starts_with("an inline script was refused"),
        "{advice}"
    );
    let printed = server.next_stderr_line("dev tool ", std::time::Duration::from_secs(10));
    assert_eq!(
        printed.as_deref(),
        Some(format!("dev tool ten-lines: {advice} (policy: script-src-elem inline)").as_str())
    );

    // A slug that is not a folder under development, and a report that is not one: nothing is
    // printed.
    let answer = report(
        "elsewhere",
        serde_json::json!({"kind": "modal", "detail": "hi"}),
    )
    .await
    .unwrap();
    assert_eq!(answer.status(), 404);
    let answer = report("ten-lines", serde_json::json!({"kind": "modal"}))
        .await
        .unwrap();
    assert_eq!(answer.status(), 422);
    let printed = server.next_stderr_line("dev tool ", std::time::Duration::from_millis(500));
    assert_eq!(printed, None);
}

#[test]
fn validate_install_and_list_show_declared_settings_and_origins() {
    let work = tempfile::tempdir().unwrap();
    let folder = work.path().join("prices");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("manifest.json"),
        serde_json::json!({
            "name": "Vendor prices", "shortName": "Prices", "type": "standalone",
            "version": "1.0.0", "description": "d", "entry": "index.html",
            "settings": [
                {"key": "markup", "label": "Markup (%)", "type": "number", "default": 10},
                {"key": "region", "label": "Region", "type": "select", "options": ["North", "South"], "required": true}
            ],
            "permissions": {"connect": ["https://api.vendor.example", "https://prices.vendor.example:8443"]}
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(folder.join("index.html"), "<!doctype html>").unwrap();
    let packed = toolbridge(work.path(), &["tool", "pack", "prices", "-o", "prices.zip"]);
    assert!(packed.status.success(), "{}", text(&packed));

    let validated = text(&toolbridge(
        work.path(),
        &["tool", "validate", "prices.zip"],
    ));
    for expected in [
        "connects     talks to https://api.vendor.example and https://prices.vendor.example:8443",
        "settings     2",
        "markup               number, default 10: Markup (%)",
        "region               select of North | South, required: Region",
    ] {
        assert!(validated.contains(expected), "{expected:?} in {validated}");
    }
    let installed = text(&toolbridge(
        work.path(),
        &["tool", "install", "prices.zip", "--db", "tools.sqlite3"],
    ));
    assert!(
        installed.contains(
            "It talks to https://api.vendor.example and https://prices.vendor.example:8443"
        ),
        "{installed}"
    );
    assert!(installed.contains("It has 2 setting(s)"), "{installed}");
    let listed = text(&toolbridge(
        work.path(),
        &["tool", "list", "--db", "tools.sqlite3"],
    ));
    assert!(listed.contains("settings: markup, region"), "{listed}");
    assert!(
        listed
            .contains("talks to https://api.vendor.example and https://prices.vendor.example:8443"),
        "{listed}"
    );

    // A malformed origin is refused with its rule and path.
    let manifest = std::fs::read_to_string(folder.join("manifest.json"))
        .unwrap()
        .replace("https://api.vendor.example", "http://api.vendor.example");
    std::fs::write(folder.join("manifest.json"), manifest).unwrap();
    let refused = toolbridge(work.path(), &["tool", "pack", "prices", "-o", "bad.zip"]);
    assert!(!refused.status.success());
    let said = text(&refused);
    assert!(
        said.contains("manifest.json: permissions.connect[0]: \"http://api.vendor.example\" must be an https origin"),
        "{said}"
    );
    assert!(said.contains("[permissions]"), "{said}");
}

/// The lines a server prints up to and including the one saying where it listens; the server is
/// stopped then.
fn first_start(mut server: Command) -> String {
    let mut child = server
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut said = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let listening = line.starts_with("toolbridge listening on");
        said.push(line);
        if listening {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    said.join("\n")
}

#[test]
fn commands_run_on_a_postgres_database_named_by_the_flag_or_the_variable() {
    let database = toolbridge_test_postgres::database().unwrap_or_else(|e| panic!("{e}"));
    let url = database.url();
    let (shown, password) = {
        // postgres://postgres:<password>@127.0.0.1:<port>/<name>
        let (user_info, rest) = url.split_once('@').unwrap();
        let (user, password) = user_info.rsplit_once(':').unwrap();
        (format!("{user}:***@{rest}"), password.to_owned())
    };
    let work = tempfile::tempdir().unwrap();

    // The first start, on the variable: migrated and seeded, the URL shown without its password.
    let said = first_start({
        let mut serve = command(
            work.path(),
            &[
                "serve",
                "--demo",
                "--port",
                "0",
                "--seed-products",
                "20",
                "--example-tools",
                "none",
            ],
        );
        serve.env(DATABASE_VAR, &url);
        serve
    });
    assert!(
        said.contains(&format!("Created {shown} with demo data (20 products)")),
        "{said}"
    );
    assert!(!said.contains(&password), "{said}");

    // A command on the flag: the tenant the server made is there.
    let created = toolbridge(
        work.path(),
        &[
            "keys",
            "create",
            "--tenant",
            HARBOUR,
            "--name",
            "on-postgres",
            "--scopes",
            "quotes:read",
            "--db",
            &url,
        ],
    );
    assert!(created.status.success(), "{}", text(&created));
    let listed = toolbridge_on(work.path(), &url, &["keys", "list", "--tenant", HARBOUR]);
    assert!(listed.status.success(), "{}", text(&listed));
    assert!(
        text(&listed).contains("on-postgres") && text(&listed).contains("quotes:read"),
        "{}",
        text(&listed)
    );

    // A tool installed through the flag is listed through the variable; the flag wins over it.
    let packed = toolbridge(
        work.path(),
        &[
            "tool",
            "pack",
            examples().join("job-lookup").to_str().unwrap(),
            "-o",
            "job-lookup.zip",
        ],
    );
    assert!(packed.status.success(), "{}", text(&packed));
    let installed = toolbridge_on(
        work.path(),
        "mysql://elsewhere/tb",
        &["tool", "install", "job-lookup.zip", "--db", &url],
    );
    assert!(installed.status.success(), "{}", text(&installed));
    let listed = toolbridge_on(work.path(), &url, &["tool", "list"]);
    assert!(
        text(&listed)
            .lines()
            .any(|line| line.starts_with("job-lookup")),
        "{}",
        text(&listed)
    );

    // A second first start, with --demo again, finds the data there and seeds nothing.
    let said = first_start({
        let mut serve = command(
            work.path(),
            &[
                "serve",
                "--demo",
                "--port",
                "0",
                "--example-tools",
                "none",
                "--db",
                &url,
            ],
        );
        serve.env(DATABASE_VAR, "mysql://elsewhere/tb");
        serve
    });
    assert!(!said.contains("Created"), "{said}");
    assert!(said.contains("toolbridge listening on"), "{said}");

    // Nothing went into a SQLite file.
    assert!(!work.path().join("toolbridge.sqlite3").exists());
}

#[test]
fn a_database_that_is_neither_a_sqlite_path_nor_a_postgres_url_is_refused_with_what_is_wrong() {
    let work = tempfile::tempdir().unwrap();
    let mysql = "mysql://root:hunter2@localhost/tb";
    let refused = toolbridge(work.path(), &["tool", "list", "--db", mysql]);
    assert!(!refused.status.success());
    let said = text(&refused);
    assert!(
        said.contains(
            "--db: cannot use mysql://root:***@localhost/tb: mysql:// is not a database \
             toolbridge uses; give a SQLite file's path or a postgres:// URL"
        ),
        "{said}"
    );
    assert!(!said.contains("hunter2"), "{said}");

    // From the variable, for the server: it says so, and starts nothing.
    let refused = toolbridge_on(work.path(), mysql, &["serve", "--port", "0"]);
    assert!(!refused.status.success());
    let said = text(&refused);
    assert!(
        said.contains(&format!(
            "{DATABASE_VAR}: cannot use mysql://root:***@localhost/tb"
        )),
        "{said}"
    );
    assert!(!said.contains("hunter2"), "{said}");

    // A postgres:// URL that is not one.
    let refused = toolbridge(
        work.path(),
        &[
            "keys",
            "list",
            "--db",
            "postgres://tb:hunter2@localhost:notaport/tb",
        ],
    );
    assert!(!refused.status.success());
    let said = text(&refused);
    assert!(
        said.contains(
            "--db: cannot use postgres://tb:***@localhost:notaport/tb: not a PostgreSQL URL"
        ),
        "{said}"
    );
    assert!(!said.contains("hunter2"), "{said}");
    assert_eq!(
        std::fs::read_dir(work.path()).unwrap().count(),
        0,
        "no database file was made"
    );
}

/// Runs `command` with `input` on its standard input.
fn with_input(command: &mut Command, input: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Dropped at once: the command reads to the end of its input.
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `toolbridge args…` in `dir` with `input` on its standard input.
fn toolbridge_with_input(dir: &Path, args: &[&str], input: &str) -> Output {
    with_input(&mut command(dir, args), input)
}

/// What a command that must succeed printed.
fn succeeds(output: &Output) -> String {
    assert!(output.status.success(), "{}", text(output));
    text(output)
}

/// What a command that must be refused (a non-zero exit) printed.
fn is_refused(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "expected a refusal: {}",
        text(output)
    );
    text(output)
}

/// A server started as an operator starts it, until dropped.
struct Started {
    child: std::process::Child,
    address: String,
}

impl Started {
    /// Starts `serve` and waits until it listens; the server, and what it printed until then.
    fn start(mut serve: Command) -> (Self, String) {
        let mut child = serve
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut said = String::new();
        let mut address = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            said.push_str(&line);
            said.push('\n');
            address = line
                .strip_prefix("toolbridge listening on ")
                .and_then(|rest| rest.split_whitespace().next())
                .map(str::to_owned);
            if address.is_some() {
                break;
            }
        }
        // Keep reading, so that the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let address = address.unwrap_or_else(|| panic!("the server did not listen:\n{said}"));
        (Self { child, address }, said)
    }

    /// What `serve` prints until it listens; the server is stopped then.
    fn said(serve: Command) -> String {
        Self::start(serve).1
    }

    /// `POST /api/session`: the status, the session cookie and the body.
    async fn sign_in(
        &self,
        email: &str,
        password: &str,
    ) -> (u16, Option<String>, serde_json::Value) {
        let response = reqwest::Client::new()
            .post(format!("{}/api/session", self.address))
            .header("sec-fetch-site", "same-origin")
            .json(&serde_json::json!({"email": email, "password": password}))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let cookie = response
            .headers()
            .get("set-cookie")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .map(str::to_owned);
        let body = response.json().await.unwrap_or_default();
        (status, cookie, body)
    }

    /// `GET /api/session` with a session cookie: its status.
    async fn session(&self, cookie: &str) -> u16 {
        reqwest::Client::new()
            .get(format!("{}/api/session", self.address))
            .header("sec-fetch-site", "same-origin")
            .header("cookie", cookie)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The commands `serve` prints on an empty database, with ` --db …` when they need it.
fn first_steps_commands(db: &str) -> [String; 2] {
    [
        format!("  toolbridge tenants create --name 'Your Company'{db}\n"),
        format!(
            "  toolbridge users create --tenant 'Your Company' --email you@example.com --role admin --password-stdin{db}\n"
        ),
    ]
}

/// Asserts that `said` holds each of `expected`.
fn says_all(said: &str, expected: &[String]) {
    for expected in expected {
        assert!(said.contains(expected.as_str()), "{expected:?} in {said}");
    }
}

/// The password of the first admin in these tests.
const ADA_PASSWORD: &str = "tidal kettle lantern";

/// `toolbridge users create` of `email` in Acme Ltd with `role`, the password on standard input.
fn create_user(dir: &Path, email: &str, role: &str, input: &str) -> Output {
    let args = [
        "users",
        "create",
        "--tenant",
        "Acme Ltd",
        "--email",
        email,
        "--role",
        role,
        "--password-stdin",
    ];
    toolbridge_with_input(dir, &args, input)
}

/// Makes the tenant Acme Ltd and its admin Ada@Acme.test with the CLI, on the default database
/// in `dir`.
fn make_acme_and_ada(dir: &Path) {
    let made = succeeds(&toolbridge(
        dir,
        &["tenants", "create", "--name", "Acme Ltd"],
    ));
    assert!(made.contains("Created the tenant Acme Ltd ("), "{made}");
    assert!(
        made.contains(
            "toolbridge users create --tenant 'Acme Ltd' --email you@example.com --role admin --password-stdin\n"
        ),
        "{made}"
    );
    let made = succeeds(&create_user(
        dir,
        "Ada@Acme.test",
        "admin",
        &format!("{ADA_PASSWORD}\n"),
    ));
    assert!(
        made.contains("Created the user Ada@Acme.test (Ada, Admin) in Acme Ltd."),
        "{made}"
    );
    assert!(!made.contains(ADA_PASSWORD), "{made}");
}

/// The line of `users list --tenant "Acme Ltd"` for `email`.
fn listed_user(dir: &Path, email: &str) -> String {
    let listed = succeeds(&toolbridge(dir, &["users", "list", "--tenant", "Acme Ltd"]));
    listed
        .lines()
        .find(|line| line.starts_with(&format!("{email} ")))
        .unwrap_or_else(|| panic!("{email} is not listed: {listed}"))
        .to_owned()
}

#[tokio::test]
async fn without_demo_an_empty_database_stays_empty_and_the_server_says_how_to_begin() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("data")).unwrap();
    let (server, said) = Started::start(command(
        work.path(),
        &["serve", "--port", "0", "--db", "data/tb.sqlite3"],
    ));
    assert!(
        said.contains("The database data/tb.sqlite3 is empty: it has no tenant and no user"),
        "{said}"
    );
    says_all(&said, &first_steps_commands(" --db data/tb.sqlite3"));
    assert!(said.contains("toolbridge serve --demo"), "{said}");
    assert!(!said.contains("Created"), "{said}");
    assert!(!said.contains("Installed the example tool"), "{said}");
    assert!(!said.contains("Tool "), "no tool is installed: {said}");

    // Nobody can sign in: the demo users are not there.
    let (status, _, _) = server.sign_in("admin@harbour.test", "demo-password").await;
    assert_eq!(status, 401);
    drop(server);
    let listed = succeeds(&toolbridge(
        work.path(),
        &["tenants", "list", "--db", "data/tb.sqlite3"],
    ));
    assert!(listed.contains("There are no tenants yet"), "{listed}");

    // On the default database, the commands need no --db.
    let said = Started::said(command(work.path(), &["serve", "--port", "0"]));
    says_all(&said, &first_steps_commands(""));
}

#[tokio::test]
async fn the_first_admin_made_with_the_cli_signs_in_and_a_new_password_ends_their_sessions() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    make_acme_and_ada(dir);
    let listed = listed_user(dir, "Ada@Acme.test");
    assert!(
        listed.contains("Admin") && listed.ends_with("active"),
        "{listed}"
    );

    // A database with a tenant is not empty: the server says nothing of first steps.
    let (server, said) = Started::start(command(dir, &["serve", "--port", "0"]));
    assert!(!said.contains("is empty"), "{said}");
    let (status, cookie, me) = server.sign_in("ada@acme.test", ADA_PASSWORD).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["userRole"], "admin");
    assert_eq!(me["tenantName"], "Acme Ltd");
    assert_eq!(me["cultureCode"], "en-NZ");
    let cookie = cookie.expect("a session cookie");
    assert_eq!(server.session(&cookie).await, 200);

    // A new password ends the session, and only it signs in.
    let args = [
        "users",
        "set-password",
        "--email",
        "ada@acme.test",
        "--password-stdin",
    ];
    let set = succeeds(&toolbridge_with_input(
        dir,
        &args,
        "a brand new sentence\r\n",
    ));
    assert!(
        set.contains("Set a new password for Ada@Acme.test; 1 session ended."),
        "{set}"
    );
    assert_eq!(server.session(&cookie).await, 401);
    let (status, _, _) = server.sign_in("ada@acme.test", ADA_PASSWORD).await;
    assert_eq!(status, 401);
    let (status, _, _) = server
        .sign_in("ada@acme.test", "a brand new sentence")
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_disabled_user_cannot_sign_in_and_a_made_password_is_printed_once() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    make_acme_and_ada(dir);
    let (server, _) = Started::start(command(dir, &["serve", "--port", "0"]));
    let (status, cookie, _) = server.sign_in("ada@acme.test", ADA_PASSWORD).await;
    assert_eq!(status, 200);
    let cookie = cookie.expect("a session cookie");

    // Disabled: the session ends, and signing in fails.
    let disabled = succeeds(&toolbridge(
        dir,
        &["users", "disable", "--email", "ADA@acme.test"],
    ));
    assert!(
        disabled.contains(
            "Disabled Ada@Acme.test of Acme Ltd: they can no longer sign in; 1 session ended."
        ),
        "{disabled}"
    );
    assert_eq!(server.session(&cookie).await, 401);
    let (status, _, _) = server.sign_in("ada@acme.test", ADA_PASSWORD).await;
    assert_eq!(status, 401);
    assert!(listed_user(dir, "Ada@Acme.test").ends_with("disabled"));

    // Without --password-stdin a password is made, printed once, and signs in.
    let made = succeeds(&toolbridge(
        dir,
        &[
            "users",
            "create",
            "--tenant",
            "Acme Ltd",
            "--email",
            "finn@acme.test",
            "--role",
            "field",
            "--name",
            "Finn Field",
        ],
    ));
    let password = made
        .lines()
        .skip_while(|line| !line.starts_with("Their password, shown only now"))
        .skip(1)
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_else(|| panic!("no password printed: {made}"))
        .to_owned();
    assert_eq!(password.chars().count(), 20, "{password:?}");
    let (status, _, me) = server.sign_in("finn@acme.test", &password).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["userRole"], "field");
    assert_eq!(me["userName"], "Finn Field");

    // Enabled again, with the password they had.
    succeeds(&toolbridge(
        dir,
        &["users", "enable", "--email", "ada@acme.test"],
    ));
    let (status, _, _) = server.sign_in("ada@acme.test", ADA_PASSWORD).await;
    assert_eq!(status, 200);
}

#[test]
fn unknown_and_taken_tenants_and_bad_settings_are_refused_with_the_reason() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let said = is_refused(&create_user(
        dir,
        "ada@acme.test",
        "admin",
        "tidal kettle lantern\n",
    ));
    assert!(
        said.contains("no tenant named \"Acme Ltd\"; `toolbridge tenants list` shows them"),
        "{said}"
    );

    succeeds(&toolbridge(
        dir,
        &["tenants", "create", "--name", "Acme Ltd"],
    ));
    let said = is_refused(&toolbridge(
        dir,
        &["tenants", "create", "--name", "ACME LTD"],
    ));
    assert!(
        said.contains("a tenant named \"ACME LTD\" exists already"),
        "{said}"
    );
    let said = is_refused(&toolbridge(
        dir,
        &["tenants", "create", "--name", "Bravo", "--tax-rate", "15"],
    ));
    assert!(
        said.contains("--tax-rate: must be a fraction from 0 to 1 (0.15 is 15%); got 15"),
        "{said}"
    );
    let said = is_refused(&toolbridge(
        dir,
        &[
            "tenants",
            "create",
            "--name",
            "Bravo",
            "--culture-code",
            "english",
        ],
    ));
    assert!(
        said.contains("--culture-code: \"english\" is not a culture code"),
        "{said}"
    );
    let said = is_refused(&toolbridge(dir, &["users", "list", "--tenant", "Nope"]));
    assert!(said.contains("no tenant named \"Nope\""), "{said}");

    // The refusals made nothing.
    let listed = succeeds(&toolbridge(dir, &["tenants", "list"]));
    assert!(
        listed.contains("Acme Ltd") && listed.contains("0 users"),
        "{listed}"
    );
    assert_eq!(listed.lines().count(), 1, "{listed}");
}

#[test]
fn weak_passwords_unknown_roles_and_taken_emails_are_refused_with_the_reason() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    succeeds(&toolbridge(
        dir,
        &["tenants", "create", "--name", "Acme Ltd"],
    ));
    for (input, reason) in [
        ("short\n", "the password is 5 characters; use at least 12"),
        (
            "Password1234\n",
            "the password is one of the most common passwords",
        ),
        ("", "no password on standard input"),
        ("\n", "no password on standard input"),
    ] {
        let said = is_refused(&create_user(dir, "ada@acme.test", "admin", input));
        assert!(said.contains(reason), "{input:?}: {reason:?} in {said}");
    }
    let said = is_refused(&create_user(
        dir,
        "ada@acme.test",
        "boss",
        "tidal kettle lantern\n",
    ));
    assert!(said.contains("'boss'"), "{said}");
    assert!(
        said.contains("[possible values: admin, office, field, super]"),
        "{said}"
    );
    let said = is_refused(&create_user(
        dir,
        "not-an-email",
        "admin",
        "tidal kettle lantern\n",
    ));
    assert!(
        said.contains("--email: \"not-an-email\" is not an email address"),
        "{said}"
    );

    succeeds(&create_user(
        dir,
        "ada@acme.test",
        "admin",
        "tidal kettle lantern\n",
    ));
    let said = is_refused(&create_user(
        dir,
        "ADA@acme.test",
        "office",
        "another long one\n",
    ));
    assert!(
        said.contains("a user with the email ADA@acme.test exists already"),
        "{said}"
    );
    let said = is_refused(&toolbridge_with_input(
        dir,
        &[
            "users",
            "set-password",
            "--email",
            "ada@acme.test",
            "--password-stdin",
        ],
        "qwertyuiop12\n",
    ));
    assert!(
        said.contains("the password is one of the most common passwords"),
        "{said}"
    );
    let said = is_refused(&toolbridge(
        dir,
        &["users", "disable", "--email", "nobody@acme.test"],
    ));
    assert!(
        said.contains("no user has the email nobody@acme.test"),
        "{said}"
    );

    // The refusals made nothing more.
    let listed = succeeds(&toolbridge(dir, &["users", "list", "--tenant", "Acme Ltd"]));
    assert_eq!(listed.lines().count(), 1, "{listed}");
}

#[test]
fn keys_need_a_tenant_named_once_the_database_has_several() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let create_key = |name: &str, tenant: Option<&str>| {
        let mut args = vec!["keys", "create", "--name", name, "--scopes", "quotes:read"];
        if let Some(tenant) = tenant {
            args.extend(["--tenant", tenant]);
        }
        toolbridge(dir, &args)
    };
    let said = is_refused(&create_key("first", None));
    assert!(
        said.contains(
            "the database has no tenant yet; create one with `toolbridge tenants create --name NAME`"
        ),
        "{said}"
    );

    // One tenant: that one.
    succeeds(&toolbridge(
        dir,
        &["tenants", "create", "--name", "Acme Ltd"],
    ));
    let made = succeeds(&create_key("first", None));
    assert!(made.contains("(first) for Acme Ltd."), "{made}");

    // Two: say which.
    succeeds(&toolbridge(dir, &["tenants", "create", "--name", "Bravo"]));
    let said = is_refused(&create_key("second", None));
    assert!(
        said.contains(
            "the database has 2 tenants (\"Acme Ltd\", \"Bravo\"); say which with --tenant NAME"
        ),
        "{said}"
    );
    let made = succeeds(&create_key("second", Some("bravo")));
    assert!(made.contains("(second) for Bravo."), "{made}");
    let id = made
        .split_once("Created API key ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    let said = is_refused(&create_key("third", Some("Charlie")));
    assert!(said.contains("no tenant named \"Charlie\""), "{said}");

    is_refused(&toolbridge(dir, &["keys", "list"]));
    let bravo = succeeds(&toolbridge(dir, &["keys", "list", "--tenant", "Bravo"]));
    assert!(
        bravo.contains("second") && !bravo.contains("first"),
        "{bravo}"
    );
    let acme = succeeds(&toolbridge(dir, &["keys", "list", "--tenant", "Acme Ltd"]));
    assert!(acme.contains("first") && !acme.contains("second"), "{acme}");

    // Another tenant's key is not found in this one.
    let said = is_refused(&toolbridge(
        dir,
        &["keys", "revoke", &id, "--tenant", "Acme Ltd"],
    ));
    assert!(said.contains(&format!("no key {id} in Acme Ltd")), "{said}");
    is_refused(&toolbridge(dir, &["keys", "revoke", &id]));
    let revoked = succeeds(&toolbridge(
        dir,
        &["keys", "revoke", &id, "--tenant", "Bravo"],
    ));
    assert!(revoked.contains(&format!("Revoked {id}.")), "{revoked}");
}

/// A fresh PostgreSQL database: its URL, that URL as shown (password hidden), and the password.
fn postgres() -> (toolbridge_test_postgres::Database, String, String, String) {
    let database = toolbridge_test_postgres::database().unwrap_or_else(|e| panic!("{e}"));
    let url = database.url();
    // postgres://postgres:<password>@127.0.0.1:<port>/<name>
    let (user_info, rest) = url.split_once('@').unwrap();
    let (user, password) = user_info.rsplit_once(':').unwrap();
    let shown = format!("{user}:***@{rest}");
    let password = password.to_owned();
    (database, url, shown, password)
}

#[test]
fn on_an_empty_postgres_database_the_commands_name_it_without_its_password() {
    let (_database, url, shown, password) = postgres();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();

    // Named by the flag: the commands name it too, without its password.
    let said = Started::said(command(dir, &["serve", "--port", "0", "--db", &url]));
    says_all(&said, &first_steps_commands(&format!(" --db '{shown}'")));
    assert!(said.contains("*** stands for the password"), "{said}");
    assert!(!said.contains(&password), "{said}");

    // Named by the variable: the commands need no --db, and say to set it.
    let said = Started::said({
        let mut serve = command(dir, &["serve", "--port", "0"]);
        serve.env(DATABASE_VAR, &url);
        serve
    });
    says_all(&said, &first_steps_commands(""));
    assert!(
        said.contains(&format!("Run them with {DATABASE_VAR} set")),
        "{said}"
    );
    assert!(!work.path().join("toolbridge.sqlite3").exists());
}

#[tokio::test]
async fn the_first_tenant_and_admin_are_made_and_sign_in_on_postgres() {
    let (_database, url, _, _) = postgres();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    succeeds(&toolbridge(
        dir,
        &["tenants", "create", "--name", "Acme Ltd", "--db", &url],
    ));
    let made = succeeds(&with_input(
        command(
            dir,
            &[
                "users",
                "create",
                "--tenant",
                "Acme Ltd",
                "--email",
                "ada@acme.test",
                "--role",
                "super",
                "--password-stdin",
            ],
        )
        .env(DATABASE_VAR, &url),
        &format!("{ADA_PASSWORD}\n"),
    ));
    assert!(made.contains("(ada, Super User) in Acme Ltd."), "{made}");
    let said = is_refused(&toolbridge_on(
        dir,
        &url,
        &["tenants", "create", "--name", "acme ltd"],
    ));
    assert!(
        said.contains("a tenant named \"acme ltd\" exists already"),
        "{said}"
    );

    let (server, said) = Started::start(command(dir, &["serve", "--port", "0", "--db", &url]));
    assert!(!said.contains("is empty"), "{said}");
    let (status, _, me) = server.sign_in("ada@acme.test", ADA_PASSWORD).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["userRole"], "super_user");

    // Two tenants: keys say which, and reach that tenant's data.
    succeeds(&toolbridge_on(
        dir,
        &url,
        &["tenants", "create", "--name", "Bravo"],
    ));
    let key = [
        "keys",
        "create",
        "--name",
        "sync",
        "--scopes",
        "quotes:read",
    ];
    let said = is_refused(&toolbridge_on(dir, &url, &key));
    assert!(said.contains("say which with --tenant NAME"), "{said}");
    let made = succeeds(&toolbridge_on(
        dir,
        &url,
        &[&key[..], &["--tenant", "Acme Ltd"]].concat(),
    ));
    let token = made
        .split_whitespace()
        .find(|word| word.starts_with("tbk_"))
        .unwrap()
        .to_owned();
    let quotes = reqwest::Client::new()
        .get(format!("{}/api/v1/quotes", server.address))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(quotes.status(), 200);
    assert!(!work.path().join("toolbridge.sqlite3").exists());
}

#[test]
fn signing_keys_rotate_and_list_show_ids_and_publication_never_a_private_key() {
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("keys.sqlite3");
    let db = db.to_str().unwrap();
    let said = succeeds(&toolbridge_on(work.path(), db, &["signing-keys", "list"]));
    assert!(said.contains("No signing key yet"), "{said}");
    let first = succeeds(&toolbridge_on(work.path(), db, &["signing-keys", "rotate"]));
    let kid = |said: &str| {
        said.split_whitespace()
            .nth(3)
            .unwrap_or_else(|| panic!("no key id in {said:?}"))
            .to_owned()
    };
    // No key yet: the first signs from now on.
    assert!(first.starts_with("New signing key "), "{first}");
    assert!(
        first.contains("(ES256) signs every identity token from now on")
            && first.contains("300 seconds"),
        "{first}"
    );
    let staged = succeeds(&toolbridge_on(work.path(), db, &["signing-keys", "rotate"]));
    assert!(
        staged.contains("is published now and signs every identity token from ")
            && staged.contains("(300 seconds from now)"),
        "{staged}"
    );
    let (old, new) = (kid(&first), kid(&staged));
    assert_ne!(old, new);
    let rows = |listed: &str| -> Vec<Vec<String>> {
        listed
            .lines()
            .skip(1)
            .map(|line| line.split_whitespace().map(str::to_owned).collect())
            .collect()
    };
    let listed = succeeds(&toolbridge_on(work.path(), db, &["signing-keys", "list"]));
    let table = rows(&listed);
    assert_eq!(table.len(), 2, "{listed}");
    // The new key is published but waits; the old one signs until the handover.
    assert_eq!(
        (
            &*table[0][0],
            &*table[0][1],
            &*table[0][3],
            &*table[0][4],
            &*table[0][5]
        ),
        (new.as_str(), "ES256", "-", "no", "yes"),
        "{listed}"
    );
    assert_eq!(
        (&*table[1][0], &*table[1][4], &*table[1][5]),
        (old.as_str(), "yes", "yes"),
        "{listed}"
    );
    assert_ne!(table[1][3], "-", "{listed}");

    // At once: the newest key signs now, the others stop now and stay published.
    let at_once = succeeds(&toolbridge_on(
        work.path(),
        db,
        &["signing-keys", "rotate", "--at-once"],
    ));
    assert!(
        at_once.contains("signs every identity token from now on"),
        "{at_once}"
    );
    let newest = kid(&at_once);
    let listed = succeeds(&toolbridge_on(work.path(), db, &["signing-keys", "list"]));
    let table = rows(&listed);
    assert_eq!(table.len(), 3, "{listed}");
    assert_eq!(
        (&*table[0][0], &*table[0][4]),
        (newest.as_str(), "yes"),
        "{listed}"
    );
    assert!(
        table[1..]
            .iter()
            .all(|row| row[4] == "no" && row[5] == "yes"),
        "{listed}"
    );
    for said in [&first, &staged, &at_once, &listed] {
        for secret in ["PRIVATE", "\"d\"", "MIG"] {
            assert!(!said.contains(secret), "{said}");
        }
    }
}

/// A new key file in `dir` called `name`, as `toolbridge secrets-key generate` writes it; its path
/// and the key's id.
fn new_key_file(dir: &Path, name: &str) -> (String, String) {
    let generated = succeeds(&toolbridge(dir, &["secrets-key", "generate"]));
    let file = dir.join(name);
    std::fs::write(&file, &generated).unwrap();
    let id = toolbridge_store::SecretsKey::from_hex(&generated)
        .unwrap()
        .id()
        .to_owned();
    (file.to_str().unwrap().to_owned(), id)
}

#[tokio::test]
async fn a_secrets_key_seals_the_database_s_secrets_and_every_command_then_needs_it() {
    let work = tempfile::tempdir().unwrap();
    let generated = succeeds(&toolbridge(work.path(), &["secrets-key", "generate"]));
    let key = generated.trim();
    assert_eq!(key.len(), 64, "{generated}");
    assert!(key.bytes().all(|b| b.is_ascii_hexdigit()), "{generated}");
    let (key_file, id) = new_key_file(work.path(), "secrets.key");
    assert_ne!(std::fs::read_to_string(&key_file).unwrap().trim(), key);

    // A signing key made before any secrets key is kept as given, and sealed by the first
    // command that has the key.
    let db_path = work.path().join("sealed.sqlite3");
    let db = db_path.to_str().unwrap();
    succeeds(&toolbridge_on(work.path(), db, &["signing-keys", "rotate"]));
    let at_rest = || async {
        let store = toolbridge_store::Store::open(&db_path).await.unwrap();
        store.secrets_at_rest().await.unwrap()
    };
    assert_eq!(at_rest().await.plain, 1);
    succeeds(&toolbridge_on(
        work.path(),
        db,
        &["signing-keys", "rotate", "--secrets-key-file", &key_file],
    ));
    let sealed = at_rest().await;
    assert_eq!((sealed.plain, sealed.sealed.get(&id)), (0, Some(&2)));

    // Without the key, any command on the database is refused, and says what to give it.
    let refused = is_refused(&toolbridge_on(work.path(), db, &["signing-keys", "list"]));
    assert!(
        refused.contains(&format!("holds 2 secrets sealed with key {id}"))
            && refused.contains("--secrets-key-file")
            && refused.contains("TOOLBRIDGE_SECRETS_KEY_FILE"),
        "{refused}"
    );
    let listed = command(work.path(), &["signing-keys", "list"])
        .env(DATABASE_VAR, db)
        .env("TOOLBRIDGE_SECRETS_KEY_FILE", &key_file)
        .output()
        .unwrap();
    assert_eq!(succeeds(&listed).lines().count(), 3);

    // Rotating to another key reseals both; then only the new key opens the database.
    let (other, other_id) = new_key_file(work.path(), "other.key");
    let refused = is_refused(&toolbridge_on(
        work.path(),
        db,
        &["signing-keys", "list", "--secrets-key-file", &other],
    ));
    assert!(
        refused.contains(&id) && refused.contains(&format!("the key given is {other_id}")),
        "{refused}"
    );
    let rotate = ["secrets-key", "rotate", "--new-key-file", &other];
    let rotated = succeeds(&toolbridge_on(
        work.path(),
        db,
        &[&rotate[..], &["--secrets-key-file", &key_file]].concat(),
    ));
    assert!(
        rotated.starts_with(&format!("Sealed 2 secrets with key {other_id}"))
            && rotated.contains(&format!("they were sealed with key {id}")),
        "{rotated}"
    );
    let refused = is_refused(&toolbridge_on(
        work.path(),
        db,
        &["signing-keys", "list", "--secrets-key-file", &key_file],
    ));
    assert!(
        refused.contains(&format!("the key given is {id}")),
        "{refused}"
    );
    succeeds(&toolbridge_on(
        work.path(),
        db,
        &["signing-keys", "list", "--secrets-key-file", &other],
    ));
}

#[test]
fn a_secrets_key_file_that_holds_no_key_is_refused_naming_the_file_not_its_contents() {
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("any.sqlite3");
    let db = db.to_str().unwrap();
    let wrong = work.path().join("wrong.key");
    std::fs::write(&wrong, "not-a-key-at-all\n").unwrap();
    let wrong = wrong.to_str().unwrap();
    let refused = is_refused(&toolbridge_on(
        work.path(),
        db,
        &["signing-keys", "list", "--secrets-key-file", wrong],
    ));
    assert!(
        refused.contains(&format!(
            "--secrets-key-file {wrong}: a secrets key is 64 hex digits"
        )) && !refused.contains("not-a-key-at-all"),
        "{refused}"
    );
    let missing = work.path().join("missing.key");
    let missing = missing.to_str().unwrap();
    let refused = is_refused(&toolbridge_on(
        work.path(),
        db,
        &["signing-keys", "list", "--secrets-key-file", missing],
    ));
    assert!(
        refused.contains(&format!("--secrets-key-file {missing}: cannot read it")),
        "{refused}"
    );
    let refused = is_refused(&toolbridge_on(
        work.path(),
        db,
        &["secrets-key", "rotate", "--new-key-file", wrong],
    ));
    assert!(
        refused.contains(&format!(
            "--new-key-file {wrong}: a secrets key is 64 hex digits"
        )),
        "{refused}"
    );
    // Nothing was opened: the database file was never made.
    assert!(!Path::new(db).exists());
}
