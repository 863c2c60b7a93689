//! `Connection.register`: an Arrow table from Python into katydid.
//!
//! The object is read through the Arrow C stream interface
//! (`__arrow_c_stream__`, the Arrow PyCapsule protocol): a pyarrow Table or
//! RecordBatchReader, a Polars DataFrame, or anything else that exports a
//! stream. A pandas DataFrame without the protocol goes through
//! `pyarrow.Table.from_pandas` first. The stream's batches are encoded into
//! partitions by the engine as a load is ([`katydid::Database::load_arrow`]),
//! on the connection's threads with the GIL released.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use katydid::LoadOptions;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use crate::errors::LoadError;
use crate::{Shared, not_arrow, poisoned, run_interruptible};

/// The Arrow C stream `obj` exports, taken over from its capsule.
fn stream_of(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<FFI_ArrowArrayStream> {
    let exporter = if obj.hasattr("__arrow_c_stream__")? {
        obj.clone()
    } else if is_pandas_frame(obj) {
        py.import("pyarrow")?
            .getattr("Table")?
            .call_method1("from_pandas", (obj,))?
    } else {
        return Err(not_arrow(obj));
    };
    let capsule = exporter.call_method0("__arrow_c_stream__")?;
    let capsule = capsule
        .cast_into::<PyCapsule>()
        .map_err(|_| not_arrow(obj))?;
    let pointer = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: a capsule named "arrow_array_stream" holds an
    // `ArrowArrayStream` (Arrow PyCapsule interface); `from_raw` moves it
    // out and marks the capsule's copy released, so the capsule's
    // destructor does not release it again.
    Ok(unsafe { FFI_ArrowArrayStream::from_raw(pointer.as_ptr().cast()) })
}

/// Whether `obj` is a pandas DataFrame (by its class's module, so pandas
/// need not be imported).
fn is_pandas_frame(obj: &Bound<'_, PyAny>) -> bool {
    let class = obj.get_type();
    let module = class.module().map(|m| m.to_string()).unwrap_or_default();
    let name = class.name().map(|n| n.to_string()).unwrap_or_default();
    module.starts_with("pandas") && name == "DataFrame"
}

/// Imports `obj` as table `name` (see the module docs) and returns what
/// the load did.
pub fn register<'py>(
    py: Python<'py>,
    shared: &Arc<Shared>,
    name: String,
    obj: &Bound<'py, PyAny>,
    replace: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let stream = stream_of(py, obj)?;
    let reader = RecordBatchStreamReader::try_new(stream)
        .map_err(|e| LoadError::new_err(format!("<{name}>: not a readable Arrow stream: {e}")))?;
    let options = LoadOptions {
        replace,
        ..LoadOptions::default()
    };
    let origin = PathBuf::from(format!("<{name}>"));
    let worker = shared.clone();
    let stats = run_interruptible(py, &shared.cancel, move || {
        let mut db = worker.db.write().map_err(poisoned)?;
        db.load_arrow(reader, &origin, &name, &options)
    })?;
    let out = PyDict::new(py);
    out.set_item("table", &stats.table)?;
    out.set_item("rows", stats.rows)?;
    out.set_item("columns", stats.columns)?;
    out.set_item("partitions", stats.partitions)?;
    out.set_item("memory_bytes", stats.heap_bytes)?;
    out.set_item("seconds", stats.elapsed.as_secs_f64())?;
    out.set_item("notices", &stats.notices)?;
    Ok(out)
}
