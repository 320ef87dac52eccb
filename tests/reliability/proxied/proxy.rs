//! What stands in front of the servers in the deployment suite: a certificate authority made for
//! the run, a certificate for the app's and the tools' names, and nginx running
//! `deploy/nginx.conf` as written, with only its paths and ports filled in.

use std::fmt::Write as _;
use std::fs;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use toolbridge_e2e::tls::TestTls;

/// The domain of the example deployment (deploy/nginx.conf): the app at `app.<DOMAIN>`, tools at
/// `<slug>.tools.<DOMAIN>`. The browser and the clients send every name under it to 127.0.0.1.
pub(crate) const DOMAIN: &str = "example.com";

/// The app's host name.
pub(crate) const APP_HOST: &str = "app.example.com";

/// How long nginx may take to listen.
const START_WAIT: Duration = Duration::from_secs(20);

/// The suite's certificate authority and a certificate it signed for the app's name and every
/// tool's (`*.tools.example.com`).
pub(crate) fn make_tls(dir: &Path) -> TestTls {
    TestTls::make(
        dir,
        "deployment suite",
        &[APP_HOST.to_owned(), format!("*.tools.{DOMAIN}")],
        &[],
    )
    .unwrap()
}

/// nginx with TLS in front of the servers, as `deploy/nginx.conf` says; stopped when dropped.
pub(crate) struct Nginx {
    child: Option<Child>,
    /// The port of its https listener (443 in the example).
    pub(crate) https_port: u16,
    /// Where its logs are.
    pub(crate) logs: PathBuf,
}

impl Nginx {
    /// Starts nginx in `dir` on free ports with `deploy/nginx.conf`, its two upstream servers
    /// being `upstreams`, its certificate from `tls`.
    pub(crate) fn start(dir: &Path, tls: &TestTls, upstreams: [u16; 2]) -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the tests crate is in the workspace");
        let example = fs::read_to_string(root.join("deploy/nginx.conf"))
            .unwrap_or_else(|e| panic!("cannot read deploy/nginx.conf: {e}"));
        let logs = dir.join("logs");
        let temp = dir.join("temp");
        for folder in [&logs, &temp] {
            fs::create_dir_all(folder).unwrap();
        }
        let https_port = super::free_port();
        let plain_port = super::free_port();
        let tls_dir = format!("{}/", tls.dir.display());
        let logs_dir = format!("{}/", logs.display());
        // Only paths and ports: each must be found, so an edit of the example that this would
        // miss fails here rather than testing something else.
        let mut site = example;
        for (from, to) in [
            (
                "listen 443 ssl",
                format!("listen 127.0.0.1:{https_port} ssl"),
            ),
            ("listen 80;", format!("listen 127.0.0.1:{plain_port};")),
            ("127.0.0.1:8081", format!("127.0.0.1:{}", upstreams[0])),
            ("127.0.0.1:8082", format!("127.0.0.1:{}", upstreams[1])),
            ("/etc/ssl/toolbridge/", tls_dir),
            ("/var/log/nginx/", logs_dir),
        ] {
            assert!(
                site.contains(from),
                "deploy/nginx.conf no longer has `{from}`, which the deployment suite fills in"
            );
            site = site.replace(from, &to);
        }
        fs::write(dir.join("toolbridge.conf"), site).unwrap();
        // The main file a Debian install has in /etc/nginx/nginx.conf, with every path in `dir`.
        let temp_paths = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
            .iter()
            .fold(String::new(), |mut lines, kind| {
                let _ = writeln!(lines, "    {kind}_temp_path {}/{kind};", temp.display());
                lines
            });
        // As root, nginx's workers would run as `nobody`, who cannot read the key in `dir`.
        let user = if is_root() { "user root;\n" } else { "" };
        let main = format!(
            "{user}worker_processes 1;\npid {dir}/nginx.pid;\nerror_log {logs}/error.log info;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n{temp_paths}    access_log off;\n    include {dir}/toolbridge.conf;\n}}\n",
            dir = dir.display(),
            logs = logs.display(),
        );
        let conf = dir.join("nginx.conf");
        fs::write(&conf, main).unwrap();
        let child = Command::new("nginx")
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(logs.join("startup.log"))
            .arg("-c")
            .arg(&conf)
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start nginx (`cargo xtask setup` installs it): {e}")
            });
        let mut nginx = Self {
            child: Some(child),
            https_port,
            logs,
        };
        nginx.wait_until_listening();
        nginx
    }

    fn wait_until_listening(&mut self) {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, self.https_port));
        let started = Instant::now();
        while started.elapsed() < START_WAIT {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!(
                    "nginx exited ({status}) before it listened; see {}",
                    self.logs.display()
                );
            }
            if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("nginx did not listen within {START_WAIT:?}");
    }

    /// `https://app.example.com:<port>`: the app's public URL in this deployment.
    pub(crate) fn public_url(&self) -> String {
        format!("https://{APP_HOST}:{}", self.https_port)
    }

    /// `https://{slug}.tools.example.com:<port>`: the tools' URL template.
    pub(crate) fn tools_url(&self) -> String {
        format!("https://{{slug}}.tools.{DOMAIN}:{}", self.https_port)
    }
}

impl Drop for Nginx {
    /// Stops nginx with SIGTERM, so that the master stops its workers too (after SIGKILL they
    /// would go on holding the ports), and kills it if it has not gone within 5 s.
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Whether this process runs as root.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}
