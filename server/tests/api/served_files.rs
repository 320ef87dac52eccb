//! Where the app, the SDK, the host module and the example tools come from: the copies built
//! into the binary (which a debug build reads from the checkout it was built from, wherever it
//! runs), or folders given in their place (`--www-dir`, `--sdk-dir`, `--host-dir`,
//! `--example-tools`), served from disk on each request.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use reqwest::Method;
use toolbridge_server::tools;

use crate::harness::Server;

/// A file of the checkout, which the binary's copies are built from.
fn checkout(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).unwrap()
}

/// `GET path` on `server`: the status and the body.
async fn get(server: &Server, path: &str) -> (u16, Vec<u8>) {
    let response = server.request(Method::GET, path).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn the_app_comes_from_the_binary_unless_a_folder_is_given() {
    let server = Server::start().await;
    let (status, page) = get(&server, "/").await;
    assert_eq!(status, 200);
    assert_eq!(page, checkout("www/index.html"));
    let (status, icon) = get(&server, "/favicon.svg").await;
    assert_eq!((status, icon), (200, checkout("www/favicon.svg")));

    let www = tempfile::tempdir().unwrap();
    std::fs::write(
        www.path().join("index.html"),
        "<!doctype html><title>mine</title>",
    )
    .unwrap();
    let dir = www.path().to_owned();
    let overridden = Server::start_with(move |state| state.serving_www_from(dir)).await;
    let (status, page) = get(&overridden, "/quotes/3f2a").await;
    assert_eq!(status, 200);
    assert_eq!(page, b"<!doctype html><title>mine</title>");
    // The folder is served alone: what only the binary's copy has is not there.
    let (status, _) = get(&overridden, "/favicon.svg").await;
    assert_eq!(status, 404);
    // Read from disk on each request: an edit shows at once.
    std::fs::write(
        www.path().join("index.html"),
        "<!doctype html><title>edited</title>",
    )
    .unwrap();
    let (_, page) = get(&overridden, "/").await;
    assert_eq!(page, b"<!doctype html><title>edited</title>");
}

#[tokio::test]
async fn the_sdk_and_the_host_module_come_from_the_folders_given() {
    let sdk = tempfile::tempdir().unwrap();
    std::fs::write(sdk.path().join("bridge.js"), "/* a bridge of my own */").unwrap();
    let host = tempfile::tempdir().unwrap();
    std::fs::write(
        host.path().join("toolbridge_host.js"),
        "/* a host of my own */",
    )
    .unwrap();
    let (sdk_dir, host_dir) = (sdk.path().to_owned(), host.path().to_owned());
    let server = Server::start_with(move |state| {
        state.serving_sdk_from(sdk_dir).serving_host_from(host_dir)
    })
    .await;
    assert_eq!(
        get(&server, "/sdk/bridge.js").await,
        (200, b"/* a bridge of my own */".to_vec())
    );
    assert_eq!(
        get(&server, "/host/toolbridge_host.js").await,
        (200, b"/* a host of my own */".to_vec())
    );
    // A file of the module the folder lacks is not built there.
    let (status, body) = get(&server, "/host/toolbridge_host_bg.wasm").await;
    assert_eq!(status, 404);
    let body = String::from_utf8(body).unwrap();
    assert!(
        body.contains("toolbridge_host_bg.wasm is not built; build it with `cargo xtask build`"),
        "{body}"
    );
    // The app still comes from the binary.
    assert_eq!(get(&server, "/").await, (200, checkout("www/index.html")));
}

#[tokio::test]
async fn the_built_in_example_tools_install_as_the_folder_does() {
    let server = Server::start().await;
    let installed: Vec<String> = tools::install_builtin_examples(&server.store)
        .await
        .into_iter()
        .map(|outcome| outcome.unwrap().tool.slug)
        .collect();
    assert_eq!(
        installed,
        ["flooring", "job-lookup", "quick-quote", "supplier-prices"]
    );
    for (slug, folder) in [
        ("flooring", "flooring-estimator"),
        ("job-lookup", "job-lookup"),
        ("quick-quote", "quick-quote"),
        ("supplier-prices", "supplier-prices"),
    ] {
        for file in ["index.html", "app.js", "style.css"] {
            let response = server
                .to_tool(slug, Method::GET, &format!("/{file}"))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "{slug}/{file}");
            let body = response.bytes().await.unwrap();
            assert_eq!(
                body.as_ref(),
                checkout(&format!("example-tools/{folder}/{file}")),
                "{slug}/{file}"
            );
        }
    }
}

/// `toolbridge serve` on a fresh database in `dir` (its working directory), with `args`; killed
/// when dropped.
struct Serving {
    child: Child,
    base: String,
}

impl Serving {
    fn start(dir: &Path, args: &[&Path]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolbridge"))
            .args(["serve", "--port", "0", "--seed-products", "20"])
            .args(args)
            .current_dir(dir)
            .env_remove("TOOLBRIDGE_DATABASE_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let base = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|line| {
                let rest = line.strip_prefix("toolbridge listening on ")?;
                rest.split_whitespace().next().map(str::to_owned)
            })
            .expect("the server says where it listens");
        // Keep reading, so that the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Self { child, base }
    }

    async fn get(&self, path: &str) -> (u16, Vec<u8>) {
        let response = reqwest::get(format!("{}{path}", self.base)).await.unwrap();
        let status = response.status().as_u16();
        (status, response.bytes().await.unwrap().to_vec())
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn the_binary_serves_its_copies_from_any_folder_and_the_folders_flags_name() {
    // Started in an empty folder: nothing there by the checkout's relative paths.
    let work = tempfile::tempdir().unwrap();
    let server = Serving::start(work.path(), &[]);
    assert_eq!(server.get("/").await, (200, checkout("www/index.html")));
    drop(server);

    let folder = |name: &str, file: &str, text: &str| -> PathBuf {
        let dir = work.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(file), text).unwrap();
        dir
    };
    let www = folder("www-mine", "index.html", "<!doctype html><p>my app</p>");
    let sdk = folder("sdk-mine", "bridge.js", "/* my bridge */");
    let host = folder("host-mine", "toolbridge_host.js", "/* my host */");
    let other = tempfile::tempdir().unwrap();
    let server = Serving::start(
        other.path(),
        &[
            Path::new("--www-dir"),
            &www,
            Path::new("--sdk-dir"),
            &sdk,
            Path::new("--host-dir"),
            &host,
        ],
    );
    assert_eq!(
        server.get("/").await,
        (200, b"<!doctype html><p>my app</p>".to_vec())
    );
    assert_eq!(
        server.get("/sdk/bridge.js").await,
        (200, b"/* my bridge */".to_vec())
    );
    assert_eq!(
        server.get("/host/toolbridge_host.js").await,
        (200, b"/* my host */".to_vec())
    );
}
