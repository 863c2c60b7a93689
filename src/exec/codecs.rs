//! Kernels on the compressed codecs (ALP, linear, delta, run-length, FSST,
//! hex points): what the executor runs on a column without decoding it, and
//! the decoding of these codecs into typed arrays for everything else.
//!
//! # Design
//! The executor's general path (`exec::vector`) reads any codec through
//! [`decode_column`], so every query is correct whatever a partition's
//! codecs are; the kernels here are shortcuts for the shapes that pay,
//! each wired into the executor by a small hook:
//! - filters (`exec::filter`): [`compile_compare`], [`compile_in`] and
//!   [`compile_like`] turn `column op literal` into a [`CodecStep`]
//!   (comparisons on ALP codes, row ranges on exact lines and runs,
//!   compressed-byte equality on FSST, coordinate equality on hex points),
//!   run by [`run_step`] or, a 64-row block at a time together with the
//!   other leading steps, by [`block_mask`];
//! - aggregates (`exec::aggregate`): [`sums`] computes `sum`/`avg` per group
//!   in place (exact ALP digit sums, closed-form lines, a run at a time),
//!   and [`DecimalSums`] carries exact decimal sums through the merge;
//!   [`key_codes`] gives group keys from ALP codes and run-length
//!   dictionary codes;
//! - top-n (`exec::topn`): [`normalized_codes`] ranks ALP codes, which are
//!   order-preserving.
//!
//! A codec a kernel does not know decodes and goes through the general
//! path; every kernel records its name in the [`Trace`] for EXPLAIN.

use std::borrow::Cow;

use crate::store::{Bitmap, Column, ColumnData, Decoded};

use super::vector::{Array, Data, Datum, Rows, StrBuf, Strs};

/// True for the codecs this module decodes (the ones the executor's own
/// paths do not know).
pub fn is_compressed(col: &Column) -> bool {
    matches!(
        col.data,
        ColumnData::Linear(_)
            | ColumnData::Delta(_)
            | ColumnData::Runs(_)
            | ColumnData::Alp(_)
            | ColumnData::FloatRuns(_)
            | ColumnData::DictRuns { .. }
            | ColumnData::Fsst(_)
            | ColumnData::HexPoints(_)
    )
}

/// Decodes a compressed column at the selected rows into a typed array:
/// integers and floats through [`Column::decode_range`] /
/// [`Column::decode_selection`], run-length dictionary codes as coded
/// strings against the dictionary (so string functions run per entry),
/// FSST and hex points into one owned buffer.
pub fn decode_column<'a>(col: &'a Column, rows: Rows<'_>, validity: Option<Bitmap>) -> Datum<'a> {
    let data = match &col.data {
        ColumnData::DictRuns { dict, runs } => {
            let mut codes = Vec::with_capacity(rows.len);
            match rows.sel {
                None => runs.decode_range(0..rows.len, &mut codes),
                Some(sel) => runs.decode_selection(sel, &mut codes),
            }
            let entries: Vec<&'a str> = dict.values().iter().map(|s| &**s).collect();
            Data::Str(Strs::Coded {
                entries: Box::new(Strs::Views(entries)),
                codes: codes.into_iter().map(|c| c as u32).collect(),
            })
        }
        _ => {
            let decoded = match rows.sel {
                None => col.decode_range(0..rows.len),
                Some(sel) => col.decode_selection(sel),
            };
            match decoded {
                Decoded::Ints(v) => Data::Int(v),
                Decoded::Floats(v) => Data::Float(Cow::Owned(v)),
                Decoded::Strings(s) => {
                    let mut buf = StrBuf::with_capacity(s.len());
                    for j in 0..s.len() {
                        buf.push(s.get(j));
                    }
                    Data::Str(Strs::Owned(buf))
                }
            }
        }
    };
    Datum::Array(Array {
        dtype: col.dtype,
        data,
        validity,
    })
}
