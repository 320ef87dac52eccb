//! What the host's browser tests and its bench talk to: a real `toolbridge` server that lets the
//! test page in, and the [`FaultServer`].

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Error;
use crate::fault_server::FaultServer;
use crate::server::{ReservedPort, ServerOptions, ToolbridgeServer, base_url};

/// The backends of the host's browser tests: a `toolbridge` server whose allowed origins are the
/// test page's (`http://127.0.0.1:P` and `http://localhost:P`, P reserved here for the wasm test
/// runner), and a [`FaultServer`]. The tests learn both addresses when they are compiled, so the
/// ports are reserved first and the server may start after the tests are built. Both stop when
/// this is dropped.
pub struct HostBackends {
    page_port: u16,
    /// Holds the page's port so that neither backend is given it; let go by [`Self::apply`].
    page_reservation: Option<ReservedPort>,
    server_port: u16,
    /// Holds the server's port until [`Self::launch`] starts the server on it.
    server_reservation: Option<ReservedPort>,
    server: Option<ToolbridgeServer>,
    options: ServerOptions,
    faults: FaultServer,
}

impl HostBackends {
    /// Reserves the ports and starts the fault server ([`Self::reserve`]), then starts the server
    /// `binary` ([`Self::launch`]).
    pub fn start(binary: &Path, options: ServerOptions) -> Result<Self, Error> {
        let mut backends = Self::reserve(options)?;
        backends.launch(binary)?;
        Ok(backends)
    }

    /// Reserves the page's and the server's ports and starts the fault server. The server is
    /// started later by [`Self::launch`] with `options` (their label prefixes what is printed),
    /// to which the page's two origins are added.
    pub fn reserve(mut options: ServerOptions) -> Result<Self, Error> {
        let page_reservation = ReservedPort::new()?;
        let page_port = page_reservation.port();
        let server_reservation = ReservedPort::new()?;
        let server_port = server_reservation.port();
        let faults = FaultServer::start()?;
        serve_tool_pages(&faults)?;
        println!(
            "{}: the fault server listens at {}; the test page will be served on port \
             {page_port} and the server will listen on port {server_port}",
            options.label,
            faults.base_url()
        );
        options.allow_origins.extend([
            format!("http://127.0.0.1:{page_port}"),
            format!("http://localhost:{page_port}"),
        ]);
        Ok(Self {
            page_port,
            page_reservation: Some(page_reservation),
            server_port,
            server_reservation: Some(server_reservation),
            server: None,
            options,
            faults,
        })
    }

    /// Starts the server `binary` on the reserved port; a second call does nothing.
    pub fn launch(&mut self, binary: &Path) -> Result<(), Error> {
        if let Some(port) = self.server_reservation.take() {
            self.server = Some(ToolbridgeServer::launch(binary, &self.options, port)?);
        }
        Ok(())
    }

    /// Gives the command that builds or runs the tests the backends' addresses: the tests learn
    /// the server's and the fault server's when they compile (`TOOLBRIDGE_TEST_API`,
    /// `TOOLBRIDGE_TEST_HARNESS`), and the runner serves the page on the reserved port
    /// (`WASM_BINDGEN_TEST_ADDRESS`). The same addresses every time, so a command that only
    /// builds the tests (`--no-run`) builds what the one that runs them runs.
    pub fn configure(&self, command: &mut Command) {
        command
            .env(
                "WASM_BINDGEN_TEST_ADDRESS",
                format!("127.0.0.1:{}", self.page_port),
            )
            .env("TOOLBRIDGE_TEST_API", base_url(self.server_port))
            .env("TOOLBRIDGE_TEST_HARNESS", self.faults.base_url());
    }

    /// [`Self::configure`]s the command that runs the tests, and lets go of the page's port for
    /// the runner to take.
    pub fn apply(&mut self, command: &mut Command) {
        self.configure(command);
        self.page_reservation = None;
    }

    /// The `toolbridge` server, once [`Self::launch`] has started it.
    pub fn server(&self) -> Option<&ToolbridgeServer> {
        self.server.as_ref()
    }

    /// The server's log.
    pub fn server_log(&self) -> PathBuf {
        self.options.log()
    }

    /// The fault server, to serve files from and read what the tests reported.
    pub fn fault_server(&self) -> &FaultServer {
        &self.faults
    }
}

/// The host tests' tool pages (`host/tests/pages/*.html`), from the fault server as
/// `/files/pages/<name>`, where the tests open them at `http://localhost:<its port>`. Not from the
/// test page's own server (wasm-bindgen-test-runner's, on `tiny_http`): its pool of threads can leave
/// a new connection waiting behind the browser's idle keep-alive ones, and Chromium's net log
/// showed the first tool page of a run answered after 60 s. The fault server takes one request a
/// connection.
fn serve_tool_pages(faults: &FaultServer) -> Result<(), Error> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/tests/pages");
    for entry in fs_err::read_dir(&dir)? {
        let path = entry?.path();
        if path
            .extension()
            .is_some_and(|extension| extension == "html")
        {
            if let Some(name) = path.file_name().and_then(|name| name.to_str()) {
                faults.serve_file(&format!("pages/{name}"), fs_err::read(&path)?);
            }
        }
    }
    Ok(())
}
