//! Bytes per row of each column under today's codecs and under the codecs
//! `store::choose_*` would pick, on the synthetic data sets.
//!
//! Usage: `cargo run --release --example codec_sizes -- [ROWS] [DATASET…]`
//! (default 1,000,000 rows of taxi, iot, numbers and kv). Loads each data
//! set with the default partition size, then for every partition and column
//! decodes the values, asks the chooser, encodes with the chosen codec (or
//! today's codec when the encoder declines) and adds up the heap bytes,
//! validity bitmaps included. The last column estimates the same codecs
//! with their codes bit-packed at the exact width of their largest code
//! (as FastLanes, Afroozeh and Boncz, VLDB 2023) instead of u8/u16/u32/u64.

use std::collections::BTreeMap;
use std::path::Path;

use katydid::store::{
    Alp, AlpCodes, Bitmap, CodecKind, Codes, Column, ColumnData, Coords, Delta, Fsst, HexPoints,
    Linear, Rle, Single, choose_floats, choose_ints, choose_strings, dict_code_runs,
};
use katydid::{DataType, LoadOptions, Value};
use katydid_datasets::{Dataset, generate_bytes};

/// Bytes saved by bit-packing `codes` at the width of the largest code.
fn bitpack_saving(codes: &Codes) -> usize {
    let max = (0..codes.len()).map(|i| codes.get(i)).max().unwrap_or(0);
    let bits = 64 - max.leading_zeros() as usize;
    codes.heap_bytes() - (codes.len() * bits).div_ceil(8)
}

/// Bytes saved by bit-packing ALP codes not bit-packed already.
fn alp_bitpack_saving(codes: &AlpCodes) -> usize {
    match codes {
        AlpCodes::Bytes(c) => bitpack_saving(c),
        AlpCodes::Bits(_) => 0,
    }
}

/// Bytes of the chosen codec for one column of one partition (validity
/// excluded), the codec's name, and the bytes bit-packing would save.
fn chosen_bytes(column: &Column) -> (usize, &'static str, usize) {
    let len = column.len;
    let validity = column.validity.as_ref();
    let current = column.heap_bytes() - validity.map_or(0, Bitmap::heap_bytes);
    let current_saving = match &column.data {
        ColumnData::Offset { codes, .. } | ColumnData::Dict { codes, .. } => bitpack_saving(codes),
        _ => 0,
    };
    if matches!(column.data, ColumnData::Const(_)) {
        return (current, "const", 0);
    }
    let found: Option<(usize, &'static str, usize)> = match column.dtype {
        DataType::Int | DataType::Timestamp => {
            let values: Vec<i64> = (0..len)
                .map(|i| match column.value(i) {
                    Value::Int(v) | Value::Timestamp(v) => v,
                    _ => 0,
                })
                .collect();
            let choice = choose_ints(&values, validity);
            let name = choice.codec.name();
            match choice.codec {
                CodecKind::Linear => Linear::encode(&values, validity).map(|l| {
                    (
                        l.heap_bytes(),
                        name,
                        l.residuals().map_or(0, bitpack_saving),
                    )
                }),
                CodecKind::Delta => Delta::encode(&values, validity)
                    .map(|d| (d.heap_bytes(), name, bitpack_saving(d.codes()))),
                CodecKind::Rle => Rle::encode(&values, validity).map(|r| (r.heap_bytes(), name, 0)),
                _ => None,
            }
        }
        DataType::Float => {
            let values: Vec<f64> = (0..len)
                .map(|i| match column.value(i) {
                    Value::Float(v) => v,
                    _ => 0.0,
                })
                .collect();
            let choice = choose_floats(&values, validity);
            let name = choice.codec.name();
            match choice.codec {
                CodecKind::Alp => Alp::encode(&values, validity)
                    .map(|a| (a.heap_bytes(), name, alp_bitpack_saving(a.codes()))),
                CodecKind::Single => choice
                    .single_split
                    .and_then(|split| Single::encode_with(&values, validity, split))
                    .map(|f| (f.heap_bytes(), name, alp_bitpack_saving(f.codes()))),
                CodecKind::Rle => Rle::encode(&values, validity).map(|r| (r.heap_bytes(), name, 0)),
                _ => None,
            }
        }
        _ => {
            let owned: Vec<String> = (0..len)
                .map(|i| match column.value(i) {
                    Value::Str(s) => s.to_string(),
                    _ => String::new(),
                })
                .collect();
            let values: Vec<&str> = owned.iter().map(String::as_str).collect();
            let choice = choose_strings(&values, validity);
            let name = choice.codec.name();
            match (&choice.codec, &column.data) {
                (CodecKind::Fsst, _) => {
                    Fsst::encode(&values, validity).map(|f| (f.heap_bytes(), name, 0))
                }
                (CodecKind::HexPoints, _) => HexPoints::encode(&values, validity).map(|p| {
                    let saving = [p.x(), p.y()]
                        .iter()
                        .map(|c| match c {
                            Coords::Alp(a) => alp_bitpack_saving(a.codes()),
                            Coords::Single(f) => alp_bitpack_saving(f.codes()),
                            Coords::Plain(_) => 0,
                        })
                        .sum();
                    (p.heap_bytes(), name, saving)
                }),
                (CodecKind::DictRle, ColumnData::Dict { dict, codes }) => {
                    dict_code_runs(codes, validity)
                        .map(|r| (r.heap_bytes() + dict.heap_bytes(), name, 0))
                }
                _ => None,
            }
        }
    };
    found.unwrap_or_else(|| {
        let name = match column.data {
            ColumnData::Offset { .. } => "offset",
            ColumnData::Float(_) => "f64",
            ColumnData::Dict { .. } => "dict",
            _ => "packed",
        };
        (current, name, current_saving)
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let rows: u64 = match args.peek().and_then(|a| a.parse().ok()) {
        Some(n) => {
            args.next();
            n
        }
        None => 1_000_000,
    };
    let datasets: Vec<Dataset> = {
        let named: Vec<Dataset> = args.map(|a| a.parse()).collect::<Result<_, _>>()?;
        if named.is_empty() {
            Dataset::ALL.to_vec()
        } else {
            named
        }
    };
    for dataset in datasets {
        let csv = generate_bytes(dataset, rows, 42);
        let table = katydid::ingest::load_csv_bytes(
            csv,
            Path::new(dataset.name()),
            dataset.name(),
            &LoadOptions::default(),
        )?;
        let n = table.rows() as f64;
        println!(
            "\n{} ({} rows, {} partitions)",
            dataset.name(),
            table.rows(),
            table.partitions.len()
        );
        println!(
            "{:<26} {:>9} {:>9} {:>9}  chosen codecs (partitions)",
            "column", "now B/row", "new B/row", "bitpacked"
        );
        let (mut total_now, mut total_new, mut total_bits) = (0usize, 0usize, 0usize);
        for (c, field) in table.fields.iter().enumerate() {
            let (mut now, mut new, mut bits) = (0usize, 0usize, 0usize);
            let mut codecs: BTreeMap<&str, usize> = BTreeMap::new();
            for p in &table.partitions {
                let column = &p.columns[c];
                let validity = column.validity.as_ref().map_or(0, Bitmap::heap_bytes);
                let (bytes, codec, saving) = chosen_bytes(column);
                now += column.heap_bytes();
                new += bytes + validity;
                bits += bytes + validity - saving;
                *codecs.entry(codec).or_default() += 1;
            }
            total_now += now;
            total_new += new;
            total_bits += bits;
            let codecs: Vec<String> = codecs.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
            println!(
                "{:<26} {:>9.2} {:>9.2} {:>9.2}  {}",
                field.name,
                now as f64 / n,
                new as f64 / n,
                bits as f64 / n,
                codecs.join(", ")
            );
        }
        println!(
            "{:<26} {:>9.2} {:>9.2} {:>9.2}",
            "TOTAL",
            total_now as f64 / n,
            total_new as f64 / n,
            total_bits as f64 / n
        );
    }
    Ok(())
}
