//! Helpers shared by the command-line tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty directory.
    pub fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "katydid-cli-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// Writes `contents` to file `name` in the directory.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The path of shared test dataset `file_name`, looked up in
/// `$KATYDID_SHARED/datasets/` and then in `../shared/datasets/` beside the
/// repository (this crate lives in `cli/`). When it is in neither, the test
/// fails under `KATYDID_REQUIRE_SHARED=1` (as `.ci/run` sets it); otherwise
/// a `note: SKIPPED …` line goes straight to stderr, past the test
/// harness's capture, and the result is `None`.
pub fn shared_dataset(file_name: &str) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("KATYDID_SHARED") {
        candidates.push(PathBuf::from(dir).join("datasets").join(file_name));
    }
    candidates.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/datasets")
            .join(file_name),
    );
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        let test = std::thread::current()
            .name()
            .unwrap_or("a test")
            .to_string();
        assert!(
            std::env::var("KATYDID_REQUIRE_SHARED").as_deref() != Ok("1"),
            "{test}: shared dataset {file_name} not found and KATYDID_REQUIRE_SHARED=1"
        );
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "note: SKIPPED {test}: shared dataset {file_name} not found (set KATYDID_SHARED)"
        );
    }
    found
}
