//! The `toolbridge tool` commands and the first start, run as a user runs
//! them: the built binary, its output and its exit status.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository's example tools.
fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../example-tools")
}

/// The environment variable that names the database when `--db` does not.
const DATABASE_VAR: &str = "TOOLBRIDGE_DATABASE_URL";

/// `toolbridge args…` in `dir`, with no database named by the environment (the tests' own
/// environment may name one).
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolbridge"));
    command.args(args).current_dir(dir).env_remove(DATABASE_VAR);
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
    for slug in ["flooring", "quick-quote", "job-lookup"] {
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
    for slug in ["flooring", "quick-quote", "job-lookup"] {
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

/// A server started as a user starts it, with a folder served live, read
/// as it prints.
struct Serving {
    child: std::process::Child,
    address: String,
    stderr: std::sync::mpsc::Receiver<String>,
}

impl Serving {
    fn start(work: &Path, dev_tool: &Path) -> Self {
        let mut child = command(
            work,
            &[
                "serve",
                "--port",
                "0",
                "--seed-products",
                "20",
                "--example-tools",
                "none",
            ],
        )
        .arg("--dev-tool")
        .arg(dev_tool)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut address = None;
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if let Some(rest) = line.strip_prefix("toolbridge listening on ") {
                address = rest.split_whitespace().next().map(str::to_owned);
                break;
            }
        }
        let stderr = child.stderr.take().unwrap();
        let (lines, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            address: address.expect("the server said where it listens"),
            stderr: received,
        }
    }

    /// The next stderr line that starts with `prefix`, if one comes within
    /// `wait`.
    fn next_stderr_line(&self, prefix: &str, wait: std::time::Duration) -> Option<String> {
        let until = std::time::Instant::now() + wait;
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return Some(line),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        None
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    let server = Serving::start(work.path(), &folder);

    let client = reqwest::Client::new();
    let signed_in = client
        .post(format!("{}/api/session", server.address))
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
            .post(format!("{}/api/dev-tools/{slug}/blocked", server.address))
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
            "--name",
            "on-postgres",
            "--scopes",
            "quotes:read",
            "--db",
            &url,
        ],
    );
    assert!(created.status.success(), "{}", text(&created));
    let listed = toolbridge_on(work.path(), &url, &["keys", "list"]);
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

    // A second first start finds the data there and seeds nothing.
    let said = first_start({
        let mut serve = command(
            work.path(),
            &[
                "serve",
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
