//! SQL text to [`ast::Statement`], with byte positions kept for errors.
//!
//! The parser is written with nom; it knows nothing of tables or types.
//! [`display`] prints a statement back as SQL that parses to the same tree.

pub mod ast;
pub mod display;
mod parser;

#[cfg(any(test, feature = "internals"))]
pub use display::eq_ignoring_spans;
pub use parser::{parse, parse_interval};
