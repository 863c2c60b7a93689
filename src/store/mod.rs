//! Tables, partitions and the codecs their columns are stored in.
//!
//! # Design
//! Every column of every partition picks its own codec when it is encoded
//! ([`Column::encode_ints`] and friends): integers and timestamps as offsets
//! from the partition minimum in the narrowest unsigned width, strings as a
//! sorted dictionary with u8/u16 codes or packed, floats as f64, a value
//! repeated over the whole partition as one constant. NULLs live in a
//! validity bitmap that exists only where a partition has one. Each column
//! also records a [`ZoneMap`] (min, max, null count, sortedness) that lets
//! the planner skip a partition without touching its data. Once a table
//! is loaded (or while it loads, [`TableDictBuilder`]), a string column
//! whose strings repeat across partitions may take one dictionary for the
//! whole table ([`table_dictionaries`]).
//!
//! The store depends on nothing of katydid but [`crate::types`].

mod alp;
mod alp_codes;
mod bitmap;
mod bitpacked;
mod choose;
mod cmp;
mod codes;
mod column;
mod decode;
mod delta;
mod encode;
mod fsst;
mod hexpoint;
mod index;
mod linear;
mod rle;
mod single;
mod stats;
mod table;
mod table_dict;

pub use alp::{Alp, DecimalSum};
pub use alp_codes::{AlpCodes, UNPACK_ROWS};
pub use bitmap::Bitmap;
pub use cmp::{BATCH_ROWS, CmpOp, CodePredicate, mask_from_ranges};
pub(crate) use codes::with_codes;
pub use codes::{Code, Codes};
pub use column::{
    Column, ColumnData, DICTIONARY_PROBE_ROWS, Dictionary, MAX_DICTIONARY_LEN, dictionary_unlikely,
    projected_distinct,
};
pub use decode::Decoded;
pub use encode::{EntryIds, share_dictionaries, share_repeated};
pub use fsst::{Fsst, StringBatch};
pub use index::{HashIndex, unpack_location};
pub use linear::Linear;
pub use table::{Field, Partition, SourceFormat, Table};
pub use table_dict::{TableDictBuilder, table_dictionaries};

// Reached only by the project's tests, benchmarks and examples.
#[cfg(feature = "internals")]
pub use {
    alp::AlpSum,
    alp_codes::{code_bytes, packs_bits},
    bitpacked::{BitPacked, bits_for},
    choose::{
        Candidate, Choice, CodecKind, choose_floats, choose_ints, choose_strings, dict_code_runs,
        sample_ranges,
    },
    column::{PackedStrings, ZoneMap},
    delta::Delta,
    fsst::FsstMatcher,
    hexpoint::{Coords, HexPoints},
    index::{RowLocation, location},
    rle::{Rle, RunValue},
    single::{Single, Split},
};
