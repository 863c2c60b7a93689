//! Vectorized expression evaluation over a partition's selected rows: typed
//! arrays ([`array`]) and the evaluator ([`eval()`]).

mod array;
mod eval;

pub use array::{Array, Data, Datum, NO_ROW, Rows, StrBuf, Strs};
pub use eval::{eval, order_values, true_positions};
