//! TEMPORARY stand-in for `datasets.rs` until the `data` branch lands.
use std::io::Write;
use std::path::Path;

use katydid::LoadStats;

use crate::session::{CliError, Session};

pub const DEMO_TABLE: &str = "trips";

fn missing() -> CliError {
    CliError::Message("the data set generators are not built in yet".into())
}

pub fn generate(_: &str, _: u64, _: u64, _: &Path) -> Result<(), CliError> {
    Err(missing())
}

pub fn load_demo(_: &mut Session, _: u64, _: &mut dyn Write) -> Result<LoadStats, CliError> {
    Err(missing())
}

pub fn demo_description() -> &'static str {
    ""
}
