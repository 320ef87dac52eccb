//! A test server on its own thread with its own tokio runtime, listening on 127.0.0.1 at a port
//! the OS picks: what the fault server and the webhook receiver run on, so that sync code (a
//! `with-backends` run, a sync test) can start one and drop it as well as async code can.

use std::future::Future;
use std::net::{Ipv4Addr, TcpListener as StdListener};
use std::thread::{self, JoinHandle};

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::Error;

/// A running background server. Dropping it tells it to stop and waits for its thread; the
/// runtime ends with the thread, and with it every connection the server still held.
pub(crate) struct Background {
    port: u16,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Listens, then runs `serve(listener, stopped)` on a thread called `name` until it returns;
    /// `stopped` resolves when the server is dropped. `name` also names the server in errors
    /// ("the webhook receiver cannot listen").
    pub(crate) fn start<F, Fut>(name: &'static str, serve: F) -> Result<Self, Error>
    where
        F: FnOnce(TcpListener, oneshot::Receiver<()>) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let cannot_listen = || Error::io(format!("the {name} cannot listen"));
        let listener = StdListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(cannot_listen())?;
        let port = listener
            .local_addr()
            .map_err(Error::io(format!("the {name} has no address")))?
            .port();
        listener.set_nonblocking(true).map_err(cannot_listen())?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::io(format!("cannot start the {name}'s runtime")))?;
        let listener = {
            let _inside = runtime.enter();
            TcpListener::from_std(listener).map_err(cannot_listen())?
        };
        let (stop, stopped) = oneshot::channel();
        let thread = thread::Builder::new()
            .name(name.replace(' ', "-"))
            .spawn(move || runtime.block_on(serve(listener, stopped)))
            .map_err(Error::io(format!("cannot start the {name}'s thread")))?;
        Ok(Self {
            port,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
