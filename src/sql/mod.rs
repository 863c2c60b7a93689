//! SQL text to [`ast::Statement`], with byte positions kept for errors.
//!
//! The parser is written with nom; it knows nothing of tables or types.

pub mod ast;
mod parser;

pub use parser::parse;
