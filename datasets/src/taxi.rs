//! The `taxi` data set: NYC taxi trips in the 51-column layout of the
//! `nyc-taxi-trips-2013-sample.csv.gz` reference sample.
//!
//! # Shapes
//! - `trip_id` is the 1-based row number.
//! - `pickup_datetime` ascends over 2009-01-01 00:00:00 … 2015-12-31 23:59:59:
//!   row `i` of `n` falls in `[S + i·T/n, S + (i+1)·T/n)` where `S` is the
//!   start and `T` the seven-year span, so any prefix of rows covers the same
//!   fraction of time. `dropoff_datetime` is 1 minute to 2 hours later,
//!   derived from distance and a random speed.
//! - `cab_type` is `yellow` or `green` in runs of `clamp(n / 256, 8, 4096)`
//!   rows; green runs (35 %) only from 2013-08-01, when green cabs began.
//! - Money columns (`fare_amount` … `total_amount`) have exactly two
//!   decimals and follow the NYC tariff loosely (meter by distance and time,
//!   JFK flat fare for `rate_code_id` 2, MTA tax from 2009-03, improvement
//!   surcharge from 2015); `total_amount` is their sum. About 0.02 % of trips
//!   are outliers with fares of $200–$950.
//! - Geography: pickup and dropoff neighbourhoods (195 NTAs, Zipf-distributed
//!   with exponent 1 over a yellow or green popularity ranking), a census
//!   tract inside it, coordinates near the tract centre with six decimals,
//!   and the `pickup` / `dropoff` columns as the point's EWKB hex (SRID 4326)
//!   as in the sample. About 2 % (yellow) or 6 % (green) of locations are
//!   NULL, and 0.3 % more have coordinates but no tract.
//! - Weather columns are a deterministic function of (seed, day).

use rand::RngCore;

use crate::nta::{Geography, geography};
use crate::out::{Discrete, Out, chance, days_from_civil, hash, normal, range, uniform, unit};

/// The header line, with its line break.
pub(crate) const HEADER: &str = "trip_id,vendor_id,pickup_datetime,dropoff_datetime,\
store_and_fwd_flag,rate_code_id,pickup_longitude,pickup_latitude,dropoff_longitude,\
dropoff_latitude,passenger_count,trip_distance,fare_amount,extra,mta_tax,tip_amount,\
tolls_amount,ehail_fee,improvement_surcharge,total_amount,payment_type,trip_type,pickup,\
dropoff,cab_type,precipitation,snow_depth,snowfall,max_temperature,min_temperature,\
average_wind_speed,pickup_nyct2010_gid,pickup_ctlabel,pickup_borocode,pickup_boroname,\
pickup_ct2010,pickup_boroct2010,pickup_cdeligibil,pickup_ntacode,pickup_ntaname,\
pickup_puma,dropoff_nyct2010_gid,dropoff_ctlabel,dropoff_borocode,dropoff_boroname,\
dropoff_ct2010,dropoff_boroct2010,dropoff_cdeligibil,dropoff_ntacode,dropoff_ntaname,\
dropoff_puma\n";

/// Typical bytes per row, for buffer sizing.
pub(crate) const ROW_BYTES: usize = 480;

const DAY: i64 = 86_400;

fn day_secs(y: i64, m: u32, d: u32) -> i64 {
    days_from_civil(y, m, d) * DAY
}

/// Per-call constants: time bounds, distributions and the geography.
pub(crate) struct Taxi {
    seed: u64,
    rows: u64,
    start: i64,
    span: i64,
    run_len: u64,
    green_start: i64,
    mta_start: i64,
    fare_2012: i64,
    tolls_2011: i64,
    surcharge_start: i64,
    passengers: Discrete,
    rate_codes: Discrete,
    yellow_nta: Discrete,
    green_nta: Discrete,
    geo: &'static Geography,
    /// Coordinates rounded to f32 and printed as doubles (`taxi-f32`).
    single: bool,
}

const PASSENGERS: [u8; 10] = [1, 2, 5, 3, 6, 4, 0, 7, 8, 9];
const PASSENGER_WEIGHTS: [f64; 10] = [
    7010.0, 1400.0, 600.0, 420.0, 300.0, 200.0, 50.0, 10.0, 5.0, 5.0,
];
const RATE_CODES: [u8; 7] = [1, 2, 3, 4, 5, 6, 99];
const RATE_WEIGHTS: [f64; 7] = [9650.0, 180.0, 30.0, 10.0, 120.0, 5.0, 5.0];

/// One day's weather.
#[derive(Clone, Copy)]
struct Weather {
    day: i64,
    precip_c: i64,
    snow_depth: i64,
    snowfall_tenths: i64,
    tmax: i64,
    tmin: i64,
    wind_c: i64,
}

/// A resolved trip end: neighbourhood, tract, coordinates (micro-degrees).
struct Place {
    nta: usize,
    tract: usize,
    lat: i64,
    lon: i64,
    /// Coordinates present but outside every tract.
    no_tract: bool,
}

impl Taxi {
    /// `single`: float32 coordinates (`taxi-f32`); the rows are otherwise
    /// the same, draw for draw.
    pub(crate) fn new(rows: u64, seed: u64, single: bool) -> Taxi {
        let start = day_secs(2009, 1, 1);
        let geo = geography();
        Taxi {
            seed,
            rows,
            start,
            span: day_secs(2016, 1, 1) - start,
            run_len: (rows / 256).clamp(8, 4096),
            green_start: day_secs(2013, 8, 1),
            mta_start: day_secs(2009, 3, 1),
            fare_2012: day_secs(2012, 9, 4),
            tolls_2011: day_secs(2011, 1, 1),
            surcharge_start: day_secs(2015, 1, 1),
            passengers: Discrete::new(&PASSENGER_WEIGHTS),
            rate_codes: Discrete::new(&RATE_WEIGHTS),
            yellow_nta: Discrete::zipf(geo.ntas.len(), 1.0),
            green_nta: Discrete::zipf(geo.ntas.len(), 0.8),
            geo,
            single,
        }
    }

    /// Start of row `i`'s time slot, in seconds since the epoch.
    fn slot(&self, i: u64) -> i64 {
        self.start + (u128::from(i) * self.span as u128 / u128::from(self.rows.max(1))) as i64
    }

    fn weather(&self, day: i64) -> Weather {
        let h = |k: u64| hash(&[self.seed, 0x5745_4154, day as u64, k]);
        // Coldest around January 20.
        let season = -((day - 19) as f64 * std::f64::consts::TAU / 365.2425).cos();
        let tmax = (62.0 + 21.0 * season + (unit(h(1)) - 0.5) * 16.0).round() as i64;
        let tmin = tmax - 8 - (unit(h(2)) * 12.0) as i64;
        let wet = unit(h(3)) < 0.33;
        let precip_c = if wet {
            ((unit(h(4)) * 5.7).exp()).round() as i64
        } else {
            0
        };
        let snowy = tmin < 33;
        Weather {
            day,
            precip_c,
            snow_depth: if tmax < 38 { (h(5) % 10) as i64 } else { 0 },
            snowfall_tenths: if wet && snowy { precip_c } else { 0 },
            tmax,
            tmin,
            wind_c: 150 + (unit(h(6)).powi(2) * 1100.0) as i64,
        }
    }

    fn place(&self, rng: &mut impl RngCore, green: bool, forced: Option<usize>) -> Option<Place> {
        if chance(rng, if green { 0.06 } else { 0.02 }) {
            return None;
        }
        let nta = forced.unwrap_or_else(|| {
            if green {
                self.geo.green_rank[self.green_nta.sample(rng)]
            } else {
                self.geo.yellow_rank[self.yellow_nta.sample(rng)]
            }
        });
        let tracts = &self.geo.ntas[nta].tracts;
        // Geometric choice of tract: the first ones are the busiest.
        let r = rng.next_u32() | 1 << 31;
        let tract = (r.trailing_zeros() as usize) % tracts.len();
        let t = &tracts[tract];
        Some(Place {
            nta,
            tract,
            lat: t.lat + (normal(rng) * 1500.0) as i64,
            lon: t.lon + (normal(rng) * 1800.0) as i64,
            no_tract: chance(rng, 0.003),
        })
    }

    /// Appends rows `first..first + n` (0-based) to `out`.
    pub(crate) fn rows(&self, first: u64, n: u64, rng: &mut impl RngCore, out: &mut Out) {
        let mut weather = self.weather(self.slot(first).div_euclid(DAY));
        let mut next_slot = self.slot(first);
        for i in first..first + n {
            let slot = next_slot;
            next_slot = self.slot(i + 1);
            let pickup = if next_slot > slot {
                slot + range(rng, 0, next_slot - slot - 1)
            } else {
                slot
            };
            let day = pickup.div_euclid(DAY);
            if day != weather.day {
                weather = self.weather(day);
            }
            self.row(i, pickup, &weather, rng, out);
        }
    }

    fn row(&self, i: u64, pickup: i64, w: &Weather, rng: &mut impl RngCore, out: &mut Out) {
        let green = pickup >= self.green_start
            && unit(hash(&[self.seed, 0x4341_4221, i / self.run_len])) < 0.35;
        let rate = RATE_CODES[self.rate_codes.sample(rng)];
        let passengers = PASSENGERS[self.passengers.sample(rng)];

        // Distance (hundredths of a mile) and duration (seconds).
        let dist_c: i64 = if rate == 2 {
            range(rng, 1500, 2200)
        } else if chance(rng, 0.03) {
            0
        } else {
            let mut miles = 1.7 * (0.75 * normal(rng)).exp();
            if chance(rng, 0.002) {
                miles = 20.0 + uniform(rng) * 80.0;
            }
            ((miles * 100.0).round() as i64).clamp(1, 10_000)
        };
        let secs = if dist_c == 0 {
            range(rng, 60, 1500)
        } else {
            let mph = 11.0 * (0.3 * normal(rng)).exp();
            let travel = dist_c as f64 / 100.0 / mph * 3600.0;
            (travel as i64 + range(rng, 30, 180)).clamp(60, 7200)
        };
        let dropoff = pickup + secs;

        // Money, in cents.
        let per_mile = if pickup < self.fare_2012 { 200 } else { 250 };
        let meter = 250 + per_mile * dist_c / 100 + 10 * secs / 60;
        let mut fare = match rate {
            2 if pickup < self.fare_2012 => 4500,
            2 => 5200,
            3 => meter * 2 + 1500,
            4 => meter * 2,
            5 => range(rng, 10, 150) * 100,
            _ => meter,
        };
        fare = (fare + 25) / 50 * 50;
        if chance(rng, 0.0002) {
            fare = range(rng, 200, 950) * 100;
        }
        let sod = pickup.rem_euclid(DAY);
        let hour = sod / 3600;
        let weekday = (pickup.div_euclid(DAY) + 4).rem_euclid(7); // 0 = Sunday
        let extra = if !(6..20).contains(&hour) {
            50
        } else if (1..=5).contains(&weekday) && (16..20).contains(&hour) {
            100
        } else {
            0
        };
        let mta_tax = if pickup < self.mta_start || rate == 5 {
            0
        } else {
            50
        };
        let tolls = if chance(rng, if rate == 2 { 0.3 } else { 0.04 }) {
            let one = if pickup < self.tolls_2011 { 450 } else { 533 };
            if chance(rng, 0.05) { 2 * one } else { one }
        } else {
            0
        };
        let surcharge = (pickup >= self.surcharge_start).then_some(30);
        let ehail = (green && chance(rng, 0.02)).then_some(0);
        let frac = (pickup - self.start) as f64 / self.span as f64;
        let p_credit = 0.30 + 0.35 * frac;
        let u = uniform(rng);
        let payment = if u < p_credit {
            1
        } else if u < p_credit + 0.005 {
            3
        } else if u < p_credit + 0.007 {
            4
        } else {
            2
        };
        let tip = if payment == 1 && !chance(rng, 0.1) {
            (fare as f64 * (0.10 + 0.20 * uniform(rng))).round() as i64
        } else {
            0
        };
        let total =
            fare + extra + mta_tax + tip + tolls + surcharge.unwrap_or(0) + ehail.unwrap_or(0);

        let vendor = {
            let v = uniform(rng);
            if green {
                if v < 0.1 { "CMT" } else { "VTS" }
            } else if pickup < self.tolls_2011 && v < 0.06 {
                "DDS"
            } else if v < 0.53 {
                "CMT"
            } else {
                "VTS"
            }
        };
        let flag = {
            let v = uniform(rng);
            if v < 0.97 {
                "N"
            } else if v < 0.98 {
                "Y"
            } else {
                ""
            }
        };
        let from = self.place(rng, green, None);
        let to_airport = (rate == 2).then_some(self.geo.airport);
        let same = match &from {
            Some(p) if chance(rng, 0.25) => Some(p.nta),
            _ => None,
        };
        let to = self.place(rng, green, to_airport.or(same));

        out.int(i + 1);
        out.comma();
        out.s(vendor);
        out.comma();
        out.timestamp(pickup);
        out.comma();
        out.timestamp(dropoff);
        out.comma();
        out.s(flag);
        out.comma();
        out.int(rate);
        out.comma();
        for p in [&from, &to] {
            match p {
                Some(p) if self.single => {
                    out.float(single(p.lon));
                    out.comma();
                    out.float(single(p.lat));
                    out.comma();
                }
                Some(p) => {
                    out.fixed(p.lon, 6);
                    out.comma();
                    out.fixed(p.lat, 6);
                    out.comma();
                }
                None => out.s(",,"),
            }
        }
        out.int(passengers);
        out.comma();
        out.fixed(dist_c, 2);
        for cents in [fare, extra, mta_tax, tip, tolls] {
            out.comma();
            out.fixed(cents, 2);
        }
        for cents in [ehail, surcharge] {
            out.comma();
            if let Some(c) = cents {
                out.fixed(c, 2);
            }
        }
        out.comma();
        out.fixed(total, 2);
        out.comma();
        out.int(payment);
        out.comma();
        if green {
            out.int(if chance(rng, 0.97) { 1 } else { 2 });
        }
        for p in [&from, &to] {
            out.comma();
            if let Some(p) = p {
                if self.single {
                    ewkb_point(out, single(p.lon), single(p.lat));
                } else {
                    ewkb_point(out, p.lon as f64 / 1e6, p.lat as f64 / 1e6);
                }
            }
        }
        out.comma();
        out.s(if green { "green" } else { "yellow" });
        out.comma();
        out.fixed(w.precip_c, 2);
        out.comma();
        out.int(w.snow_depth);
        out.comma();
        out.fixed(w.snowfall_tenths, 1);
        out.comma();
        out.int(w.tmax);
        out.comma();
        out.int(w.tmin);
        out.comma();
        out.fixed(w.wind_c, 2);
        for p in [&from, &to] {
            match p {
                Some(p) if !p.no_tract => {
                    let nta = &self.geo.ntas[p.nta];
                    let t = &nta.tracts[p.tract];
                    out.comma();
                    out.int(t.gid);
                    out.comma();
                    out.s(&t.ctlabel);
                    out.comma();
                    out.int(nta.borocode);
                    out.comma();
                    out.s(nta.boroname);
                    out.comma();
                    out.s(&t.ct2010);
                    out.comma();
                    out.int(t.boroct2010);
                    out.comma();
                    out.s(t.cdeligibil);
                    out.comma();
                    out.s(nta.code);
                    out.comma();
                    out.s(nta.name);
                    out.comma();
                    out.int(nta.puma);
                }
                _ => out.s(",,,,,,,,,,"),
            }
        }
        out.nl();
    }
}

/// Writes a point as PostGIS extended WKB in hex: little-endian, type Point
/// with the SRID flag, SRID 4326, then x (longitude) and y (latitude) as f64.
fn ewkb_point(out: &mut Out, lon: f64, lat: f64) {
    out.s("0101000020E6100000");
    out.hex(&lon.to_le_bytes());
    out.hex(&lat.to_le_bytes());
}

/// Micro-degrees as the nearest f32, widened back to f64 (`taxi-f32`).
fn single(micro: i64) -> f64 {
    (micro as f64 / 1e6) as f32 as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ewkb_matches_the_sample_encoding() {
        // A row of the 2013 sample: longitude, latitude and the `pickup` text.
        let mut o = Out::with_capacity(64);
        o.s("0101000020E6100000");
        o.hex(&(-73.93792724609375f64).to_le_bytes());
        o.hex(&(40.757843017578125f64).to_le_bytes());
        assert_eq!(
            std::str::from_utf8(&o.buf).unwrap(),
            "0101000020E610000000000000077C52C00000000001614440"
        );
        let mut o = Out::with_capacity(64);
        ewkb_point(&mut o, -73.937927, 40.757843);
        assert!(
            std::str::from_utf8(&o.buf)
                .unwrap()
                .starts_with("0101000020E6100000")
        );
        assert_eq!(o.buf.len(), 50);
    }

    #[test]
    fn header_has_51_columns() {
        assert_eq!(HEADER.trim_end().split(',').count(), 51);
    }
}
