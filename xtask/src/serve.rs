//! `cargo xtask serve`: builds what the app serves and runs the `toolbridge` server on
//! <http://localhost:8080>, with a demo database kept in `target/serve/` between runs (`--demo`
//! fills it on the first), and webhooks allowed to go to receivers on this machine
//! (`--allow-private-webhooks`). The server serves the working tree's folders (the app, the SDK,
//! host module and documentation just built, the example tools), named by absolute path in place of the copies
//! built into it: the release binary builds beside the wasm builds, so it may carry older ones,
//! and a rebuilt SDK shows without a restart.

use crate::bridge_js;
use crate::ctx::Ctx;
use crate::docs;
use crate::error::Error;
use crate::server_build::BackgroundBuild;
use crate::setup;
use crate::wasm;

/// Runs setup and the builds, then the server in the foreground until Ctrl-C. Extra arguments
/// go to `toolbridge serve` (`--port 9000`).
pub(crate) fn run(ctx: &Ctx, args: &[String]) -> Result<(), Error> {
    let db_dir = ctx.target_dir().join("serve");
    ctx.sh().create_dir(&db_dir)?;
    // The release server is the longest build and needs nothing of setup or of the wasm builds,
    // so it builds from the start, and they run beside it at a lower priority (as in `bench`).
    let mut server = BackgroundBuild::start(ctx, db_dir.join("server-build.log"))?;
    println!("serve: checking the toolchain (cargo xtask setup)");
    setup::run(ctx, setup::Purpose::Serve)?;
    let yielding = ctx.yielding();
    bridge_js::build(&yielding)?;
    wasm::host_module(&yielding)?;
    docs::build(ctx)?;
    let binary = server.wait(ctx)?;
    let db = ctx.shown(&db_dir.join("toolbridge.sqlite3"));
    println!("serve: Ctrl-C stops the server");
    // A webhook receiver on this machine (a development server) may be an endpoint's URL.
    let serve = ctx
        .sh()
        .cmd(binary)
        .args(["serve", "--demo", "--db", &db, "--allow-private-webhooks"])
        .arg("--www-dir")
        .arg(ctx.root().join("www"))
        .arg("--sdk-dir")
        .arg(bridge_js::dist_dir(ctx))
        .arg("--host-dir")
        .arg(wasm::host_dist(ctx))
        .arg("--docs-dir")
        .arg(docs::output_dir(ctx))
        .arg("--example-tools")
        .arg(ctx.root().join("example-tools"))
        .args(args);
    Ok(serve.run()?)
}
