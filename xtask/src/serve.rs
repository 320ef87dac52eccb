//! `cargo xtask serve`: builds what the app serves and runs the `toolbridge`
//! server on <http://localhost:8080>, with a demo database kept in
//! `target/serve/` between runs.

use crate::bridge_js;
use crate::error::Error;
use crate::files::create_dir;
use crate::host_module;
use crate::process::{self, Ctx, describe};
use crate::setup;

/// Where the demo database lives, relative to the target directory.
const DB_DIR: &str = "serve";

/// Runs setup and the builds, then the server in the foreground until
/// Ctrl-C. Extra arguments go to `toolbridge serve` (`--port 9000`).
pub(crate) fn run(ctx: &Ctx, args: &[String]) -> Result<(), Error> {
    println!("serve: checking the toolchain (cargo xtask setup)");
    if !setup::run(ctx, setup::Purpose::Serve) {
        return Err(Error::failed(
            "setup is incomplete: see the FAILED lines above",
        ));
    }
    bridge_js::build(ctx)?;
    host_module::build(ctx)?;
    let db_dir = ctx.target_dir().join(DB_DIR);
    create_dir(&db_dir)?;
    let db = db_dir.join("toolbridge.sqlite3");
    let mut server = ctx.cargo();
    server
        .args([
            "run",
            "--release",
            "-p",
            "toolbridge-server",
            "--bin",
            "toolbridge",
            "--",
            "serve",
            "--db",
        ])
        .arg(ctx.shown(&db))
        .args(args);
    println!("serve: running `{}` (Ctrl-C stops it)", describe(&server));
    if process::run(&mut server)? {
        Ok(())
    } else {
        Err(Error::failed(format!("`{}` failed", describe(&server))))
    }
}
