//! `cargo xtask serve`: builds what the app serves and runs the `toolbridge`
//! server on <http://localhost:8080>, with a demo database kept in
//! `target/serve/` between runs.

use crate::bridge_js;
use crate::error::Error;
use crate::host_module;
use crate::process::{self, Ctx, describe};
use crate::server_build::BackgroundBuild;
use crate::server_build::Profile;
use crate::setup;

/// Where the demo database lives, relative to the target directory.
const DB_DIR: &str = "serve";

/// Runs setup and the builds, then the server in the foreground until
/// Ctrl-C. Extra arguments go to `toolbridge serve` (`--port 9000`).
pub(crate) fn run(ctx: &Ctx, args: &[String]) -> Result<(), Error> {
    let db_dir = ctx.target_dir().join(DB_DIR);
    fs_err::create_dir_all(&db_dir)?;
    // The release server is the longest build and needs nothing of setup or of the wasm builds,
    // so it builds from the start, and they run beside it at a lower priority (as in `bench`).
    let mut server_build = BackgroundBuild::start(
        ctx,
        "serve",
        Profile::Release,
        db_dir.join("server-build.log"),
    )?;
    println!("serve: checking the toolchain (cargo xtask setup)");
    if !setup::run(ctx, setup::Purpose::Serve) {
        return Err(Error::failed(
            "setup is incomplete: see the FAILED lines above",
        ));
    }
    let yielding = ctx.yielding();
    bridge_js::build(&yielding)?;
    host_module::build(&yielding)?;
    let binary = server_build.wait(ctx, "serve")?;
    let db = db_dir.join("toolbridge.sqlite3");
    let mut server = ctx.program(&binary);
    server
        .args(["serve", "--db"])
        .arg(ctx.shown(&db))
        .args(args);
    println!("serve: running `{}` (Ctrl-C stops it)", describe(&server));
    if process::run(&mut server)? {
        Ok(())
    } else {
        Err(Error::failed(format!("`{}` failed", describe(&server))))
    }
}
