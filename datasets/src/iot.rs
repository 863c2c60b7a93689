//! The `iot` data set: truck readings shaped like the TSBS "iot" use case
//! (<https://github.com/timescale/tsbs>), one CSV row per reading with the
//! truck's tags repeated.
//!
//! # Shapes
//! - `K = clamp(rows, 1, 1000)` trucks named `truck_0` … `truck_{K-1}`.
//!   Row `i` (0-based) is truck `i mod K` in round `i / K`; round `r` is at
//!   2016-01-01 00:00:00 + 60·r seconds, so `time` ascends and every complete
//!   round has exactly one reading per truck. The last round is partial when
//!   `K` does not divide `rows`.
//! - Tags (`fleet`, `driver`, `model`, `device_version`) are fixed per truck
//!   and each is NULL for about 2 % of trucks; `load_capacity`,
//!   `fuel_capacity` and `nominal_fuel_consumption` (integers) come with the
//!   model (NULL when the model is).
//! - Measurements follow smooth random paths per truck (value noise over the
//!   round number, so any row can be computed without its predecessors):
//!   `latitude` in [0, 90] and `longitude` in [0, 180] with five decimals,
//!   within about ±3 degrees of the truck's fleet depot (the `Central` depot
//!   is at 7.775 N, 14.925 E); `elevation` 0–5000 (one decimal), `velocity`
//!   0–100, `heading` 0–360, `grade` 0–100 and `fuel_consumption` 0–50 (two
//!   decimals). Each measurement is empty (NULL) in about 1 % of rows.

use rand::RngCore;

use crate::out::{Out, days_from_civil, hash, unit};

/// The header line, with its line break.
pub(crate) const HEADER: &str = "time,name,fleet,driver,model,device_version,load_capacity,\
fuel_capacity,nominal_fuel_consumption,latitude,longitude,elevation,velocity,heading,grade,\
fuel_consumption\n";

/// Typical bytes per row, for buffer sizing.
pub(crate) const ROW_BYTES: usize = 150;

/// Fleet names and their depots (latitude, longitude).
const FLEETS: [(&str, f64, f64); 5] = [
    ("East", 45.6, 150.1),
    ("West", 35.3, 30.8),
    ("North", 70.2, 95.5),
    ("South", 20.4, 160.3),
    ("Central", 7.775, 14.925),
];
const DRIVERS: [&str; 12] = [
    "Albert", "Derek", "Rodney", "Trish", "Seth", "Andy", "Annie", "Zack", "Nina", "Igor", "Maria",
    "Paul",
];
/// Models with load capacity, fuel capacity and nominal fuel consumption.
const MODELS: [(&str, i64, i64, i64); 3] = [
    ("F-150", 2000, 200, 15),
    ("G-2000", 5000, 300, 19),
    ("H-2", 1500, 150, 12),
];
const VERSIONS: [&str; 4] = ["v1.0", "v1.5", "v2.0", "v2.3"];

/// The number of trucks for a data set of `rows` rows.
pub(crate) fn trucks(rows: u64) -> u64 {
    rows.clamp(1, 1000)
}

struct Truck {
    name: String,
    fleet: Option<&'static str>,
    driver: Option<&'static str>,
    model: Option<(&'static str, i64, i64, i64)>,
    version: Option<&'static str>,
    /// Where the truck's path is centred.
    lat0: f64,
    lon0: f64,
    nominal: f64,
    key: u64,
}

/// Per-call truck table.
pub(crate) struct Iot {
    start: i64,
    trucks: Vec<Truck>,
}

/// Smooth noise in [-1, 1]: random values at integer knots of `x`, joined by
/// smoothstep interpolation ("value noise").
fn noise(key: u64, x: f64) -> f64 {
    let k = x.floor();
    let f = x - k;
    let a = unit(hash(&[key, k as u64])) * 2.0 - 1.0;
    let b = unit(hash(&[key, k as u64 + 1])) * 2.0 - 1.0;
    a + (b - a) * (f * f * (3.0 - 2.0 * f))
}

impl Iot {
    pub(crate) fn new(rows: u64, seed: u64) -> Iot {
        let trucks = (0..trucks(rows))
            .map(|t| {
                let h = |k: u64| hash(&[seed, 0x5452_5543, t, k]);
                let tag = |k: u64| unit(h(100 + k)) >= 0.02;
                let fleet = h(1) as usize % FLEETS.len();
                let model = MODELS[h(3) as usize % MODELS.len()];
                Truck {
                    name: format!("truck_{t}"),
                    fleet: tag(1).then_some(FLEETS[fleet].0),
                    driver: tag(2).then_some(DRIVERS[h(2) as usize % DRIVERS.len()]),
                    model: tag(3).then_some(model),
                    version: tag(4).then_some(VERSIONS[h(4) as usize % VERSIONS.len()]),
                    lat0: FLEETS[fleet].1 + (unit(h(5)) - 0.5) * 2.0,
                    lon0: FLEETS[fleet].2 + (unit(h(6)) - 0.5) * 2.0,
                    nominal: model.3 as f64,
                    key: h(7),
                }
            })
            .collect();
        Iot {
            start: days_from_civil(2016, 1, 1) * 86_400,
            trucks,
        }
    }

    /// Appends rows `first..first + n` (0-based) to `out`.
    pub(crate) fn rows(&self, first: u64, n: u64, rng: &mut impl RngCore, out: &mut Out) {
        let k = self.trucks.len() as u64;
        for i in first..first + n {
            let round = i / k;
            let truck = &self.trucks[(i % k) as usize];
            out.timestamp(self.start + 60 * round as i64);
            out.comma();
            out.s(&truck.name);
            for tag in [
                truck.fleet,
                truck.driver,
                truck.model.map(|m| m.0),
                truck.version,
            ] {
                out.comma();
                out.s(tag.unwrap_or(""));
            }
            match truck.model {
                Some((_, load, fuel, nominal)) => {
                    for v in [load, fuel, nominal] {
                        out.comma();
                        out.int(v);
                    }
                }
                None => out.s(",,,"),
            }

            let r = round as f64;
            let key = |k: u64| truck.key ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let lat =
                (truck.lat0 + 1.2 * noise(key(1), r / 720.0) + 0.25 * noise(key(2), r / 45.0))
                    .clamp(0.0, 90.0);
            let lon = (truck.lon0 + 1.5 * noise(key(3), r / 720.0) + 0.3 * noise(key(4), r / 45.0))
                .clamp(0.0, 180.0);
            let elevation =
                (500.0 + 400.0 * noise(key(5), r / 600.0) + 50.0 * noise(key(6), r / 30.0))
                    .clamp(0.0, 5000.0);
            let velocity = (50.0 + 55.0 * noise(key(7), r / 20.0)).clamp(0.0, 100.0);
            let heading = (180.0 + 360.0 * noise(key(8), r / 50.0)).rem_euclid(360.0);
            let grade = (50.0 + 50.0 * noise(key(9), r / 40.0)).clamp(0.0, 100.0);
            let fuel = (truck.nominal + 12.0 * noise(key(10), r / 15.0)).clamp(0.0, 50.0);
            let fields = [
                (lat, 5),
                (lon, 5),
                (elevation, 1),
                (velocity, 2),
                (heading, 2),
                (grade, 2),
                (fuel, 2),
            ];
            // Seven 9-bit draws: NULL when below 5 of 512 (about 1 %).
            let mut bits = rng.next_u64();
            for (value, decimals) in fields {
                out.comma();
                if bits & 511 >= 5 {
                    let scaled = (value * 10f64.powi(decimals)).round() as i64;
                    out.fixed(scaled, decimals as u32);
                }
                bits >>= 9;
            }
            out.nl();
        }
    }
}
