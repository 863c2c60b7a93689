//! Helpers shared by the integration tests.

use std::path::PathBuf;

/// The path of shared test dataset `file_name`, looked up in
/// `$KATYDID_SHARED/datasets/` and then in `../shared/datasets/` beside the
/// repository. When it is in neither, prints
/// `note: skipping, shared dataset <name> not found (set KATYDID_SHARED)` to
/// stderr and returns `None`, so the calling test can return early.
#[allow(dead_code)]
pub fn shared_dataset(file_name: &str) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("KATYDID_SHARED") {
        candidates.push(PathBuf::from(dir).join("datasets").join(file_name));
    }
    candidates.push(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("shared")
            .join("datasets")
            .join(file_name),
    );
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        eprintln!("note: skipping, shared dataset {file_name} not found (set KATYDID_SHARED)");
    }
    found
}
