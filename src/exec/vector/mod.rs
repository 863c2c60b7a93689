//! Vectorized expression evaluation over a partition's selected rows: typed
//! arrays ([`array`]) and the evaluator ([`eval()`]).

mod array;
mod eval;

pub use array::{
    Array, Data, Datum, PartitionRow, Rows, StrBuf, Strs, decode_column, gather_validity,
};
pub use eval::{eval, order_values, true_positions};
