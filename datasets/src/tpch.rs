//! The eight TPC-H tables at a scale factor, as CSV files.
//!
//! The rows are those of the TPC-H specification's `dbgen` (TPC-H
//! Standard Specification 3.0.1, clause 4.2), produced by the `tpchgen`
//! crate, a Rust port of `dbgen` whose scale factor 1 answers to the 22
//! queries are the specification's own. TPC-H data has no seed: a scale
//! factor gives one set of rows.
//!
//! # Output
//! One file per table, `<table>.csv` (`region.csv` … `lineitem.csv`), with
//! a header row of the specification's column names in lower case
//! (`l_orderkey`), `,` between fields and `\n` line ends. Keys and
//! integers are plain digits, decimals fixed-point text with two places
//! (`21168.23`), dates `YYYY-MM-DD`. The free-text fields that may hold a
//! comma (every `*_comment`, `s_address`, `c_address`) are always quoted
//! (`"egular courts above the"`); TPC-H text holds no quote or line break,
//! so nothing needs escaping. No field is NULL.
//!
//! # Determinism and speed
//! A table is generated in parts (`tpchgen`'s `part`/`part_count`, the
//! same split as `dbgen -C n -S k`), whose concatenation is the whole
//! table; the number of parts depends on the table and scale factor only,
//! and parts are formatted in parallel on the current rayon pool and
//! written in order, so the bytes depend on the scale factor alone.

use std::fmt::Display;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tpchgen::csv::{
    CustomerCsv, LineItemCsv, NationCsv, OrderCsv, PartCsv, PartSuppCsv, RegionCsv, SupplierCsv,
};
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// The largest scale factor accepted (the largest the specification
/// publishes results for).
pub const MAX_SCALE_FACTOR: f64 = 100_000.0;

/// Rows per part a table is split into for parallel formatting.
const PART_ROWS: f64 = 250_000.0;

/// A TPC-H table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// `region`: 5 rows.
    Region,
    /// `nation`: 25 rows.
    Nation,
    /// `supplier`: 10,000 × SF rows.
    Supplier,
    /// `customer`: 150,000 × SF rows.
    Customer,
    /// `part`: 200,000 × SF rows.
    Part,
    /// `partsupp`: 800,000 × SF rows (4 suppliers per part).
    PartSupp,
    /// `orders`: 1,500,000 × SF rows.
    Orders,
    /// `lineitem`: 1 to 7 rows per order, about 6,000,000 × SF.
    LineItem,
}

impl Table {
    /// Every table, smallest first.
    pub const ALL: [Table; 8] = [
        Table::Region,
        Table::Nation,
        Table::Supplier,
        Table::Customer,
        Table::Part,
        Table::PartSupp,
        Table::Orders,
        Table::LineItem,
    ];

    /// The table's name in the specification, lower case: `lineitem`.
    pub fn name(self) -> &'static str {
        match self {
            Table::Region => "region",
            Table::Nation => "nation",
            Table::Supplier => "supplier",
            Table::Customer => "customer",
            Table::Part => "part",
            Table::PartSupp => "partsupp",
            Table::Orders => "orders",
            Table::LineItem => "lineitem",
        }
    }

    /// The CSV header line, without its line break.
    pub fn header(self) -> &'static str {
        match self {
            Table::Region => RegionCsv::header(),
            Table::Nation => NationCsv::header(),
            Table::Supplier => SupplierCsv::header(),
            Table::Customer => CustomerCsv::header(),
            Table::Part => PartCsv::header(),
            Table::PartSupp => PartSuppCsv::header(),
            Table::Orders => OrderCsv::header(),
            Table::LineItem => LineItemCsv::header(),
        }
    }

    /// The exact row count at scale factor `sf` (clause 4.2.5), or `None`
    /// for `lineitem`, whose count is drawn (1 to 7 lines per order).
    pub fn rows(self, sf: f64) -> Option<u64> {
        let scaled = |base: i32| (base as f64 * sf) as u64;
        match self {
            Table::Region => Some(5),
            Table::Nation => Some(25),
            Table::Supplier => Some(scaled(10_000)),
            Table::Customer => Some(scaled(150_000)),
            Table::Part => Some(scaled(200_000)),
            Table::PartSupp => Some(4 * scaled(200_000)),
            Table::Orders => Some(scaled(1_500_000)),
            Table::LineItem => None,
        }
    }

    /// The file name the table is written to: `lineitem.csv`.
    pub fn file_name(self) -> String {
        format!("{}.csv", self.name())
    }

    /// The number of parts the table is generated in at `sf`: about
    /// [`PART_ROWS`] rows each, one for the fixed tables.
    fn parts(self, sf: f64) -> i32 {
        let rows = match self {
            Table::Region | Table::Nation => return 1,
            Table::LineItem => 6_000_000.0 * sf,
            t => t.rows(sf).unwrap_or(0) as f64,
        };
        (rows / PART_ROWS).ceil().clamp(1.0, i32::MAX as f64) as i32
    }
}

/// The error for a scale factor that is not a positive number up to
/// [`MAX_SCALE_FACTOR`].
fn check_scale_factor(sf: f64) -> io::Result<()> {
    if sf.is_finite() && sf > 0.0 && sf <= MAX_SCALE_FACTOR {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the TPC-H scale factor must be above 0 and at most {MAX_SCALE_FACTOR}, not {sf}"
            ),
        ))
    }
}

/// Formats every row of an iterator, one CSV line each; returns the text
/// and the row count.
fn lines<R, C: Display>(rows: impl Iterator<Item = R>, csv: impl Fn(R) -> C) -> (Vec<u8>, u64) {
    let mut out = Vec::new();
    let mut n = 0;
    for row in rows {
        writeln!(out, "{}", csv(row)).expect("writing to a Vec cannot fail");
        n += 1;
    }
    (out, n)
}

/// The CSV lines (no header) of part `part` (1-based) of `parts` of
/// `table` at `sf`, and their count.
fn part_lines(table: Table, sf: f64, part: i32, parts: i32) -> (Vec<u8>, u64) {
    match table {
        Table::Region => lines(RegionGenerator::new(sf, part, parts).iter(), RegionCsv::new),
        Table::Nation => lines(NationGenerator::new(sf, part, parts).iter(), NationCsv::new),
        Table::Supplier => lines(
            SupplierGenerator::new(sf, part, parts).iter(),
            SupplierCsv::new,
        ),
        Table::Customer => lines(
            CustomerGenerator::new(sf, part, parts).iter(),
            CustomerCsv::new,
        ),
        Table::Part => lines(PartGenerator::new(sf, part, parts).iter(), PartCsv::new),
        Table::PartSupp => lines(
            PartSuppGenerator::new(sf, part, parts).iter(),
            PartSuppCsv::new,
        ),
        Table::Orders => lines(OrderGenerator::new(sf, part, parts).iter(), OrderCsv::new),
        Table::LineItem => lines(
            LineItemGenerator::new(sf, part, parts).iter(),
            LineItemCsv::new,
        ),
    }
}

/// Writes `table` at scale factor `sf` as CSV (header first) to `out` and
/// returns its row count. `out` is not flushed.
///
/// # Errors
/// `InvalidInput` for a scale factor that is not in (0,
/// [`MAX_SCALE_FACTOR`]]; any error of `out` (rows already written stay
/// written).
pub fn write_table(table: Table, sf: f64, out: &mut dyn Write) -> io::Result<u64> {
    write_table_in_parts(table, sf, table.parts(sf), out)
}

/// [`write_table`] with an explicit part count (tests check that the
/// split does not change the bytes).
#[doc(hidden)]
pub fn write_table_in_parts(
    table: Table,
    sf: f64,
    parts: i32,
    out: &mut dyn Write,
) -> io::Result<u64> {
    check_scale_factor(sf)?;
    out.write_all(table.header().as_bytes())?;
    out.write_all(b"\n")?;
    let mut rows = 0;
    crate::for_each_piece(
        parts.max(1) as u64,
        |i| part_lines(table, sf, i as i32 + 1, parts.max(1)),
        |(bytes, n)| {
            rows += n;
            out.write_all(&bytes)
        },
    )?;
    Ok(rows)
}

/// Writes all eight tables at scale factor `sf` into the directory `dir`
/// (created when missing) as `<table>.csv`, each through a temporary file
/// renamed when complete. Returns each table's path and row count, in
/// [`Table::ALL`] order.
///
/// # Errors
/// As [`write_table`], and any error creating the directory or a file.
pub fn write_tables(dir: &Path, sf: f64) -> io::Result<Vec<(Table, PathBuf, u64)>> {
    check_scale_factor(sf)?;
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for table in Table::ALL {
        let path = dir.join(table.file_name());
        let rows = crate::write_atomically(&path, |w| write_table(table, sf, w))?;
        written.push((table, path, rows));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_grow_with_the_scale_factor() {
        assert_eq!(Table::Region.parts(100.0), 1);
        assert_eq!(Table::LineItem.parts(0.01), 1);
        assert_eq!(Table::LineItem.parts(1.0), 24);
        assert_eq!(Table::Supplier.parts(1.0), 1);
    }

    #[test]
    fn bad_scale_factors_are_refused() {
        for sf in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e6] {
            let err = write_table(Table::Nation, sf, &mut Vec::new()).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{sf}");
        }
    }
}
