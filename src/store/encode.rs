//! Encoding a partition's column with the codec the chooser picks.
//!
//! [`Column::encode_ints`], [`Column::encode_floats`],
//! [`Column::encode_strings`] and [`Column::encode_string_ids`] are what the
//! loader (and every test that builds a table by hand) calls. Each asks
//! [`super::choose`] for the codec by statistics and sampling (see its
//! module docs for the rule and the bias toward faster scans), encodes with
//! it, and falls back to the plain codec of the type (offsets, f64,
//! dictionary or packed strings) when the chosen encoder declines. The zone
//! map is the plain codec's, whatever the codec.
//!
//! Nothing is encoded twice on the way: integers and floats are encoded
//! once with the chosen codec (ALP with the exponent found on the
//! chooser's sample), strings are first encoded plain (the dictionary or
//! packed layout is itself a candidate and the only way to know its exact
//! size), and only a packed column is measured for hex points and FSST.

use std::sync::Arc;

use super::alp::Alp;
use super::bitmap::Bitmap;
use super::choose::{CodecKind, choose_floats_with, choose_ints_with, choose_strings_for};
use super::codes::Codes;
use super::column::{Column, ColumnData};
use super::delta::Delta;
use super::fsst::Fsst;
use super::linear::Linear;
use super::rle::Rle;
use super::single::Single;
use super::stats::{float_stats, int_stats};
use crate::types::DataType;

fn normalize_validity(validity: Option<Bitmap>) -> Option<Bitmap> {
    validity.filter(|v| v.count_ones() < v.len())
}

/// After a partition's columns are encoded (or some encoded again): data
/// that two columns hold alike is kept once. Hex points take their
/// coordinates from the float columns that hold them
/// ([`super::hexpoint::share_coordinates`]) and equal NULL bitmaps become
/// one copy ([`super::bitmap::share_validity`]). Idempotent.
pub fn share_repeated(columns: &mut [Column]) {
    super::hexpoint::share_coordinates(columns);
    super::bitmap::share_validity(columns.iter_mut().map(|c| &mut c.validity));
}

/// Makes equal string dictionaries of one column across `partitions` one
/// shared copy (an `Arc`): a column of a few thousand names, each present
/// in every partition, otherwise holds the same dictionary once per
/// partition (iot's `name`: 0.6 B/row of its 2.65). Each dictionary is
/// hashed once and compared in full only with those of equal hash and
/// length. [`Column::heap_bytes`] counts a shared dictionary's share.
/// Idempotent.
pub fn share_dictionaries(partitions: &mut [super::Partition]) {
    use std::hash::BuildHasher;
    let width = partitions.first().map_or(0, |p| p.columns.len());
    let hasher = hashbrown::DefaultHashBuilder::default();
    for c in 0..width {
        let mut kept: hashbrown::HashMap<(u64, usize), Vec<Arc<super::column::Dictionary>>> =
            hashbrown::HashMap::new();
        // The last dictionary met as it was found (held, so its address is
        // not reused) and what it became.
        let mut last: Option<(
            Arc<super::column::Dictionary>,
            Arc<super::column::Dictionary>,
        )> = None;
        for p in partitions.iter_mut() {
            let Some(column) = p.columns.get_mut(c) else {
                continue;
            };
            let (ColumnData::Dict { dict, .. } | ColumnData::DictRuns { dict, .. }) =
                &mut column.data
            else {
                continue;
            };
            // Partitions that already share a dictionary (the Arrow
            // importer's, `Column::encode_string_ids_reusing`) are
            // recognised by pointer, without hashing it again.
            if let Some((seen, canonical)) = &last
                && Arc::ptr_eq(seen, dict)
            {
                *dict = Arc::clone(canonical);
                continue;
            }
            let seen = Arc::clone(dict);
            let hash = hasher.hash_one(dict.values());
            let same = kept.entry((hash, dict.len())).or_default();
            match same.iter().find(|k| Arc::ptr_eq(k, dict) || k.values() == dict.values()) {
                Some(k) => *dict = Arc::clone(k),
                None => same.push(Arc::clone(dict)),
            }
            last = Some((seen, Arc::clone(dict)));
        }
    }
}

/// Integers as codes into `sorted`, their distinct values ascending
/// ([`ColumnData::IntDict`], from [`super::choose::Choice::int_dict_values`]).
/// NULL rows take code 0; a value missing from `sorted` (not reached) also
/// does.
pub(super) fn int_dict(
    values: &[i64],
    validity: Option<&Bitmap>,
    sorted: Vec<i64>,
) -> Option<ColumnData> {
    if sorted.is_empty() || sorted.len() > 1 << 16 {
        return None;
    }
    let valid = |i: usize| validity.is_none_or(|v| v.get(i));
    let code_of: hashbrown::HashMap<i64, u64> = sorted
        .iter()
        .enumerate()
        .map(|(c, &x)| (x, c as u64))
        .collect();
    let codes = values.iter().enumerate().map(|(i, x)| {
        if valid(i) {
            code_of.get(x).copied().unwrap_or(0)
        } else {
            0
        }
    });
    let max = sorted.len() as u64 - 1;
    Some(ColumnData::IntDict {
        codes: Codes::pack(codes, max),
        values: sorted.into(),
    })
}

impl Column {
    /// Encodes integers (`dtype` Int) or timestamps (`dtype` Timestamp, in
    /// microseconds) with the codec [`super::choose_ints`] picks: a
    /// constant, offsets ([`Column::encode_ints_plain`]), codes into the
    /// distinct values ([`ColumnData::IntDict`]), an exact or near line ([`Linear`]), deltas ([`Delta`]) or runs ([`Rle`]).
    /// Values at NULL rows are ignored.
    pub fn encode_ints(dtype: DataType, values: &[i64], validity: Option<Bitmap>) -> Column {
        debug_assert!(matches!(dtype, DataType::Int | DataType::Timestamp | DataType::Date | DataType::Interval));
        let validity = normalize_validity(validity);
        let v = validity.as_ref();
        // One pass gives the chooser's statistics, the zone map and the
        // offsets' base and factor.
        let Some(stats) = int_stats(values, v) else {
            return Column::all_null(dtype, values.len());
        };
        let (choice, line) = choose_ints_with(values, v, &stats);
        let data = match choice.codec {
            CodecKind::Linear => line
                .or_else(|| Linear::encode(values, v))
                .map(ColumnData::Linear),
            CodecKind::IntDict => choice
                .int_dict_values
                .and_then(|sorted| int_dict(values, v, sorted)),
            CodecKind::Delta => Delta::encode(values, v).map(|d| ColumnData::Delta(Box::new(d))),
            CodecKind::Rle => Rle::encode(values, v).map(ColumnData::Runs),
            _ => None,
        };
        match data {
            Some(data) => Column {
                dtype,
                len: values.len(),
                data,
                validity,
                zone: stats.zone(dtype),
            },
            None => Column::offsets_with(dtype, values, validity, &stats),
        }
    }

    /// Encodes floats with the codec [`super::choose_floats`] picks: a
    /// constant, f64 ([`Column::encode_floats_plain`]), ALP digits with
    /// exceptions ([`Alp`], with the exponent found on the chooser's
    /// sample), f32 codes ([`Single`], with the split found there) or runs
    /// ([`Rle`]). Values at NULL rows are ignored.
    pub fn encode_floats(values: Vec<f64>, validity: Option<Bitmap>) -> Column {
        let validity = normalize_validity(validity);
        let v = validity.as_ref();
        let Some(stats) = float_stats(&values, v) else {
            return Column::all_null(DataType::Float, values.len());
        };
        let choice = choose_floats_with(&values, v, &stats);
        let data = match (choice.codec, choice.alp_exponent) {
            (CodecKind::Alp, Some(e)) => {
                Alp::encode_with_exponent(&values, v, e).map(|a| ColumnData::Alp(Arc::new(a)))
            }
            (CodecKind::Rle, _) => Rle::encode(&values, v).map(ColumnData::FloatRuns),
            (CodecKind::Single, _) => choice
                .single_split
                .and_then(|split| Single::encode_with(&values, v, split))
                .map(|f| ColumnData::Single(Arc::new(f))),
            _ => None,
        };
        match data {
            Some(data) => Column {
                dtype: DataType::Float,
                len: values.len(),
                data,
                validity,
                zone: stats.zone(),
            },
            None => Column::floats_with(values, validity, &stats),
        }
    }

    /// Encodes strings with the codec [`super::choose_strings`] picks: a
    /// constant, a sorted dictionary (its codes possibly run-length
    /// encoded), packed, hex points or FSST. Values at NULL rows are
    /// ignored.
    pub fn encode_strings(values: &[&str], validity: Option<Bitmap>) -> Column {
        let baseline = Column::encode_strings_plain(values, validity);
        compress_strings(baseline, || values.to_vec())
    }

    /// Encodes the strings `distinct[ids[i]]` as [`Column::encode_strings`]
    /// would: `distinct` holds distinct strings in any order, each the value
    /// of at least one valid row; `ids` has one entry per row (any id below
    /// `distinct.len()` at NULL rows).
    ///
    /// # Panics
    /// If an id is not below `distinct.len()`.
    pub fn encode_string_ids(distinct: &[&str], ids: &[u32], validity: Option<Bitmap>) -> Column {
        let baseline = Column::encode_string_ids_plain(distinct, ids, validity);
        compress_strings(baseline, || {
            ids.iter().map(|&id| distinct[id as usize]).collect()
        })
    }

    /// [`Column::encode_string_ids`], taking `reuse` as the dictionary when
    /// it holds exactly the partition's distinct strings
    /// ([`Column::encode_string_ids_plain_reusing`]).
    ///
    /// # Panics
    /// If an id is not below `distinct.len()`.
    pub fn encode_string_ids_reusing(
        distinct: &[&str],
        ids: &[u32],
        validity: Option<Bitmap>,
        reuse: Option<&Arc<super::Dictionary>>,
    ) -> Column {
        let baseline = Column::encode_string_ids_plain_reusing(distinct, ids, validity, reuse);
        compress_strings(baseline, || {
            ids.iter().map(|&id| distinct[id as usize]).collect()
        })
    }
}

/// Distinct strings and one id per row for rows that are entries of
/// string sources (dictionaries, coded arrays): each entry some row uses
/// is looked up once by its string, so rows cost an array lookup, not a
/// hash, and equal strings (within a source or across sources) get one
/// id, as [`Column::encode_string_ids`] requires.
#[derive(Debug, Default)]
pub struct EntryIds<'a> {
    distinct: Vec<&'a str>,
    seen: hashbrown::HashMap<&'a str, u32>,
    /// Per entry of the current source: its id, `u32::MAX` before use.
    id_of: Vec<u32>,
}

impl<'a> EntryIds<'a> {
    /// Starts a source of `entries` entries; later [`EntryIds::id`] calls
    /// name its entries.
    pub fn source(&mut self, entries: usize) {
        self.id_of.clear();
        self.id_of.resize(entries, u32::MAX);
    }

    /// The id of entry `k` of the current source, `value(k)` its string
    /// (asked once per entry); `None` when `k` is past the source's
    /// entries.
    #[inline]
    pub fn id(&mut self, k: usize, value: impl FnOnce(usize) -> &'a str) -> Option<u32> {
        let slot = self.id_of.get_mut(k)?;
        if *slot == u32::MAX {
            let s = value(k);
            let next = self.distinct.len() as u32;
            *slot = *self.seen.entry(s).or_insert_with(|| {
                self.distinct.push(s);
                next
            });
        }
        Some(*slot)
    }

    /// The distinct strings, in the order of their ids.
    pub fn into_distinct(self) -> Vec<&'a str> {
        self.distinct
    }
}

/// Re-encodes a plainly encoded string column with the chooser's codec;
/// `values` gives the rows' strings when the packed layout is measured.
fn compress_strings<'a>(mut baseline: Column, values: impl FnOnce() -> Vec<&'a str>) -> Column {
    let validity = baseline.validity.clone();
    match &baseline.data {
        ColumnData::Dict { dict, codes } => {
            let (choice, _) = choose_strings_for(&baseline, &[]);
            if choice.codec == CodecKind::DictRle
                && let Some(runs) = super::choose::dict_code_runs(codes, validity.as_ref())
            {
                baseline.data = ColumnData::DictRuns {
                    dict: Arc::clone(dict),
                    runs,
                };
            }
            baseline
        }
        ColumnData::Packed(_) => {
            let values = values();
            let (choice, points) = choose_strings_for(&baseline, &values);
            match choice.codec {
                CodecKind::HexPoints => {
                    if let Some(p) = points {
                        baseline.data = ColumnData::HexPoints(Box::new(p));
                    }
                }
                CodecKind::Fsst => {
                    if let Some(f) = Fsst::encode(&values, validity.as_ref()) {
                        baseline.data = ColumnData::Fsst(Box::new(f));
                    }
                }
                _ => {}
            }
            baseline
        }
        _ => baseline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Value;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn decode(c: &Column) -> Vec<Value> {
        (0..c.len).map(|i| c.value(i)).collect()
    }

    fn plain_name(c: &Column) -> String {
        c.encoding_name()
    }

    #[test]
    fn equal_dictionaries_of_a_column_are_shared_across_partitions() {
        let names = ["fig", "pear", "apple", "kiwi"];
        // Partitions 0 and 2 hold the same four names in other orders (and
        // run-length encoded in 2), 1 only three of them; column 1 is the
        // same in every partition but a column of its own.
        let part = |order: &[usize], runs: bool| {
            let values: Vec<&str> = (0..400).map(|i| names[order[i / 100]]).collect();
            let mut a = Column::encode_strings_plain(&values, None);
            if runs {
                a = Column::encode_strings(&values, None);
            }
            let b = Column::encode_strings_plain(&values, None);
            super::super::Partition {
                rows: values.len(),
                first_row: 0,
                columns: vec![a, b],
            }
        };
        let mut partitions = vec![
            part(&[0, 1, 2, 3], false),
            part(&[0, 1, 2, 2], false),
            part(&[3, 2, 1, 0], true),
        ];
        let dict = |p: &super::super::Partition, c: usize| match &p.columns[c].data {
            ColumnData::Dict { dict, .. } | ColumnData::DictRuns { dict, .. } => Arc::clone(dict),
            _ => panic!("{}", p.columns[c].encoding_name()),
        };
        assert!(matches!(
            partitions[2].columns[0].data,
            ColumnData::DictRuns { .. }
        ));
        let before: Vec<Vec<Vec<Value>>> = partitions
            .iter()
            .map(|p| p.columns.iter().map(decode).collect())
            .collect();
        let bytes = |ps: &[super::super::Partition]| -> usize {
            ps.iter().map(|p| p.columns[0].heap_bytes()).sum()
        };
        let unshared = bytes(&partitions);
        share_dictionaries(&mut partitions);
        share_dictionaries(&mut partitions);
        assert!(Arc::ptr_eq(&dict(&partitions[0], 0), &dict(&partitions[2], 0)));
        assert!(!Arc::ptr_eq(&dict(&partitions[0], 0), &dict(&partitions[1], 0)));
        assert!(!Arc::ptr_eq(&dict(&partitions[0], 0), &dict(&partitions[0], 1)));
        let after: Vec<Vec<Vec<Value>>> = partitions
            .iter()
            .map(|p| p.columns.iter().map(decode).collect())
            .collect();
        assert_eq!(before, after);
        // The shared dictionary counts once, half in each holder.
        let four = dict(&partitions[0], 0).heap_bytes();
        assert_eq!(bytes(&partitions), unshared - four);
    }

    /// A dictionary offered for reuse is taken only when it holds exactly
    /// the partition's strings; the column is the one encoded without the
    /// offer either way, and partitions that took one dictionary stay one
    /// copy through `share_dictionaries`.
    #[test]
    fn offered_dictionaries_are_reused_only_when_equal() {
        let names = ["fig", "pear", "apple", "kiwi", "", "é"];
        let ids: Vec<u32> = (0..600).map(|i| (i * 7 % names.len()) as u32).collect();
        let validity = Bitmap::from_fn(ids.len(), |i| i % 5 != 1);
        let dict_of = |c: &Column| match &c.data {
            ColumnData::Dict { dict, .. } | ColumnData::DictRuns { dict, .. } => Arc::clone(dict),
            _ => panic!("{}", c.encoding_name()),
        };
        for validity in [None, Some(validity)] {
            let first = Column::encode_string_ids(&names, &ids, validity.clone());
            let offer = dict_of(&first);
            // The same strings in another order of first appearance.
            let reversed: Vec<&str> = names.iter().rev().copied().collect();
            let flipped: Vec<u32> = ids.iter().map(|&id| names.len() as u32 - 1 - id).collect();
            let again = Column::encode_string_ids_reusing(
                &reversed,
                &flipped,
                validity.clone(),
                Some(&offer),
            );
            assert!(Arc::ptr_eq(&dict_of(&again), &offer));
            assert_eq!(decode(&again), decode(&first));
            assert_eq!(again.zone, first.zone);
            // One string fewer, one string changed: a dictionary of its own.
            let fewer: Vec<u32> = ids.iter().map(|&id| id.min(4)).collect();
            let mut changed = names;
            changed[2] = "apricot";
            for (distinct, ids) in [(&names[..5], &fewer), (&changed[..], &ids)] {
                let own = Column::encode_string_ids(distinct, ids, validity.clone());
                let offered =
                    Column::encode_string_ids_reusing(distinct, ids, validity.clone(), Some(&offer));
                assert!(!Arc::ptr_eq(&dict_of(&offered), &offer));
                assert_eq!(decode(&offered), decode(&own));
                assert_eq!(offered.zone, own.zone);
            }
            // Partitions sharing the offered dictionary, one with another
            // copy of it and one with other strings.
            let part = |c: Column| super::super::Partition {
                rows: c.len,
                first_row: 0,
                columns: vec![c],
            };
            let copy = Column::encode_string_ids(&names, &ids, validity.clone());
            let other = Column::encode_string_ids(&changed, &ids, validity.clone());
            let mut partitions = vec![part(first.clone()), part(again), part(copy), part(other)];
            let before: Vec<Vec<Value>> = partitions.iter().map(|p| decode(&p.columns[0])).collect();
            share_dictionaries(&mut partitions);
            let dicts: Vec<Arc<super::super::column::Dictionary>> =
                partitions.iter().map(|p| dict_of(&p.columns[0])).collect();
            assert!(Arc::ptr_eq(&dicts[0], &dicts[1]) && Arc::ptr_eq(&dicts[0], &dicts[2]));
            assert!(!Arc::ptr_eq(&dicts[0], &dicts[3]));
            let after: Vec<Vec<Value>> = partitions.iter().map(|p| decode(&p.columns[0])).collect();
            assert_eq!(before, after);
        }
    }

    /// Every shape gets its codec, decodes to its values, and keeps the
    /// plain codec's zone map.
    #[test]
    fn shapes_get_their_codec_and_round_trip() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let n = 20_000usize;
        let rows: Vec<i64> = (1..=n as i64).collect();
        let mut t = 1_400_000_000_000_000i64;
        let pickups: Vec<i64> = (0..n)
            .map(|_| {
                t += rng.gen_range(0..20) * 1_000_000;
                t
            })
            .collect();
        let days: Vec<i64> = (0..n as i64).map(|i| i / 3000).collect();
        let ids: Vec<i64> = (0..n)
            .map(|_| [i64::MIN, -7, 3_600_000_001, i64::MAX][rng.gen_range(0..4)])
            .collect();
        let validity = Bitmap::from_bools(&(0..n).map(|i| i % 11 != 3).collect::<Vec<_>>());
        for (values, dtype, expected) in [
            (&rows, DataType::Int, "linear"),
            (&pickups, DataType::Timestamp, "delta u8"),
            (&days, DataType::Int, "rle"),
            (&ids, DataType::Int, "int dict u8"),
        ] {
            for validity in [None, Some(validity.clone())] {
                let c = Column::encode_ints(dtype, values, validity.clone());
                let p = Column::encode_ints_plain(dtype, values, validity.clone());
                let name = plain_name(&c);
                assert!(name.starts_with(expected), "{name}");
                assert_eq!(decode(&c), decode(&p));
                assert_eq!(c.zone, p.zone);
                assert!(c.heap_bytes() < p.heap_bytes());
            }
        }
        let money: Vec<f64> = (0..n)
            .map(|_| rng.gen_range(0..100_000) as f64 / 100.0)
            .collect();
        let mut specials = money.clone();
        specials[5] = f64::NAN;
        specials[6] = -0.0;
        specials[7] = f64::INFINITY;
        specials[8] = 0.1 + 0.2;
        let weather: Vec<f64> = (0..n).map(|i| (i / 4000) as f64 / 10.0).collect();
        for (values, expected) in [
            // 100,000 cents: 17 bits, bit-packed rather than a u32.
            (&money, "alp b17"),
            (&specials, "alp b17"),
            (&weather, "rle"),
        ] {
            for validity in [None, Some(validity.clone())] {
                let c = Column::encode_floats(values.clone(), validity.clone());
                let p = Column::encode_floats_plain(values.clone(), validity.clone());
                assert!(plain_name(&c).starts_with(expected), "{}", plain_name(&c));
                let bits = |c: &Column| -> Vec<Option<u64>> {
                    decode(c)
                        .iter()
                        .map(|v| v.as_f64().map(f64::to_bits))
                        .collect()
                };
                assert_eq!(bits(&c), bits(&p));
                assert_eq!(format!("{:?}", c.zone), format!("{:?}", p.zone));
            }
        }
    }

    #[test]
    fn strings_get_their_codec_and_round_trip() {
        let mut rng = ChaCha8Rng::seed_from_u64(22);
        let n = 5_000usize;
        let hex: Vec<String> = (0..n)
            .map(|_| {
                let x = (-74_000_000 + rng.gen_range(0..300_000)) as f64 / 1e6;
                let y = (40_000_000 + rng.gen_range(0..900_000)) as f64 / 1e6;
                let h = |v: f64| -> String {
                    v.to_le_bytes().iter().map(|b| format!("{b:02X}")).collect()
                };
                format!("0101000020E6100000{}{}", h(x), h(y))
            })
            .collect();
        let texts: Vec<String> = (0..n)
            .map(|i| format!("https://example.com/some/long/path/{}/{}", i % 97, i * 7919))
            .collect();
        let runs: Vec<String> = (0..n)
            .map(|i| ["green", "yellow"][i / 1000 % 2].to_string())
            .collect();
        let validity = Bitmap::from_bools(&(0..n).map(|i| i % 13 != 5).collect::<Vec<_>>());
        for (owned, expected) in [(&hex, "hex points"), (&texts, "fsst"), (&runs, "dict+rle")] {
            let values: Vec<&str> = owned.iter().map(String::as_str).collect();
            for validity in [None, Some(validity.clone())] {
                let c = Column::encode_strings(&values, validity.clone());
                let p = Column::encode_strings_plain(&values, validity.clone());
                assert!(plain_name(&c).starts_with(expected), "{}", plain_name(&c));
                assert_eq!(decode(&c), decode(&p));
                assert_eq!(c.zone, p.zone);
                // Through distinct values and ids, the same column.
                let mut distinct: Vec<&str> = Vec::new();
                let ids: Vec<u32> = (0..n)
                    .map(|i| {
                        if validity.as_ref().is_some_and(|v| !v.get(i)) {
                            return 0;
                        }
                        match distinct.iter().position(|d| *d == values[i]) {
                            Some(k) => k as u32,
                            None if distinct.len() < 200 => {
                                distinct.push(values[i]);
                                distinct.len() as u32 - 1
                            }
                            None => u32::MAX,
                        }
                    })
                    .collect();
                if !ids.contains(&u32::MAX) {
                    let d = Column::encode_string_ids(&distinct, &ids, validity.clone());
                    assert_eq!(d.encoding_name(), c.encoding_name());
                    assert_eq!(decode(&d), decode(&c));
                }
            }
        }
    }
}
