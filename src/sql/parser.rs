//! nom parser for katydid's SQL dialect.

use super::ast::Statement;
use crate::error::{Error, Result};

/// Parses one statement (an optional trailing `;` is allowed).
///
/// # Errors
/// [`Error::Parse`] with the byte offset where parsing failed.
pub fn parse(sql: &str) -> Result<Statement> {
    let _ = sql;
    Err(Error::NotSupported("parser not written yet".into()))
}
