//! The `toolbridge tool` commands and the first start, run as a user runs
//! them: the built binary, its output and its exit status.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository's example tools.
fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../example-tools")
}

/// Runs `toolbridge args…` in `dir`.
fn toolbridge(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolbridge"))
        .args(args)
        .current_dir(dir)
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
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolbridge"))
        .args([
            "serve",
            "--port",
            "0",
            "--seed-products",
            "20",
            "--example-tools",
        ])
        .arg(examples())
        .current_dir(work.path())
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
