//! `toolbridge tool`: pack a tool folder into a bundle, validate a bundle,
//! install it into the server's database, and manage installed tools.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use toolbridge_bundle::{Bundle, MAX_COMPRESSED_BYTES};
use toolbridge_protocol::manifest::ToolManifest;
use toolbridge_protocol::settings::{SettingDeclaration, SettingType};
use toolbridge_server::tools;

use crate::{Database, Failure, open};
use toolbridge_server::error::Chain;

/// `toolbridge tool …`.
#[derive(Debug, Subcommand)]
pub(crate) enum ToolCommand {
    /// Packs a tool folder into a bundle .zip. Refuses, before writing
    /// anything, what `tool validate` would refuse; hidden files are left out.
    Pack {
        /// The folder, with manifest.json at its root.
        dir: PathBuf,
        /// Where to write the bundle (default: `<slug>-<version>.zip` here).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Checks a bundle .zip against every bundle rule and says what it holds.
    Validate {
        /// The bundle.
        file: PathBuf,
    },
    /// Installs a bundle .zip into the server's database, replacing an
    /// earlier version of the same tool. A running server serves it at once.
    Install {
        /// The bundle.
        file: PathBuf,
        /// The tool's slug, its origin's name (default: from the manifest's
        /// shortName).
        #[arg(long)]
        slug: Option<String>,
        #[command(flatten)]
        database: Database,
    },
    /// Lists the installed tools.
    List {
        #[command(flatten)]
        database: Database,
    },
    /// Removes a tool and its files.
    Remove {
        /// The tool's slug (from `tool list`).
        slug: String,
        #[command(flatten)]
        database: Database,
    },
    /// Offers a disabled tool in the app again.
    Enable {
        /// The tool's slug (from `tool list`).
        slug: String,
        #[command(flatten)]
        database: Database,
    },
    /// Keeps a tool installed but stops offering and serving it.
    Disable {
        /// The tool's slug (from `tool list`).
        slug: String,
        #[command(flatten)]
        database: Database,
    },
}

/// Runs a `tool` subcommand.
pub(crate) async fn run(command: ToolCommand) -> Result<(), Failure> {
    match command {
        ToolCommand::Pack { dir, output } => pack(&dir, output),
        ToolCommand::Validate { file } => {
            let bundle = read_bundle(&file)?;
            println!("{} is a valid tool bundle.", file.display());
            describe(&bundle);
            Ok(())
        }
        ToolCommand::Install {
            file,
            slug,
            database,
        } => {
            let bundle = read_bundle(&file)?;
            let store = open(&database).await?;
            let installed = tools::install(&store, &bundle, slug.as_deref())
                .await
                .map_err(|e| Failure::because(file.display().to_string(), e))?;
            let tool = &installed.tool;
            match &installed.replaced {
                Some(old) => println!(
                    "Replaced {} {} with {} as the tool {}.",
                    old.manifest.name, old.manifest.version, tool.manifest.version, tool.slug
                ),
                None => println!(
                    "Installed {} {} as the tool {}.",
                    tool.manifest.name, tool.manifest.version, tool.slug
                ),
            }
            println!(
                "A server on this database serves it at its own origin, named {} in front of the tools' domain (`toolbridge serve` prints the address).",
                tool.slug
            );
            if let Some(origins) = talks_to(&tool.manifest) {
                println!("It {origins}, as its manifest declares.");
            }
            if !tool.manifest.settings.is_empty() {
                println!(
                    "It has {} setting(s); an admin sets them per organisation in Settings → Tools:",
                    tool.manifest.settings.len()
                );
                print_settings(&tool.manifest.settings);
            }
            Ok(())
        }
        ToolCommand::List { database } => {
            let store = open(&database).await?;
            let installed = store
                .tools()
                .await
                .map_err(|e| Failure::because("cannot read the installed tools", e))?;
            if installed.is_empty() {
                println!("No tools are installed; install one with `toolbridge tool install`.");
            }
            for tool in installed {
                println!(
                    "{:<20} {:<18} {:<10} {:<9} {:>3} files {:>9} bytes  {}",
                    tool.slug,
                    tool.manifest.tool_type,
                    tool.manifest.version,
                    if tool.enabled { "enabled" } else { "disabled" },
                    tool.file_count,
                    tool.total_bytes,
                    tool.manifest.name
                );
                let keys: Vec<&str> = tool
                    .manifest
                    .settings
                    .iter()
                    .map(|setting| setting.key.as_str())
                    .collect();
                if !keys.is_empty() {
                    println!("{:<20} settings: {}", "", keys.join(", "));
                }
                if let Some(origins) = talks_to(&tool.manifest) {
                    println!("{:<20} {origins}", "");
                }
            }
            Ok(())
        }
        ToolCommand::Remove { slug, database } => {
            let store = open(&database).await?;
            let removed = store
                .remove_tool(&slug)
                .await
                .map_err(|e| Failure::because(format!("cannot remove the tool {slug}"), e))?;
            if removed {
                println!("Removed the tool {slug}.");
                Ok(())
            } else {
                Err(unknown(&slug))
            }
        }
        ToolCommand::Enable { slug, database } => set_enabled(&database, &slug, true).await,
        ToolCommand::Disable { slug, database } => set_enabled(&database, &slug, false).await,
    }
}

/// `tool pack`: the folder read with a bundle's rules, packed, and the
/// packed bytes checked as `tool validate` checks them (only then can the
/// compressed size be known) before the file is written.
fn pack(dir: &Path, output: Option<PathBuf>) -> Result<(), Failure> {
    let refused =
        |e: toolbridge_bundle::Error| format!("{} cannot be packed:\n{}", dir.display(), Chain(&e));
    let folder = toolbridge_bundle::read_dir(dir).map_err(refused)?;
    for skipped in &folder.skipped {
        println!("Left out the hidden entry {skipped}.");
    }
    let bytes = toolbridge_bundle::pack(&folder.bundle).map_err(refused)?;
    toolbridge_bundle::read_zip(&bytes).map_err(refused)?;
    let manifest = folder.bundle.manifest();
    let output = output.unwrap_or_else(|| {
        let name = folder
            .bundle
            .suggested_slug()
            .unwrap_or_else(|| "tool".to_owned());
        PathBuf::from(format!("{name}-{}.zip", manifest.version))
    });
    write_whole(&output, &bytes)?;
    println!(
        "Packed {} {} into {} ({} bytes).",
        manifest.name,
        manifest.version,
        output.display(),
        bytes.len()
    );
    describe(&folder.bundle);
    Ok(())
}

/// Reads a bundle file (never more than the largest bundle allowed, and a
/// byte more to tell that it is too large) and validates it.
fn read_bundle(file: &Path) -> Result<Bundle, Failure> {
    let unreadable = |e| Failure::because(format!("cannot read {}", file.display()), e);
    let opened = std::fs::File::open(file).map_err(unreadable)?;
    let mut bytes = Vec::new();
    opened
        .take(MAX_COMPRESSED_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    toolbridge_bundle::read_zip(&bytes).map_err(|e| {
        format!(
            "{} is not a valid tool bundle:\n{}",
            file.display(),
            Chain(&e)
        )
        .into()
    })
}

/// Writes `bytes` to `path` whole or not at all: into a file beside it,
/// renamed into place when complete.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, bytes)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&partial);
            Failure::because(format!("cannot write {}", path.display()), e)
        })
}

/// Prints what a bundle holds.
fn describe(bundle: &Bundle) {
    let manifest = bundle.manifest();
    println!("  name         {}", manifest.name);
    println!("  short name   {}", manifest.short_name);
    println!("  type         {}", manifest.tool_type);
    println!("  version      {}", manifest.version);
    println!("  entry        {}", manifest.entry);
    if let Some(slug) = bundle.suggested_slug() {
        println!("  slug         {slug}");
    }
    println!(
        "  files        {} ({} bytes uncompressed)",
        bundle.file_count(),
        bundle.total_bytes()
    );
    if let Some(origins) = talks_to(manifest) {
        println!("  connects     {origins}");
    }
    if !manifest.settings.is_empty() {
        println!("  settings     {}", manifest.settings.len());
        print_settings(&manifest.settings);
    }
}

/// `talks to https://a.example and https://b.example`, or `None` for a
/// tool that declares no outside origin.
fn talks_to(manifest: &ToolManifest) -> Option<String> {
    let origins = &manifest.permissions.connect;
    let (last, rest) = origins.split_last()?;
    Some(if rest.is_empty() {
        format!("talks to {last}")
    } else {
        format!("talks to {} and {last}", rest.join(", "))
    })
}

/// One line per declared setting: key, type, what else is declared, label.
fn print_settings(settings: &[SettingDeclaration]) {
    for setting in settings {
        let mut kind = setting.setting_type.token().to_owned();
        if setting.setting_type == SettingType::Select {
            kind = format!("select of {}", setting.options.join(" | "));
        }
        let mut notes = Vec::new();
        if setting.required {
            notes.push("required".to_owned());
        }
        if let Some(default) = &setting.default {
            notes.push(format!("default {default}"));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(", {}", notes.join(", "))
        };
        println!("    {:<20} {kind}{notes}: {}", setting.key, setting.label);
    }
}

async fn set_enabled(database: &Database, slug: &str, enabled: bool) -> Result<(), Failure> {
    let store = open(database).await?;
    let installed = store
        .set_tool_enabled(slug, enabled)
        .await
        .map_err(|e| Failure::because(format!("cannot change the tool {slug}"), e))?;
    if installed {
        println!(
            "The tool {slug} is {}.",
            if enabled { "enabled" } else { "disabled" }
        );
        Ok(())
    } else {
        Err(unknown(slug))
    }
}

fn unknown(slug: &str) -> Failure {
    format!("no tool {slug} is installed; `toolbridge tool list` shows the slugs").into()
}
