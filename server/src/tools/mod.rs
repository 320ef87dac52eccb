//! Installed tools: installing a checked bundle into the store, serving each
//! tool at its own origin, and the list of tools the app page mounts.

pub mod install;
pub mod listing;
pub mod sites;

pub use install::{Installed, install, install_builtin_examples, install_examples};
pub use sites::{DevTool, ToolSites};
