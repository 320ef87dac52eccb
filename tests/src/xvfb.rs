//! A virtual X display (Xvfb) for a browser that has no headless mode of its own: WebKitGTK's
//! MiniBrowser opens a real window, so its driver runs with `DISPLAY` naming one of these.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::Error;
use crate::server::{describe, log_file};

/// How long Xvfb may take to say which display it took.
const START_WAIT: Duration = Duration::from_secs(30);

/// How long Xvfb may take to end after `SIGTERM`.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// The screen: as large as a desktop's, so that no test page is cut by the window's size.
const SCREEN: &str = "1280x1024x24";

/// An Xvfb server on a display number that was free; dropping it ends it.
pub struct Xvfb {
    child: Child,
    display: u32,
    /// Xvfb's end of `-displayfd`, held open for as long as it runs.
    _stdout: BufReader<ChildStdout>,
}

impl Xvfb {
    /// Starts Xvfb on the first free display number (it picks one itself and writes it to its
    /// standard output, `-displayfd 1`, so that two runs at once cannot take the same), with its
    /// log in `dir/Xvfb.log`, and waits until it has one.
    pub fn start(dir: &Path) -> Result<Self, Error> {
        fs_err::create_dir_all(dir)?;
        let log = dir.join("Xvfb.log");
        let mut command = Command::new("Xvfb");
        command
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                SCREEN,
                "-nolisten",
                "tcp",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file(&log)?);
        let mut child = command.spawn().map_err(Error::io(format!(
            "cannot start `{}` (Debian's xvfb; `cargo xtask setup` installs it)",
            describe(&command)
        )))?;
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::failed("Xvfb's standard output was not piped"));
        };
        // Read on a thread of its own, so that an Xvfb that never answers cannot hold us.
        let (sender, receiver) = mpsc::channel();
        thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            let mut line = String::new();
            let read = stdout.read_line(&mut line).map(|_| line);
            let _ = sender.send((read, stdout));
        });
        if let Ok((Ok(line), stdout)) = receiver.recv_timeout(START_WAIT) {
            if let Ok(display) = line.trim().parse() {
                return Ok(Self {
                    child,
                    display,
                    _stdout: stdout,
                });
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(Error::failed(format!(
            "Xvfb named no display within {} s; see {}",
            START_WAIT.as_secs(),
            log.display()
        )))
    }

    /// The value of `DISPLAY` for programs that draw on it: `:N`.
    pub fn display(&self) -> String {
        format!(":{}", self.display)
    }
}

impl Drop for Xvfb {
    /// Ends Xvfb with `SIGTERM`, which lets it remove its lock file and socket: killed, it would
    /// leave them behind, and a later Xvfb could take them for a display in use or clear a live
    /// one's. `SIGKILL` if it has not gone within a few seconds.
    fn drop(&mut self) {
        let terminated = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if terminated {
            let deadline = Instant::now() + STOP_WAIT;
            while Instant::now() < deadline {
                if matches!(self.child.try_wait(), Ok(Some(_))) {
                    return;
                }
                thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
