//! Kernels on the compressed codecs (ALP, linear, delta, run-length, FSST,
//! hex points): what the executor runs on a column without decoding it, and
//! the decoding of these codecs into typed arrays for everything else.
//!
//! # Design
//! The executor's general path (`exec::vector`) reads any codec through
//! [`decode_column`], a partition's selected rows at a time, so every query
//! is correct whatever a partition's codecs are. The kernels here are
//! shortcuts for the shapes that pay, each wired into the executor by a
//! small hook:
//! - filters (`exec::filter`): [`compile_compare`], [`compile_in`] and
//!   [`compile_like`] turn `column op literal`, `column IN (…)` and
//!   `column [NOT] LIKE pattern` into a [`CodecFilter`] for the partition;
//!   [`CodecFilter::mask`] evaluates it to mask words on the compressed
//!   form: ALP compares its integer codes against the constant's exact code
//!   bounds and the exceptions in f64; linear, delta and run-length columns
//!   compare their decoded integers batch by batch or a run at a time;
//!   run-length dictionary codes test each dictionary entry once and each
//!   run once; FSST compares compressed bytes for `=`, `<>`, `IN`,
//!   decodes only the prefix for `LIKE 'abc%'` and decodes other patterns
//!   a batch of rows at a time into one reused buffer; hex points compare their
//!   two coordinates;
//! - `sum`/`avg` (`exec::aggregate`): [`group_sums`] sums in place: ALP
//!   digits as exact integers scaled once per group and partition (so money
//!   sums are exact to the cent within a partition), integer codecs in
//!   closed form (a line), a run at a time (runs) or batch by batch, all
//!   exact in i128.
//!
//! Every kernel names itself in EXPLAIN through the string its `compile_*`
//! returns. A codec or form a kernel does not know decodes and goes through
//! the general path.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use crate::kernel::like::LikePattern;
use crate::plan::BinaryOp;
use crate::store::with_codes;
use crate::store::{
    Alp, AlpCodes, BATCH_ROWS, Bitmap, CmpOp, Code, CodePredicate, Codes, Column, ColumnData,
    Decoded, Fsst, StringBatch, mask_from_ranges,
};
use crate::types::{DataType, Value, cmp_f64};

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
            | ColumnData::Single(_)
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
            Data::Str(Strs::Coded {
                entries: Arc::new(Strs::Dict(dict)),
                codes: codes.into_iter().map(|c| c as u32).collect(),
            })
        }
        _ => {
            let decoded = match rows.range() {
                Some(r) => col.decode_range(r),
                // Not a range, so a selection.
                None => col.decode_selection(rows.sel.unwrap_or_default()),
            };
            match decoded {
                Decoded::Ints(v) => Data::Int(v),
                Decoded::Floats(v) => Data::Float(Cow::Owned(v)),
                Decoded::Strings(s) => {
                    let buf = string_buffer(s);
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

/// Decoded strings as an owned string buffer, validated as UTF-8 once.
pub fn string_buffer(s: StringBatch) -> StrBuf {
    let n = s.len();
    let (bytes, ends) = s.into_parts();
    StrBuf::from_parts(bytes, &ends).unwrap_or_else(|bytes| {
        // Not reached: the codecs decode what they encoded from `&str`s. A
        // string that is not UTF-8 reads as empty, as `StringBatch::get`
        // has it.
        let mut buf = StrBuf::with_capacity(n);
        let mut start = 0;
        for &e in &ends {
            let e = (e as usize).clamp(start, bytes.len());
            buf.push(std::str::from_utf8(&bytes[start..e]).unwrap_or_default());
            start = e;
        }
        buf
    })
}

// ---------------------------------------------------------------------------
// Filters

/// A predicate on one compressed column of one partition, evaluated on the
/// compressed form by [`CodecFilter::mask`]. NULL rows never match.
#[derive(Debug, Clone)]
pub enum CodecFilter {
    /// ALP: non-exception rows by their code (the constant's exact code
    /// bounds, found by [`Alp::code_predicate`]), exceptions in f64.
    Alp {
        /// The codes that match.
        pred: CodePredicate,
        /// The comparison, for the exceptions.
        op: CmpOp,
        /// The constant.
        constant: f64,
    },
    /// f32 codes: non-exception rows by their code (the constant's exact
    /// code bounds, found by [`crate::store::Single::code_predicate`]),
    /// exceptions in f64.
    Single {
        /// The codes that match.
        pred: CodePredicate,
        /// The comparison, for the exceptions.
        op: CmpOp,
        /// The constant.
        constant: f64,
    },
    /// Float runs: each run's value compared once.
    FloatRuns {
        /// The comparison.
        op: CmpOp,
        /// The constant.
        constant: f64,
    },
    /// Linear, delta or integer runs: `value op constant` on the decoded
    /// integers (linear and delta a batch at a time, runs once per run).
    Ints {
        /// The comparison.
        op: CmpOp,
        /// The constant (an integer or timestamp).
        constant: i64,
    },
    /// Run-length dictionary codes: the runs whose code is marked.
    DictRuns {
        /// Indexed by dictionary code.
        member: Vec<bool>,
    },
    /// FSST: compressed bytes equal (or not) to the compressed constant.
    FsstEq {
        /// The constant.
        value: String,
        /// `<>` instead of `=`.
        negated: bool,
    },
    /// FSST: compressed bytes equal to one of the compressed constants.
    FsstIn {
        /// The constants.
        values: Vec<String>,
    },
    /// FSST: `<`, `<=`, `>`, `>=` a constant, decoding each row only up to
    /// its first byte that differs from the constant.
    FsstCmp {
        /// The constant.
        value: String,
        /// The comparison.
        op: CmpOp,
    },
    /// FSST: `[NOT] LIKE 'prefix%'`, decoding each row only up to the prefix.
    FsstPrefix {
        /// The prefix.
        prefix: String,
        /// `NOT LIKE`.
        negated: bool,
    },
    /// FSST: any other `[NOT] LIKE`, on rows decoded a batch at a time
    /// into one reused buffer.
    FsstLike {
        /// The compiled pattern.
        pattern: LikePattern,
        /// `NOT LIKE`.
        negated: bool,
    },
    /// Hex points: both coordinates equal (or not) to the constant's.
    HexEq {
        /// The constant.
        value: String,
        /// `<>` instead of `=`.
        negated: bool,
    },
    /// Any of these (an `IN` list on a codec without a set kernel).
    AnyOf(Vec<CodecFilter>),
    /// Every non-NULL row (e.g. `int_column <> 2.5`).
    AllValid,
    /// No row (e.g. `int_column = 2.5`).
    Nothing,
}

fn cmp_op(op: BinaryOp) -> Option<CmpOp> {
    Some(match op {
        BinaryOp::Eq => CmpOp::Eq,
        BinaryOp::NotEq => CmpOp::Ne,
        BinaryOp::Lt => CmpOp::Lt,
        BinaryOp::LtEq => CmpOp::Le,
        BinaryOp::Gt => CmpOp::Gt,
        BinaryOp::GtEq => CmpOp::Ge,
        _ => return None,
    })
}

/// `x op k` for integers `x` as a comparison with an integer constant (or
/// a verdict), exact for a float `k`: `x < 2.5` is `x <= 2`, `x = 2.5`
/// matches nothing. `None` when `k` is not a number or lies beyond i64.
fn int_compare(op: CmpOp, k: &Value) -> Option<CodecFilter> {
    let ints = |op, constant| CodecFilter::Ints { op, constant };
    match k {
        Value::Int(c) | Value::Timestamp(c) | Value::Date(c) | Value::Interval(c) => {
            Some(ints(op, *c))
        }
        Value::Float(f) if f.is_finite() && f.abs() < 9.0e18 => {
            if f.fract() == 0.0 {
                return Some(ints(op, *f as i64));
            }
            Some(match op {
                CmpOp::Eq => CodecFilter::Nothing,
                CmpOp::Ne => CodecFilter::AllValid,
                CmpOp::Lt | CmpOp::Le => ints(CmpOp::Le, f.floor() as i64),
                CmpOp::Gt | CmpOp::Ge => ints(CmpOp::Ge, f.ceil() as i64),
            })
        }
        _ => None,
    }
}

/// Compiles `column op k` for a compressed column; `None` leaves it to the
/// general path. Also returns how it runs, for EXPLAIN.
pub fn compile_compare(col: &Column, op: BinaryOp, k: &Value) -> Option<(CodecFilter, String)> {
    let op = cmp_op(op)?;
    match &col.data {
        ColumnData::Alp(a) => {
            let constant = k.as_f64()?;
            let pred = a.code_predicate(op, constant);
            Some((
                CodecFilter::Alp { pred, op, constant },
                format!(
                    "ALP {} codes against the constant's exact code bounds, {} exceptions in f64",
                    a.codes().width_name(),
                    a.exceptions().0.len()
                ),
            ))
        }
        ColumnData::Single(f) => {
            let constant = k.as_f64()?;
            let pred = f.code_predicate(op, constant);
            Some((
                CodecFilter::Single { pred, op, constant },
                format!(
                    "f32 {} codes against the constant's exact code bounds, {} exceptions in f64",
                    f.codes().width_name(),
                    f.exceptions().0.len()
                ),
            ))
        }
        ColumnData::FloatRuns(r) => Some((
            CodecFilter::FloatRuns {
                op,
                constant: k.as_f64()?,
            },
            format!(
                "run-length floats, {} runs compared once each",
                r.run_count()
            ),
        )),
        ColumnData::Linear(_) | ColumnData::Delta(_) | ColumnData::Runs(_) => {
            let f = int_compare(op, k)?;
            let how = match &col.data {
                ColumnData::Linear(l) if l.is_exact() => {
                    "exact line: matching rows by arithmetic".to_string()
                }
                ColumnData::Linear(_) => "line plus residuals, decoded a batch at a time".into(),
                ColumnData::Delta(_) => "deltas decoded a batch at a time".into(),
                ColumnData::Runs(r) => {
                    format!(
                        "run-length integers, {} runs compared once each",
                        r.run_count()
                    )
                }
                _ => unreachable!("an integer codec"),
            };
            Some((f, how))
        }
        ColumnData::DictRuns { dict, .. } => {
            let Value::Str(s) = k else { return None };
            let member: Vec<bool> = dict
                .values()
                .iter()
                .map(|e| op.holds(e.as_bytes().cmp(s.as_bytes())))
                .collect();
            Some((
                CodecFilter::DictRuns { member },
                // The run count varies by partition; it stays out of the
                // line so that partitions alike share an EXPLAIN shape.
                "dictionary entries compared once, then the runs of codes".to_string(),
            ))
        }
        ColumnData::Fsst(_) => {
            let Value::Str(s) = k else { return None };
            let negated = match op {
                CmpOp::Eq => false,
                CmpOp::Ne => true,
                _ => {
                    return Some((
                        CodecFilter::FsstCmp {
                            value: s.to_string(),
                            op,
                        },
                        "FSST rows decoded only up to their first byte that differs from the constant"
                            .into(),
                    ));
                }
            };
            Some((
                CodecFilter::FsstEq {
                    value: s.to_string(),
                    negated,
                },
                "FSST compressed bytes against the compressed constant".into(),
            ))
        }
        ColumnData::HexPoints(_) => {
            let Value::Str(s) = k else { return None };
            let negated = match op {
                CmpOp::Eq => false,
                CmpOp::Ne => true,
                _ => return None,
            };
            Some((
                CodecFilter::HexEq {
                    value: s.to_string(),
                    negated,
                },
                "hex points: both coordinates against the constant's".into(),
            ))
        }
        _ => None,
    }
}

/// The longest IN list a compressed codec answers with one equality pass
/// per value.
const MAX_IN_PASSES: usize = 8;

/// Compiles `column IN (values)` (no NULL among them) for a compressed
/// column; `None` leaves it to the general path.
pub fn compile_in(col: &Column, values: &[&Value]) -> Option<(CodecFilter, String)> {
    match &col.data {
        ColumnData::Fsst(_) => {
            let values: Option<Vec<String>> = values
                .iter()
                .map(|v| match v {
                    Value::Str(s) => Some(s.to_string()),
                    _ => None,
                })
                .collect();
            Some((
                CodecFilter::FsstIn { values: values? },
                "FSST compressed bytes against the compressed list".into(),
            ))
        }
        ColumnData::DictRuns { dict, runs } => {
            let mut member = vec![false; dict.len()];
            for v in values {
                let Value::Str(s) = v else { return None };
                if let Some(c) = dict.code_of(s) {
                    member[c as usize] = true;
                }
            }
            Some((
                CodecFilter::DictRuns { member },
                format!(
                    "dictionary codes against a code set, {} runs",
                    runs.run_count()
                ),
            ))
        }
        // Each value would be a pass over the codec: a long list is
        // decoded once and searched by the general path instead (TPC-H
        // Q20's 2,127 part keys on a delta column: 1.15 s -> a few ms).
        _ if values.len() > MAX_IN_PASSES => None,
        _ => {
            let mut any = Vec::with_capacity(values.len());
            let mut how = String::new();
            for v in values {
                let (f, h) = compile_compare(col, BinaryOp::Eq, v)?;
                any.push(f);
                how = h;
            }
            Some((CodecFilter::AnyOf(any), format!("each list value: {how}")))
        }
    }
}

/// Compiles `column [NOT] LIKE pattern` for a compressed string column:
/// run-length dictionary codes match each entry once; FSST takes a plain
/// prefix pattern (`'abc%'`). `None` leaves it to the general path.
pub fn compile_like(col: &Column, pattern: &str, negated: bool) -> Option<(CodecFilter, String)> {
    match &col.data {
        ColumnData::DictRuns { dict, .. } => {
            let p = LikePattern::compile(pattern);
            let member = dict
                .values()
                .iter()
                .map(|e| p.matches(e) != negated)
                .collect();
            Some((
                CodecFilter::DictRuns { member },
                "LIKE on each dictionary entry once, then a run at a time".into(),
            ))
        }
        ColumnData::Fsst(_) => match pattern.strip_suffix('%') {
            Some(prefix) if !prefix.contains(['%', '_']) => Some((
                CodecFilter::FsstPrefix {
                    prefix: prefix.to_string(),
                    negated,
                },
                "FSST rows decoded only as far as the prefix".into(),
            )),
            _ => Some((
                CodecFilter::FsstLike {
                    pattern: LikePattern::compile(pattern),
                    negated,
                },
                "FSST rows decoded a batch at a time into one buffer".into(),
            )),
        },
        _ => None,
    }
}

impl CodecFilter {
    /// Evaluates the filter on `col`, which it was compiled for, as mask
    /// words (bit `j` of word `w` is row `64·w + j`; NULL rows and bits
    /// past the column's length are 0).
    pub fn mask(&self, col: &Column) -> Vec<u64> {
        let dense = col.packed_validity();
        let v = dense.as_deref();
        match (self, &col.data) {
            (CodecFilter::Alp { pred, op, constant }, ColumnData::Alp(a)) => {
                code_mask(a.codes(), a.exceptions(), pred, *op, *constant, v)
            }
            (CodecFilter::Single { pred, op, constant }, ColumnData::Single(f)) => {
                code_mask(f.codes(), f.exceptions(), pred, *op, *constant, v)
            }
            (CodecFilter::FloatRuns { op, constant }, ColumnData::FloatRuns(r)) => {
                r.filter(*op, *constant, v)
            }
            (CodecFilter::Ints { op, constant }, data) => match data {
                ColumnData::Linear(l) if l.is_exact() => linear_mask(l, *op, *constant, v),
                ColumnData::Linear(l) => l.filter(*op, *constant, v),
                ColumnData::Delta(d) => d.filter(*op, *constant, v),
                ColumnData::Runs(r) => r.filter(*op, *constant, v),
                _ => unexpected(col),
            },
            (CodecFilter::DictRuns { member }, ColumnData::DictRuns { runs, .. }) => {
                let mut ranges: Vec<Range<usize>> = Vec::new();
                for (code, rows) in runs.runs() {
                    if member.get(code as usize).copied().unwrap_or(false) {
                        match ranges.last_mut() {
                            Some(last) if last.end == rows.start => last.end = rows.end,
                            _ => ranges.push(rows),
                        }
                    }
                }
                mask_from_ranges(col.len, &ranges, v)
            }
            (CodecFilter::FsstEq { value, negated }, ColumnData::Fsst(f)) => {
                f.filter_eq(value, *negated, v)
            }
            (CodecFilter::FsstIn { values }, ColumnData::Fsst(f)) => {
                let values: Vec<&str> = values.iter().map(String::as_str).collect();
                f.filter_in(&values, v)
            }
            (CodecFilter::FsstCmp { value, op }, ColumnData::Fsst(f)) => {
                f.filter_cmp(value, |o| op.holds(o), v)
            }
            (CodecFilter::FsstPrefix { prefix, negated }, ColumnData::Fsst(f)) => {
                let mut words = f.filter_prefix(prefix, None);
                if *negated {
                    for w in &mut words {
                        *w = !*w;
                    }
                }
                and_validity(&mut words, col.len, v);
                words
            }
            (CodecFilter::FsstLike { pattern, negated }, ColumnData::Fsst(f)) => {
                let mut words = vec![0u64; col.len.div_ceil(64)];
                let mut batch = StringBatch::new();
                let mut start = 0;
                while start < col.len {
                    let end = (start + BATCH_ROWS).min(col.len);
                    batch.clear();
                    f.decode_range(start..end, &mut batch);
                    let (bytes, ends) = batch.parts();
                    pattern.for_each_match(bytes, ends, |j| {
                        let r = start + j;
                        words[r / 64] |= 1 << (r % 64);
                    });
                    if *negated {
                        flip_range(&mut words, start..end);
                    }
                    start = end;
                }
                and_validity(&mut words, col.len, v);
                words
            }
            (CodecFilter::HexEq { value, negated }, ColumnData::HexPoints(p)) => {
                p.filter_eq(value, *negated, v)
            }
            (CodecFilter::AnyOf(filters), _) => {
                let mut words = vec![0u64; col.len.div_ceil(64)];
                for f in filters {
                    for (w, m) in words.iter_mut().zip(f.mask(col)) {
                        *w |= m;
                    }
                }
                words
            }
            (CodecFilter::AllValid, _) => {
                let mut words = vec![u64::MAX; col.len.div_ceil(64)];
                and_validity(&mut words, col.len, v);
                words
            }
            (CodecFilter::Nothing, _) => vec![0; col.len.div_ceil(64)],
            _ => unexpected(col),
        }
    }
}

impl CodecFilter {
    /// True when [`CodecFilter::block_mask`] evaluates this filter a 64-row
    /// block at a time (cheaply enough that blocks an earlier step emptied
    /// are worth skipping); the others yield the whole partition's mask
    /// words through [`CodecFilter::mask`].
    pub fn per_block(&self) -> bool {
        matches!(
            self,
            CodecFilter::Alp { .. } | CodecFilter::Single { .. } | CodecFilter::DictRuns { .. }
        )
    }

    /// True when the filter decodes every row it tests (FSST `LIKE` of a
    /// pattern that is not a prefix): it runs after the cheaper steps, on
    /// the rows they left ([`CodecFilter::select_rows`]).
    pub fn decodes_rows(&self) -> bool {
        matches!(self, CodecFilter::FsstLike { .. })
    }

    /// The rows of `selection` (ascending) that pass, reading only those
    /// rows: the FSST filters (LIKE decodes them a batch at a time; the
    /// others test their compressed bytes). `None` for the other filters
    /// (use [`CodecFilter::mask`]).
    pub fn select_rows(&self, col: &Column, selection: &[u32]) -> Option<Vec<u32>> {
        let ColumnData::Fsst(f) = &col.data else {
            return None;
        };
        let dense = col.packed_validity();
        let valid = |r: u32| dense.as_deref().is_none_or(|b| b.get(r as usize));
        let mut rows = match self {
            CodecFilter::FsstEq { value, negated } => {
                f.select(selection, f.eq_test(value, *negated))
            }
            CodecFilter::FsstIn { values } => {
                let values: Vec<&str> = values.iter().map(String::as_str).collect();
                f.select(selection, f.in_test(&values))
            }
            CodecFilter::FsstCmp { value, op } => {
                f.select(selection, f.cmp_test(value, |o| op.holds(o)))
            }
            CodecFilter::FsstPrefix { prefix, negated } => {
                let test = f.prefix_test(prefix);
                f.select(selection, |codes| test(codes) != *negated)
            }
            CodecFilter::FsstLike { pattern, negated } => {
                like_rows(f, pattern, *negated, selection)
            }
            _ => return None,
        };
        rows.retain(|&r| valid(r));
        Some(rows)
    }

    /// Rows `start..end` (at most 64, `start` a multiple of 64) of `col`
    /// passing the filter, as a mask (bit `j` is row `start + j`), validity
    /// not applied; for the filters [`CodecFilter::per_block`] accepts (0
    /// for the others).
    pub fn block_mask(&self, col: &Column, start: usize, end: usize) -> u64 {
        match (self, &col.data) {
            (CodecFilter::Alp { pred, op, constant }, ColumnData::Alp(a)) => {
                code_block_mask(a.codes(), a.exceptions(), pred, *op, *constant, start..end)
            }
            (CodecFilter::Single { pred, op, constant }, ColumnData::Single(f)) => {
                code_block_mask(f.codes(), f.exceptions(), pred, *op, *constant, start..end)
            }
            (CodecFilter::DictRuns { member }, ColumnData::DictRuns { runs, .. }) => {
                let (ends, values) = (runs.ends(), runs.values());
                let mut mask = 0u64;
                let mut k = runs.run_of(start);
                let mut at = start;
                while at < end && k < ends.len() {
                    let run_end = (ends[k] as usize).min(end);
                    if member.get(values[k] as usize).copied().unwrap_or(false) {
                        let n = run_end - at;
                        let bits = crate::kernel::low_bits(n);
                        mask |= bits << (at - start);
                    }
                    at = run_end;
                    k += 1;
                }
                mask
            }
            _ => {
                debug_assert!(false, "no block kernel for {}", col.encoding_name());
                0
            }
        }
    }
}

/// A filter run on a column it was not compiled for: a bug; no row matches
/// (debug builds stop).
fn unexpected(col: &Column) -> Vec<u64> {
    debug_assert!(false, "codec filter on {}", col.encoding_name());
    vec![0; col.len.div_ceil(64)]
}

/// Inverts the bits of rows `rows` in mask `words`.
fn flip_range(words: &mut [u64], rows: Range<usize>) {
    for r in rows {
        words[r / 64] ^= 1 << (r % 64);
    }
}

/// ANDs `words` with the validity and clears the bits past `len`.
fn and_validity(words: &mut [u64], len: usize, validity: Option<&Bitmap>) {
    if let Some(v) = validity {
        v.and_into(words);
    }
    if !len.is_multiple_of(64)
        && let Some(last) = words.last_mut()
    {
        *last &= (1u64 << (len % 64)) - 1;
    }
}

/// Where table row `row` is among the selected `rows` (its batch
/// position), or `None` when it is not selected.
pub(crate) fn selected_at(rows: Rows<'_>, row: u32) -> Option<usize> {
    match rows.sel {
        None => Some(row as usize),
        Some(sel) => sel.binary_search(&row).ok(),
    }
}

/// Calls `f(j, row, code)` for the `j`-th of `rows` of an ALP column, in
/// order: a range reads the codes in place or unpacks them a batch at a
/// time, a selection gathers them (see [`crate::store::AlpCodes`]).
#[inline]
pub(crate) fn for_each_alp_code(a: &Alp, rows: Rows<'_>, mut f: impl FnMut(usize, usize, u64)) {
    match (rows.range(), rows.sel) {
        (Some(range), _) => {
            let start = range.start;
            a.codes().for_each(range, |i, code| f(i - start, i, code));
        }
        (None, Some(sel)) => a
            .codes()
            .for_each_selected(sel, |j, code| f(j, sel[j] as usize, code)),
        (None, None) => unreachable!("rows without a selection are a range"),
    }
}

/// ALP or f32 codes (order-preserving, with f64 exceptions): codes against
/// the code predicate, branch-free a 64-row block at a time, then each
/// exception row compared in f64.
fn code_mask(
    codes: &AlpCodes,
    (rows, values): (&[u32], &[f64]),
    pred: &CodePredicate,
    op: CmpOp,
    c: f64,
    v: Option<&Bitmap>,
) -> Vec<u64> {
    let (lo, span) = (
        pred.codes.start,
        pred.codes.end.saturating_sub(pred.codes.start),
    );
    let negated = pred.negated;
    let len = codes.len();
    let mut words = Vec::with_capacity(len.div_ceil(64));
    codes.block_masks(
        0..len,
        |x| (x.wrapping_sub(lo) < span) != negated,
        &mut words,
    );
    for (&row, &x) in rows.iter().zip(values) {
        let (w, b) = (row as usize / 64, row as usize % 64);
        let hit = op.holds(cmp_f64(x, c)) as u64;
        words[w] = (words[w] & !(1 << b)) | (hit << b);
    }
    and_validity(&mut words, len, v);
    words
}

/// [`code_mask`] of the rows `block` (at most 64, validity not applied):
/// bit `j` is row `block.start + j`.
fn code_block_mask(
    codes: &AlpCodes,
    (rows, values): (&[u32], &[f64]),
    pred: &CodePredicate,
    op: CmpOp,
    c: f64,
    block: Range<usize>,
) -> u64 {
    let (lo, span) = (
        pred.codes.start,
        pred.codes.end.saturating_sub(pred.codes.start),
    );
    let negated = pred.negated;
    let (start, end) = (block.start, block.end);
    let mut mask = codes.block_mask(block, |x| (x.wrapping_sub(lo) < span) != negated);
    let first = rows.partition_point(|&r| (r as usize) < start);
    for (&row, &x) in rows[first..].iter().zip(&values[first..]) {
        let row = row as usize;
        if row >= end {
            break;
        }
        let b = row - start;
        let hit = op.holds(cmp_f64(x, c)) as u64;
        mask = (mask & !(1 << b)) | (hit << b);
    }
    mask
}

/// An exact line `base + step·row`: the matching rows form at most two
/// ranges (`<>` excludes one row), found by arithmetic.
fn linear_mask(l: &crate::store::Linear, op: CmpOp, c: i64, v: Option<&Bitmap>) -> Vec<u64> {
    let n = l.len();
    // Rows whose value is below / at most c, counted from the low end of
    // the line (rows ascend in value when step >= 0).
    let (base, step) = (l.base() as i128, l.step() as i128);
    let c = c as i128;
    let ascending = step >= 0;
    // Number of rows i in 0..n with value(i) < c (resp. <= c).
    let count_below = |strict: bool| -> usize {
        if step == 0 {
            let holds = if strict { base < c } else { base <= c };
            return if holds { n } else { 0 };
        }
        // value(i) < c  ⇔  step·i < c - base.
        let bound = c - base;
        let i_lim = if ascending {
            // i < bound/step (strict) or i <= bound/step.
            let q = bound.div_euclid(step);
            let exact = bound.rem_euclid(step) == 0;
            if strict {
                if exact { q } else { q + 1 }
            } else {
                q + 1
            }
        } else {
            // step < 0: value decreases; value(i) < c ⇔ i > (c - base)/step.
            let s = -step;
            let bound = base - c; // value(i) < c ⇔ s·i > base - c
            let q = bound.div_euclid(s);
            let exact = bound.rem_euclid(s) == 0;
            // rows i with s·i > bound (strict) or s·i >= bound.
            let first = if strict {
                q + 1
            } else if exact {
                q
            } else {
                q + 1
            };
            n as i128 - first.clamp(0, n as i128)
        };
        i_lim.clamp(0, n as i128) as usize
    };
    let (lt, le) = (count_below(true), count_below(false));
    // Rows with value < c: the first `lt` rows ascending, the last `lt`
    // descending; likewise for <= c.
    let low = |k: usize| -> Range<usize> { if ascending { 0..k } else { n - k..n } };
    let high = |k: usize| -> Range<usize> { if ascending { k..n } else { 0..n - k } };
    let eq = if ascending { lt..le } else { n - le..n - lt };
    let ranges: Vec<Range<usize>> = match op {
        CmpOp::Lt => vec![low(lt)],
        CmpOp::Le => vec![low(le)],
        CmpOp::Gt => vec![high(le)],
        CmpOp::Ge => vec![high(lt)],
        CmpOp::Eq => vec![eq],
        CmpOp::Ne => vec![0..eq.start, eq.end..n],
    };
    let ranges: Vec<Range<usize>> = ranges.into_iter().filter(|r| !r.is_empty()).collect();
    mask_from_ranges(n, &ranges, v)
}

// ---------------------------------------------------------------------------
// Group keys

/// Group-key codes of a run-length dictionary column at the selected rows:
/// each row's dictionary code, expanded a run at a time; with NULLs in the
/// column, NULL is code 0 and every other code is shifted up by one (as
/// `exec::aggregate`'s packed key codes). `None` for other codecs.
pub fn dict_run_key_codes(col: &Column, rows: Rows<'_>) -> Option<Vec<u64>> {
    let ColumnData::DictRuns { runs, .. } = &col.data else {
        return None;
    };
    let mut codes = Vec::with_capacity(rows.len);
    match rows.sel {
        None => runs.decode_range(0..rows.len, &mut codes),
        Some(sel) => runs.decode_selection(sel, &mut codes),
    }
    Some(match col.packed_validity().as_deref() {
        None => codes.into_iter().map(|c| c as u64).collect(),
        Some(v) => codes
            .into_iter()
            .enumerate()
            .map(|(j, c)| if v.get(rows.row(j)) { c as u64 + 1 } else { 0 })
            .collect(),
    })
}

// ---------------------------------------------------------------------------
// Sums

/// Whether [`group_sums`] reads `col` in place for `sum`/`avg`.
pub fn sums_in_place(col: &Column) -> bool {
    match &col.data {
        ColumnData::Alp(_) | ColumnData::FloatRuns(_) => true,
        ColumnData::Linear(_)
        | ColumnData::Delta(_)
        | ColumnData::Runs(_)
        | ColumnData::IntDict { .. } => col.dtype == DataType::Int,
        _ => false,
    }
}

/// Per-group sums and counts of the valid rows of a column, from
/// [`group_sums`].
#[derive(Debug, Clone, PartialEq)]
pub enum GroupSums {
    /// Integers, exactly: group `g` sums to `base · counts[g] +
    /// offsets[g]` (`base` is the partition minimum, so offsets are not
    /// negative).
    Ints {
        /// The partition minimum.
        base: i64,
        /// Valid rows per group.
        counts: Vec<u64>,
        /// Σ (value − base) per group.
        offsets: Vec<u128>,
    },
    /// ALP decimals, exactly: group `g` sums to `digits[g] · 10^exponent`
    /// plus `exceptions[g]`, the rows ALP keeps as f64 (summed in f64).
    Decimals {
        /// Σ digits per group over its non-exception rows.
        digits: Vec<i128>,
        /// The power of ten of the digits (the partition's ALP exponent).
        exponent: i8,
        /// f64 sum of the exception rows per group; empty when the
        /// partition has no exception.
        exceptions: Vec<f64>,
        /// Valid rows per group, exceptions included.
        counts: Vec<u64>,
    },
    /// Floats: the sum of group `g` as one f64.
    Floats {
        /// Sum per group.
        sums: Vec<f64>,
        /// Valid rows per group.
        counts: Vec<u64>,
    },
}

/// Sums the valid selected rows of `col` (a codec [`sums_in_place`] takes)
/// per group: row `j` of `rows` belongs to group `gids[j]`, or every row to
/// group 0 when `gids` is `None`; `groups` groups in all.
///
/// ALP sums digits exactly (i128) per group and hands them on unscaled,
/// with the exceptions summed in f64 beside them, so that partitions add
/// up exactly and the total is scaled once; float runs add `value · rows`
/// per run when every row is summed; integer codecs sum exactly.
pub fn group_sums(col: &Column, rows: Rows<'_>, gids: Option<&[u32]>, groups: usize) -> GroupSums {
    let dense = col.packed_validity();
    let v = dense.as_deref();
    let groups = groups.max(1);
    let gid = |j: usize| gids.map_or(0, |g| g[j] as usize);
    let valid = |i: usize| v.is_none_or(|b| b.get(i));
    match &col.data {
        ColumnData::IntDict { values, codes } => {
            int_dict_sums(values, codes, v, rows, gids, groups)
        }
        ColumnData::Alp(a) => {
            if gids.is_none() && rows.sel.is_none() {
                let s = a.sum(v);
                return GroupSums::Decimals {
                    digits: vec![s.decimal.digits],
                    exponent: s.decimal.exponent,
                    exceptions: if s.exception_count == 0 {
                        Vec::new()
                    } else {
                        vec![s.exceptions]
                    },
                    counts: vec![s.decimal.count + s.exception_count],
                };
            }
            // Codes per group (exception rows hold code 0), then the
            // exceptions moved out of the digit sums.
            let mut code_sums = vec![0u128; groups];
            let mut counts = vec![0u64; groups];
            if rows.len as u128 * a.max_code() as u128 <= u64::MAX as u128 {
                // No group's code sum can pass a u64: one add per row (not
                // a u128 add), the sum beside its count.
                let mut acc = vec![(0u64, 0u64); groups];
                match (gids, v) {
                    // The common case without a test per row (callgrind:
                    // the tests of group and validity were a third of
                    // taxi Q2's sum).
                    (Some(g), None) => for_each_alp_code(a, rows, |j, _, code| {
                        let (sum, count) = &mut acc[g[j] as usize];
                        *sum += code;
                        *count += 1;
                    }),
                    _ => for_each_alp_code(a, rows, |j, i, code| {
                        if valid(i) {
                            let (sum, count) = &mut acc[gid(j)];
                            *sum += code;
                            *count += 1;
                        }
                    }),
                }
                for (g, (sum, count)) in acc.into_iter().enumerate() {
                    (code_sums[g], counts[g]) = (sum as u128, count);
                }
            } else {
                for_each_alp_code(a, rows, |j, i, code| {
                    if valid(i) {
                        let g = gid(j);
                        code_sums[g] += code as u128;
                        counts[g] += 1;
                    }
                });
            }
            let (exc_rows, exc_values) = a.exceptions();
            let mut decimal_counts = counts.clone();
            let mut exceptions = if exc_rows.is_empty() {
                Vec::new()
            } else {
                vec![0.0f64; groups]
            };
            for (&row, &x) in exc_rows.iter().zip(exc_values) {
                let Some(j) = selected_at(rows, row) else {
                    continue;
                };
                if valid(row as usize) {
                    let g = gid(j);
                    decimal_counts[g] -= 1;
                    exceptions[g] += x;
                }
            }
            let digits = (0..groups)
                .map(|g| a.base() as i128 * decimal_counts[g] as i128 + code_sums[g] as i128)
                .collect();
            GroupSums::Decimals {
                digits,
                exponent: a.exponent(),
                exceptions,
                counts,
            }
        }
        ColumnData::FloatRuns(r) if gids.is_none() && rows.sel.is_none() => {
            let (sum, count) = r.sum_f64(v);
            GroupSums::Floats {
                sums: vec![sum],
                counts: vec![count],
            }
        }
        ColumnData::FloatRuns(_) => {
            let values = match rows.sel {
                None => col.decode_range(0..rows.len),
                Some(sel) => col.decode_selection(sel),
            };
            let Decoded::Floats(values) = values else {
                debug_assert!(false, "float runs decode to floats");
                return GroupSums::Floats {
                    sums: vec![0.0; groups],
                    counts: vec![0; groups],
                };
            };
            let mut sums = vec![0.0f64; groups];
            let mut counts = vec![0u64; groups];
            for (j, &x) in values.iter().enumerate() {
                if valid(rows.row(j)) {
                    sums[gid(j)] += x;
                    counts[gid(j)] += 1;
                }
            }
            GroupSums::Floats { sums, counts }
        }
        _ => {
            // Integer codecs: exact i128 totals, then offsets from the
            // partition minimum.
            let base = match col.zone.min {
                Value::Int(m) | Value::Timestamp(m) | Value::Date(m) | Value::Interval(m) => m,
                _ => 0,
            };
            let mut totals = vec![0i128; groups];
            let mut counts = vec![0u64; groups];
            let whole = gids.is_none() && rows.sel.is_none();
            let closed = match &col.data {
                ColumnData::Linear(l) if whole => Some(l.sum(v)),
                ColumnData::Runs(r) if whole => Some(r.sum_i128(v)),
                ColumnData::Runs(r)
                    if rows.range() == Some(0..col.len) && v.is_none() && gids.is_some() =>
                {
                    // A run at a time over the run's slice of group ids: a
                    // count per row, and an add per row only for runs not
                    // of zero (ClickBench's AdvEngineID is nearly all 0; a
                    // test per row for validity and group was most of q10's
                    // sums).
                    let ids = gids.unwrap_or_default();
                    for (x, run) in r.runs() {
                        let ids = &ids[run];
                        for &g in ids {
                            counts[g as usize] += 1;
                        }
                        if x != 0 {
                            for &g in ids {
                                totals[g as usize] += x as i128;
                            }
                        }
                    }
                    None
                }
                ColumnData::Runs(r) if rows.sel.is_none() => {
                    // A run at a time: one group id check per row, one add
                    // per run and group change.
                    for (x, run) in r.runs() {
                        for i in run {
                            if valid(i) {
                                let g = gid(i);
                                totals[g] += x as i128;
                                counts[g] += 1;
                            }
                        }
                    }
                    None
                }
                _ => {
                    const BATCH: usize = crate::store::BATCH_ROWS;
                    let mut buf = Decoded::empty(col.dtype);
                    for start in (0..rows.len).step_by(BATCH) {
                        let end = (start + BATCH).min(rows.len);
                        buf.clear();
                        match rows.sel {
                            None => col.decode_range_into(start..end, &mut buf),
                            Some(sel) => buf = col.decode_selection(&sel[start..end]),
                        }
                        if let Decoded::Ints(xs) = &buf {
                            for (j, &x) in (start..end).zip(xs) {
                                if valid(rows.row(j)) {
                                    let g = gid(j);
                                    totals[g] += x as i128;
                                    counts[g] += 1;
                                }
                            }
                        }
                    }
                    None
                }
            };
            if let Some((total, count)) = closed {
                totals[0] = total;
                counts[0] = count;
            }
            let offsets = totals
                .iter()
                .zip(&counts)
                .map(|(&t, &n)| (t - base as i128 * n as i128) as u128)
                .collect();
            GroupSums::Ints {
                base,
                counts,
                offsets,
            }
        }
    }
}

/// [`group_sums`] of an integer dictionary: every row adds its value's
/// distance from the smallest value, in u64 while no group's sum can pass
/// a u64, else in u128. Over a whole range into one group, four running
/// sums take the rows in turn (one add chain would wait on itself each
/// row), and the NULL rows (code 0, distance 0) add nothing.
fn int_dict_sums(
    values: &[i64],
    codes: &Codes,
    validity: Option<&Bitmap>,
    rows: Rows<'_>,
    gids: Option<&[u32]>,
    groups: usize,
) -> GroupSums {
    let base = values.first().copied().unwrap_or(0);
    let deltas: Vec<u64> = values
        .iter()
        .map(|&x| x.wrapping_sub(base) as u64)
        .collect();
    let mut counts = vec![0u64; groups];
    let mut offsets = vec![0u128; groups];
    let max = deltas.last().copied().unwrap_or(0);
    let fits_u64 = rows.len as u128 * max as u128 <= u64::MAX as u128;
    if let (None, Some(r)) = (gids, rows.range()) {
        let nulls = validity.map_or(0, |b| r.len() - b.count_ones_in(r.clone()));
        offsets[0] = with_codes!(codes, c => {
            let chunks = c[r.clone()].chunks_exact(4);
            let rest = chunks.remainder();
            if fits_u64 {
                let mut lanes = [0u64; 4];
                for q in chunks {
                    for (lane, x) in lanes.iter_mut().zip(q) {
                        *lane += deltas[x.to_usize()];
                    }
                }
                let tail: u64 = rest.iter().map(|x| deltas[x.to_usize()]).sum();
                (lanes.iter().sum::<u64>() + tail) as u128
            } else {
                let mut lanes = [0u128; 4];
                for q in chunks {
                    for (lane, x) in lanes.iter_mut().zip(q) {
                        *lane += deltas[x.to_usize()] as u128;
                    }
                }
                let tail: u128 = rest.iter().map(|x| deltas[x.to_usize()] as u128).sum();
                lanes.iter().sum::<u128>() + tail
            }
        });
        counts[0] = (r.len() - nulls) as u64;
        return GroupSums::Ints {
            base,
            counts,
            offsets,
        };
    }
    let gid = |j: usize| gids.map_or(0, |g| g[j] as usize);
    let valid = |i: usize| validity.is_none_or(|b| b.get(i));
    if fits_u64 {
        let mut acc = vec![0u64; groups];
        if let (Some(ids), Some(r), None) = (gids, rows.range(), validity) {
            // The common case, without a test per row.
            with_codes!(codes, c => for (&g, x) in ids.iter().zip(&c[r]) {
                acc[g as usize] += deltas[x.to_usize()];
                counts[g as usize] += 1;
            });
        } else {
            with_codes!(codes, c => for j in 0..rows.len {
                let i = rows.row(j);
                if valid(i) {
                    let g = gid(j);
                    acc[g] += deltas[c[i].to_usize()];
                    counts[g] += 1;
                }
            });
        }
        for (o, a) in offsets.iter_mut().zip(acc) {
            *o = a as u128;
        }
    } else {
        with_codes!(codes, c => for j in 0..rows.len {
            let i = rows.row(j);
            if valid(i) {
                let g = gid(j);
                offsets[g] += deltas[c[i].to_usize()] as u128;
                counts[g] += 1;
            }
        });
    }
    GroupSums::Ints {
        base,
        counts,
        offsets,
    }
}

/// The rows of `selection` whose string matches `pattern` (`negated`: does
/// not), decoded a batch at a time; validity is not applied (a NULL row
/// reads as `''`).
fn like_rows(f: &Fsst, pattern: &LikePattern, negated: bool, selection: &[u32]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut batch = StringBatch::new();
    for chunk in selection.chunks(BATCH_ROWS) {
        batch.clear();
        f.decode_selection(chunk, &mut batch);
        out.extend(
            chunk
                .iter()
                .enumerate()
                .filter(|&(j, _)| pattern.matches_bytes(batch.bytes(j)) != negated)
                .map(|(_, &r)| r),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::DecimalSum;
    use crate::types::DataType;

    fn valid_bits(words: &[u64], n: usize) -> Vec<bool> {
        (0..n)
            .map(|i| (words[i / 64] >> (i % 64)) & 1 == 1)
            .collect()
    }

    /// The oracle: the plain value of each row compared with `plan::eval`'s
    /// comparison.
    fn oracle(col: &Column, op: BinaryOp, k: &Value) -> Vec<bool> {
        (0..col.len)
            .map(|i| {
                let x = col.value(i);
                !x.is_null()
                    && crate::plan::eval::compare(
                        op,
                        match (&x, k) {
                            (Value::Float(a), _) => cmp_f64(*a, k.as_f64().unwrap()),
                            (
                                Value::Int(a)
                                | Value::Timestamp(a)
                                | Value::Date(a)
                                | Value::Interval(a),
                                Value::Float(b),
                            ) => crate::types::cmp_i64_f64(*a, *b),
                            _ => x.total_cmp(k),
                        },
                    )
            })
            .collect()
    }

    /// Block masks (ANDed with validity) agree with the whole mask.
    fn check_blocks(f: &CodecFilter, col: &Column) {
        if !f.per_block() {
            return;
        }
        let words = f.mask(col);
        for (block, &word) in words.iter().enumerate() {
            let start = block * 64;
            let end = (start + 64).min(col.len);
            let v = col.validity.as_ref().map_or(u64::MAX, |b| b.word(block));
            assert_eq!(f.block_mask(col, start, end) & v, word, "block {block}");
        }
    }

    const OPS: [BinaryOp; 6] = [
        BinaryOp::Eq,
        BinaryOp::NotEq,
        BinaryOp::Lt,
        BinaryOp::LtEq,
        BinaryOp::Gt,
        BinaryOp::GtEq,
    ];

    fn columns() -> Vec<Column> {
        let n = 3000usize;
        let validity = Bitmap::from_bools(&(0..n).map(|i| i % 7 != 3).collect::<Vec<_>>());
        let mut out = Vec::new();
        for v in [None, Some(validity)] {
            for ints in [
                (0..n as i64).map(|i| 100 + 3 * i).collect::<Vec<_>>(),
                (0..n as i64).map(|i| 5000 - 2 * i).collect(),
                (0..n as i64).map(|i| i * 5 + (i * 7919) % 3).collect(),
                (0..n as i64).map(|i| (i / 400) * 10).collect(),
                (0..n as i64)
                    .scan(0, |t, i| {
                        *t += ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 59) as i64;
                        Some(*t)
                    })
                    .collect(),
            ] {
                out.push(Column::encode_ints(DataType::Int, &ints, v.clone()));
            }
            let mut money: Vec<f64> = (0..n)
                .map(|i| ((i * 7919) % 10_000) as f64 / 100.0)
                .collect();
            money[10] = f64::NAN;
            money[11] = -0.0;
            money[12] = f64::INFINITY;
            money[13] = 0.1 + 0.2;
            out.push(Column::encode_floats(money, v.clone()));
            let runs: Vec<f64> = (0..n).map(|i| (i / 500) as f64 * 0.5).collect();
            out.push(Column::encode_floats(runs, v.clone()));
        }
        out
    }

    #[test]
    fn comparisons_on_codes_match_the_values() {
        let cols = columns();
        let names: Vec<String> = cols.iter().map(Column::encoding_name).collect();
        for want in ["linear", "linear+", "rle", "delta", "alp"] {
            assert!(
                names.iter().any(|n| n.starts_with(want)),
                "{want}: {names:?}"
            );
        }
        for col in &cols {
            let probes: Vec<Value> = match col.dtype {
                DataType::Float => [
                    -1.0,
                    0.0,
                    0.3,
                    0.30000000000000004,
                    12.34,
                    12.345,
                    50.0,
                    99.99,
                    1e9,
                ]
                .into_iter()
                .map(Value::Float)
                .chain([Value::Int(3)])
                .collect(),
                _ => [-7, 0, 100, 103, 104, 1000, 4999, 5000, 9097, 100_000]
                    .into_iter()
                    .map(Value::Int)
                    .chain([Value::Float(103.5), Value::Float(-0.5), Value::Float(1e30)])
                    .collect(),
            };
            for k in &probes {
                for op in OPS {
                    let Some((f, _)) = compile_compare(col, op, k) else {
                        assert!(matches!(k, Value::Float(x) if x.abs() > 1e18), "{k:?}");
                        continue;
                    };
                    let got = valid_bits(&f.mask(col), col.len);
                    assert_eq!(
                        got,
                        oracle(col, op, k),
                        "{} {op:?} {k:?}",
                        col.encoding_name()
                    );
                    check_blocks(&f, col);
                }
            }
        }
    }

    #[test]
    fn string_codecs_filter_on_compressed_form() {
        let n = 2000usize;
        let urls: Vec<String> = (0..n)
            .map(|i| format!("https://example.com/a/{}/{}", i % 37, i * 7))
            .collect();
        let runs: Vec<String> = (0..n)
            .map(|i| ["b", "a", "c"][i / 300 % 3].into())
            .collect();
        let validity = Bitmap::from_bools(&(0..n).map(|i| i % 5 != 1).collect::<Vec<_>>());
        // On the rows of a selection, FSST filters answer by reading only
        // those rows; the others leave it to the mask.
        let sel: Vec<u32> = (0..n as u32).filter(|i| i % 3 != 0).collect();
        let check_selection = |f: &CodecFilter, col: &Column, want: &[bool], what: &str| match f
            .select_rows(col, &sel)
        {
            Some(picked) => {
                let want: Vec<u32> = sel.iter().copied().filter(|&r| want[r as usize]).collect();
                assert_eq!(picked, want, "{what} on a selection");
            }
            None => assert!(
                !matches!(col.data, ColumnData::Fsst(_)),
                "{what}: an FSST filter without a selection form"
            ),
        };
        for owned in [&urls, &runs] {
            let values: Vec<&str> = owned.iter().map(String::as_str).collect();
            for v in [None, Some(validity.clone())] {
                let col = Column::encode_strings(&values, v);
                assert!(is_compressed(&col), "{}", col.encoding_name());
                for k in [values[14], values[1999], "a", "zz", ""] {
                    let kv = Value::str(k);
                    for op in OPS {
                        if let Some((f, _)) = compile_compare(&col, op, &kv) {
                            let got = valid_bits(&f.mask(&col), n);
                            let want = oracle(&col, op, &kv);
                            assert_eq!(got, want, "{op:?} {k}");
                            check_blocks(&f, &col);
                            check_selection(&f, &col, &want, &format!("{op:?} {k}"));
                        }
                    }
                }
                let list = [Value::str(values[3]), Value::str("b"), Value::str("nope")];
                let refs: Vec<&Value> = list.iter().collect();
                let (f, _) = compile_in(&col, &refs).expect("IN on a string codec");
                let got = valid_bits(&f.mask(&col), n);
                let want: Vec<bool> = (0..n)
                    .map(|i| col.is_valid(i) && list.contains(&col.value(i)))
                    .collect();
                assert_eq!(got, want);
                check_selection(&f, &col, &want, "IN");
                for (pattern, negated) in [
                    ("https://example.com/a/1%", false),
                    ("a%", true),
                    ("%", false),
                    ("%/3/%", false),
                    ("%/3/%", true),
                    ("%7", false),
                    ("https://example.com/a/2/74", false),
                    ("%exa_ple%/1_/%", false),
                    ("", true),
                ] {
                    if let Some((f, _)) = compile_like(&col, pattern, negated) {
                        let p = LikePattern::compile(pattern);
                        let got = valid_bits(&f.mask(&col), n);
                        let want: Vec<bool> = (0..n)
                            .map(|i| match col.value(i) {
                                Value::Str(s) => p.matches(&s) != negated,
                                _ => false,
                            })
                            .collect();
                        assert_eq!(got, want, "{pattern}");
                        check_selection(&f, &col, &want, pattern);
                    }
                }
            }
        }
    }

    #[test]
    fn run_length_dictionary_key_codes_follow_the_rows() {
        let n = 1000usize;
        let values: Vec<&str> = (0..n).map(|i| ["x", "a", "m"][i / 150 % 3]).collect();
        let validity = Bitmap::from_bools(&(0..n).map(|i| i % 9 != 4).collect::<Vec<_>>());
        for v in [None, Some(validity)] {
            let col = Column::encode_strings(&values, v.clone());
            let ColumnData::DictRuns { dict, .. } = &col.data else {
                panic!("{}", col.encoding_name())
            };
            let sel: Vec<u32> = (0..n as u32).filter(|i| i % 4 != 1).collect();
            for rows in [Rows::all(n), Rows::some(&sel)] {
                let codes = dict_run_key_codes(&col, rows).expect("dict+rle");
                for (j, &c) in codes.iter().enumerate() {
                    let want = match col.value(rows.row(j)) {
                        Value::Str(s) => dict.code_of(&s).unwrap() + v.is_some() as u64,
                        _ => 0,
                    };
                    assert_eq!(c, want);
                }
            }
        }
    }

    #[test]
    fn sums_in_place_match_row_by_row_sums() {
        // Integer dictionaries: values a u64 add can sum, and extremes
        // that need u128.
        let n = 3000usize;
        let validity = Bitmap::from_bools(&(0..n).map(|i| i % 7 != 3).collect::<Vec<_>>());
        let pools: [&[i64]; 2] = [
            &[-5_000_000_000, 17, 3_000_000_001, 9_999_999_999],
            &[i64::MIN, -1, i64::MAX],
        ];
        let mut dicts = Vec::new();
        for pool in pools {
            let ints: Vec<i64> = (0..n).map(|i| pool[(i * 7919) % pool.len()]).collect();
            for v in [None, Some(validity.clone())] {
                let col = Column::encode_ints(DataType::Int, &ints, v);
                assert!(col.encoding_name().starts_with("int dict"));
                dicts.push(col);
            }
        }
        for col in columns().into_iter().chain(dicts) {
            assert!(sums_in_place(&col), "{}", col.encoding_name());
            let sel: Vec<u32> = (0..col.len as u32).filter(|i| i % 3 != 0).collect();
            let gids: Vec<u32> = (0..col.len as u32).map(|i| i % 4).collect();
            let gsel: Vec<u32> = sel.iter().map(|&i| i % 4).collect();
            for (rows, gids, groups) in [
                (Rows::all(col.len), None, 1),
                (Rows::all(col.len), Some(&gids[..]), 4),
                (Rows::some(&sel), None, 1),
                (Rows::some(&sel), Some(&gsel[..]), 4),
            ] {
                let got = group_sums(&col, rows, gids, groups);
                let mut want_f = vec![0.0f64; groups];
                let mut want_i = vec![0i128; groups];
                let mut want_n = vec![0u64; groups];
                for j in 0..rows.len {
                    let g = gids.map_or(0, |g| g[j] as usize);
                    match col.value(rows.row(j)) {
                        Value::Float(x) => {
                            want_f[g] += x;
                            want_n[g] += 1;
                        }
                        Value::Int(x) => {
                            want_i[g] += x as i128;
                            want_n[g] += 1;
                        }
                        _ => {}
                    }
                }
                let got = match got {
                    GroupSums::Decimals {
                        digits,
                        exponent,
                        exceptions,
                        counts,
                    } => GroupSums::Floats {
                        sums: digits
                            .iter()
                            .enumerate()
                            .map(|(g, &d)| {
                                let digits = DecimalSum {
                                    digits: d,
                                    exponent,
                                    count: 0,
                                };
                                digits.to_f64() + exceptions.get(g).copied().unwrap_or(0.0)
                            })
                            .collect(),
                        counts,
                    },
                    other => other,
                };
                match got {
                    GroupSums::Decimals { .. } => unreachable!("turned into floats above"),
                    GroupSums::Floats { sums, counts } => {
                        assert_eq!(counts, want_n);
                        for (a, b) in sums.iter().zip(&want_f) {
                            assert!(
                                (a.is_nan() && b.is_nan())
                                    || a == b
                                    || (a - b).abs() <= 1e-9 * b.abs(),
                                "{} {a} {b}",
                                col.encoding_name()
                            );
                        }
                    }
                    GroupSums::Ints {
                        base,
                        counts,
                        offsets,
                    } => {
                        assert_eq!(counts, want_n);
                        for g in 0..groups {
                            let total = base as i128 * counts[g] as i128 + offsets[g] as i128;
                            assert_eq!(total, want_i[g], "{}", col.encoding_name());
                        }
                    }
                }
            }
        }
    }

    /// Money sums are exact decimals: 0.1 and 0.2 added five thousand times
    /// each are 1500, where a row-by-row f64 sum drifts.
    #[test]
    fn alp_sums_are_exact_decimals() {
        let values: Vec<f64> = (0..10_000).map(|i| [0.1, 0.2][i % 2]).collect();
        let col = Column::encode_floats(values.clone(), None);
        assert!(
            col.encoding_name().starts_with("alp"),
            "{}",
            col.encoding_name()
        );
        let naive: f64 = values.iter().sum();
        assert_ne!(naive, 1500.0);
        let gids = vec![0u32; 10_000];
        for gids in [None, Some(&gids[..])] {
            match group_sums(&col, Rows::all(10_000), gids, 1) {
                GroupSums::Decimals {
                    digits,
                    exponent,
                    exceptions,
                    ..
                } => {
                    assert_eq!((digits, exponent), (vec![15_000], -1));
                    assert!(exceptions.iter().all(|&x| x == 0.0), "{exceptions:?}");
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
