//! The `hits` data set: web-analytics page views shaped like the `hits`
//! table of ClickBench (<https://github.com/ClickHouse/ClickBench>), with
//! the 25 columns its 43 queries name, in the order of ClickBench's schema.
//!
//! # Shapes
//! - `EventTime` ascends over July 2013 (2013-07-01 00:00:00 …
//!   2013-07-31 23:59:59) with a daily cycle: row `i` of `n` sits at the
//!   fraction `(i + ½)/n` of the month's traffic (the same share per day);
//!   within a day the rate peaks at 15:00 (1.75 times the day's mean) and is
//!   lowest at 03:00 (a quarter of the mean). `EventDate` is its date
//!   (`YYYY-MM-DD`).
//! - `CounterID` (the site) is skewed: counter 62 has 15 % of the rows, the
//!   other 9,999 counters share the rest by Zipf's law (exponent 1.05).
//!   Counter ranks 3, 11 and 40 are `www.google.ru`, `google.com` and
//!   `maps.google.com`.
//! - `URL` is a page of the row's site: page `k` of a site with `P` pages
//!   (`P` = a sixth of the site's expected rows, at least 2) is drawn as
//!   `⌊P·u³⌋` for uniform `u`, so a site's home page (page 0) is its most
//!   visited. A page's URL, `Title` and `URLHash` are functions of (site,
//!   page); URLs and titles are 20–200 characters, about 1 % of page URLs
//!   carry `utm_source=google`, and about 1 % of titles mention Google. About
//!   0.5 % of URLs and 1 % of titles are empty strings.
//! - `URLHash` of counter 62's home page is 2868770270353813622 and of its
//!   page 1 is 3594120000172545465; `RefererHash` is the `URLHash` of the
//!   page a referer points to, so ClickBench's queries 41 and 42 select rows.
//! - `UserID` is heavy-tailed: user rank `⌊U·u^2.5⌋` over `U = n/10` users,
//!   which leaves about one distinct user per 10 rows; the user of rank
//!   `U/100` is 435090932899640449. Each user has a region (`RegionID`,
//!   Zipf over 2,000 regions), a home `ClientIP` (used by 92 % of its rows),
//!   a screen width (`ResolutionWidth`) and, for 12 % of users, a mobile
//!   phone (`MobilePhone` > 0 and a `MobilePhoneModel`; otherwise 0 and the
//!   empty string).
//! - `SearchPhrase` is the empty string in 85 % of rows; the others draw a
//!   phrase of 1–4 words by rank `⌊(n/12)·u^2.5⌋`, with a search engine
//!   (`SearchEngineID`, mostly 2 and 3; 0 for 5 % of them, a site search) and
//!   a search-engine `Referer` (`TraficSourceID` 2).
//! - The other rows come from ads (2 %: `AdvEngineID` > 0, `TraficSourceID`
//!   3), the same site (`-1`, a `Referer` on the same site), nowhere
//!   (`0`, empty `Referer`: the most common), another site's page (`1`),
//!   social networks (`6`) or rarer sources (4, 5, 7–9).
//! - Flags are mostly 0: `IsRefresh` 8 %, `DontCountHits` 3 %, `IsLink`
//!   2 %, `IsDownload` 0.5 %. `WindowClientWidth` is up to 400 pixels less
//!   than the screen width and `WindowClientHeight` 300–1300 (both 0 when
//!   the screen width is unknown, 0).
//! - `WatchID` is a unique pseudo-random 63-bit id, except that about 0.1 %
//!   of rows repeat the previous row's `WatchID` and `ClientIP` (a page view
//!   counted twice).
//!
//! No field is NULL; empty strings are written as `""` (PostgreSQL's `COPY`
//! rule: a quoted empty field is an empty string, an unquoted one NULL).

use rand::RngCore;

use crate::out::{Discrete, ID_MASK, Out, chance, days_from_civil, hash, id63, range, uniform};

/// The header line, with its line break.
pub(crate) const HEADER: &str = "WatchID,Title,EventTime,EventDate,CounterID,ClientIP,\
RegionID,UserID,URL,Referer,IsRefresh,ResolutionWidth,MobilePhone,MobilePhoneModel,\
TraficSourceID,SearchEngineID,SearchPhrase,AdvEngineID,WindowClientWidth,\
WindowClientHeight,IsLink,IsDownload,DontCountHits,RefererHash,URLHash\n";

/// Typical bytes per row, for buffer sizing.
pub(crate) const ROW_BYTES: usize = 330;

/// The `URLHash` of counter 62's home page (ClickBench query 42).
const HOME_URL_HASH: i64 = 2_868_770_270_353_813_622;
/// The `URLHash` of counter 62's page 1, the `RefererHash` of ClickBench
/// query 41.
const PAGE1_URL_HASH: i64 = 3_594_120_000_172_545_465;
/// The `UserID` of ClickBench query 20.
const QUERY20_USER: u64 = 435_090_932_899_640_449;

const COUNTERS: usize = 10_000;
// Site names are spelled from 15 bits (see `Hits::new`).
const _: () = assert!(COUNTERS <= 1 << 15);
/// Share of counter 62 (rank 0).
const TOP_COUNTER_SHARE: f64 = 0.15;
const REGIONS: usize = 2_000;
const MONTH_START: (i64, u32, u32) = (2013, 7, 1);
const MONTH_DAYS: i64 = 31;

/// Short English words for paths, titles and search phrases (no comma,
/// quote or space inside).
const WORDS: [&str; 128] = [
    "news",
    "sport",
    "weather",
    "music",
    "video",
    "games",
    "cars",
    "travel",
    "health",
    "money",
    "food",
    "recipes",
    "movies",
    "books",
    "science",
    "tech",
    "phones",
    "laptops",
    "tickets",
    "hotels",
    "flights",
    "jobs",
    "rent",
    "flats",
    "houses",
    "garden",
    "fashion",
    "shoes",
    "bags",
    "watch",
    "kids",
    "toys",
    "school",
    "exam",
    "maps",
    "city",
    "moscow",
    "london",
    "paris",
    "berlin",
    "summer",
    "winter",
    "holiday",
    "beach",
    "mountain",
    "river",
    "forest",
    "cats",
    "dogs",
    "birds",
    "fish",
    "horse",
    "football",
    "hockey",
    "tennis",
    "chess",
    "poker",
    "lottery",
    "bank",
    "credit",
    "loan",
    "insurance",
    "taxi",
    "bus",
    "train",
    "metro",
    "airport",
    "visa",
    "passport",
    "doctor",
    "dentist",
    "pharmacy",
    "vitamins",
    "diet",
    "fitness",
    "yoga",
    "dance",
    "guitar",
    "piano",
    "concert",
    "theatre",
    "museum",
    "history",
    "war",
    "peace",
    "love",
    "wedding",
    "dress",
    "ring",
    "gold",
    "silver",
    "coins",
    "stamps",
    "art",
    "photo",
    "camera",
    "lens",
    "tv",
    "radio",
    "online",
    "free",
    "download",
    "torrent",
    "cheap",
    "best",
    "new",
    "old",
    "top",
    "review",
    "price",
    "sale",
    "buy",
    "sell",
    "market",
    "shop",
    "delivery",
    "pizza",
    "sushi",
    "coffee",
    "tea",
    "wine",
    "beer",
    "cake",
    "bread",
    "soup",
    "salad",
    "recipe",
    "forum",
];

const SYLLABLES: [&str; 32] = [
    "ka", "ty", "did", "mo", "ra", "zo", "vi", "lan", "pro", "net", "mir", "sky", "bel", "tor",
    "gaz", "ro", "mix", "ve", "nu", "lo", "ter", "sol", "dar", "ki", "mak", "sib", "al", "ex",
    "fin", "po", "ru", "star",
];
const TLDS: [&str; 6] = [".ru", ".com", ".net", ".org", ".ua", ".su"];

/// Search engines: id, URL prefix before the phrase, suffix after it, weight.
const ENGINES: [(i64, &str, &str, f64); 6] = [
    (2, "http://yandex.ru/yandsearch?text=", "&lr=213", 55.0),
    (
        3,
        "https://www.google.ru/search?q=",
        "&ie=UTF-8&oe=UTF-8",
        30.0,
    ),
    (4, "http://go.mail.ru/search?q=", "&where=any", 7.0),
    (5, "http://nova.rambler.ru/search?query=", "", 4.0),
    (6, "http://www.bing.com/search?q=", "&form=QBLH", 2.0),
    (13, "http://search.qip.ru/search?query=", "", 2.0),
];
const AD_ENGINES: [i64; 8] = [2, 13, 27, 4, 16, 7, 30, 12];
const SOCIAL: [&str; 3] = [
    "https://vk.com/away.php?to=",
    "http://www.facebook.com/l.php?u=",
    "https://ok.ru/dk?st.cmd=outLinkWarning&st.rfn=",
];
/// Screen widths and their weights (0: unknown).
const RESOLUTIONS: [(i64, f64); 11] = [
    (1920, 25.0),
    (1366, 20.0),
    (1280, 15.0),
    (1024, 8.0),
    (1440, 8.0),
    (1600, 7.0),
    (1680, 5.0),
    (360, 4.0),
    (320, 3.0),
    (768, 3.0),
    (0, 2.0),
];
const PHONE_MODELS: [&str; 16] = [
    "iPad",
    "iPhone",
    "GT-I9300",
    "GT-I9100",
    "GT-N7100",
    "HTC One",
    "Lumia 920",
    "Nexus 4",
    "Nexus 7",
    "Xperia Z",
    "GT-S5830",
    "GT-P5100",
    "Galaxy Tab",
    "Kindle Fire",
    "Desire HD",
    "Optimus G",
];

/// A site: one counter.
struct Site {
    id: i64,
    scheme: &'static str,
    domain: String,
    /// How titles name the site.
    name: String,
    /// Pages of the site (at least 2).
    pages: u64,
}

/// Per-call constants: sites, distributions and the daily traffic curve.
pub(crate) struct Hits {
    seed: u64,
    rows: u64,
    start: i64,
    counters: Discrete,
    sites: Vec<Site>,
    users: u64,
    query20_rank: u64,
    phrases: u64,
    regions: Discrete,
    region_ids: Vec<i64>,
    resolutions: Discrete,
    models: Discrete,
    engines: Discrete,
    ad_engines: Discrete,
    /// Cumulative share of a day's traffic at the start of each minute
    /// (1,441 entries, from 0 to 1).
    day_curve: Vec<f64>,
    watch_key: u64,
    user_key: u64,
}

/// One row's page view, before it is written.
struct View {
    site: usize,
    page: u64,
}

/// Scratch buffers for the text columns of one row.
#[derive(Default)]
pub(crate) struct Scratch {
    url: Vec<u8>,
    title: Vec<u8>,
    referer: Vec<u8>,
}

impl Hits {
    pub(crate) fn new(rows: u64, seed: u64) -> Hits {
        let h = |k: u64| hash(&[seed, 0x4849_5453, k]);
        let mut weights = vec![TOP_COUNTER_SHARE];
        let zipf: Vec<f64> = (1..COUNTERS).map(|r| (r as f64).powf(-1.05)).collect();
        let total: f64 = zipf.iter().sum();
        weights.extend(zipf.iter().map(|w| w / total * (1.0 - TOP_COUNTER_SHARE)));
        let counters = Discrete::new(&weights);
        let sites = (0..COUNTERS)
            .map(|r| {
                let expected = rows as f64 * counters.share(r);
                let pages = ((expected / 6.0) as u64).max(2);
                let sh = hash(&[seed, 0x5349_5445, r as u64]);
                let (domain, name) = match r {
                    3 => ("www.google.ru".to_string(), "Google".to_string()),
                    11 => ("google.com".to_string(), "Google".to_string()),
                    40 => ("maps.google.com".to_string(), "Google Maps".to_string()),
                    _ => {
                        // Three syllables spelling the base-32 digits of a
                        // bijection of the rank modulo 2^15: distinct sites
                        // get distinct names.
                        let code = (r as u64 * 7_919 + h(3)) % (1 << 15);
                        let core: String = (0..3)
                            .map(|j| SYLLABLES[(code >> (5 * j)) as usize % SYLLABLES.len()])
                            .collect();
                        let www = if sh >> 40 & 1 == 1 { "www." } else { "" };
                        let tld = TLDS[(sh >> 48) as usize % TLDS.len()];
                        let mut name = core.clone();
                        name[..1].make_ascii_uppercase();
                        (format!("{www}{core}{tld}"), name)
                    }
                };
                Site {
                    id: counter_id(r),
                    scheme: if sh >> 56 & 3 == 0 {
                        "https://"
                    } else {
                        "http://"
                    },
                    domain,
                    name,
                    pages,
                }
            })
            .collect();
        let users = (rows / 10).max(1);
        let region_w: Vec<f64> = (1..=REGIONS).map(|r| (r as f64).powf(-1.1)).collect();
        let region_ids = (0..REGIONS).map(region_id).collect();
        let day_curve = {
            let w: Vec<f64> = (0..1440)
                .map(|m| {
                    let x = m as f64 / 1440.0 - 15.0 / 24.0;
                    1.0 + 0.75 * (x * std::f64::consts::TAU).cos()
                })
                .collect();
            let total: f64 = w.iter().sum();
            let mut acc = 0.0;
            let mut curve = vec![0.0];
            for x in &w {
                acc += x / total;
                curve.push(acc);
            }
            curve[1440] = 1.0;
            curve
        };
        Hits {
            seed,
            rows,
            start: days_from_civil(MONTH_START.0, MONTH_START.1, MONTH_START.2) * 86_400,
            counters,
            sites,
            users,
            query20_rank: users / 100,
            phrases: (rows / 12).max(1),
            regions: Discrete::new(&region_w),
            region_ids,
            resolutions: Discrete::new(&RESOLUTIONS.map(|r| r.1)),
            models: Discrete::zipf(PHONE_MODELS.len(), 1.0),
            engines: Discrete::new(&ENGINES.map(|e| e.3)),
            ad_engines: Discrete::zipf(AD_ENGINES.len(), 1.2),
            day_curve,
            watch_key: h(1) & ID_MASK,
            user_key: h(2) & ID_MASK,
        }
    }

    /// `EventTime` of row `i`, in seconds since the epoch.
    fn time(&self, i: u64) -> i64 {
        let f = (i as f64 + 0.5) / self.rows.max(1) as f64 * MONTH_DAYS as f64;
        let day = (f.floor() as i64).clamp(0, MONTH_DAYS - 1);
        let g = (f - day as f64).clamp(0.0, 1.0);
        let c = &self.day_curve;
        let m = (c.partition_point(|&x| x <= g) - 1).min(1439);
        let within = (g - c[m]) / (c[m + 1] - c[m]);
        let sec = (60.0 * (m as f64 + within.clamp(0.0, 1.0))) as i64;
        self.start + day * 86_400 + sec.min(86_399)
    }

    /// A page of site `site`, most visited first (page 0 is the home page).
    fn page(&self, rng: &mut impl RngCore, site: usize) -> u64 {
        let pages = self.sites[site].pages;
        let u = uniform(rng);
        ((pages as f64 * u * u * u) as u64).min(pages - 1)
    }

    /// The hash of a page's URL (`URLHash`, and `RefererHash` of a referer
    /// that points to it).
    fn page_hash(&self, view: &View) -> i64 {
        match (view.site, view.page) {
            (0, 0) => HOME_URL_HASH,
            (0, 1) => PAGE1_URL_HASH,
            (s, p) => hash(&[self.seed, 0x5552_4C48, s as u64, p]) as i64,
        }
    }

    /// Writes the URL of a page (20–200 bytes) to `buf`.
    fn url(&self, view: &View, buf: &mut Vec<u8>) {
        let start = buf.len();
        let site = &self.sites[view.site];
        buf.extend_from_slice(site.scheme.as_bytes());
        buf.extend_from_slice(site.domain.as_bytes());
        buf.push(b'/');
        if view.page > 0 {
            let h = hash(&[self.seed, 0x5041_4745, view.site as u64, view.page]);
            let section = hash(&[self.seed, 0x5345_4354, view.site as u64, h % 12]);
            buf.extend_from_slice(word(section).as_bytes());
            buf.push(b'/');
            let n = 1 + (h >> 8) % 5;
            for j in 0..n {
                if j > 0 {
                    buf.push(b'-');
                }
                buf.extend_from_slice(word(h >> (12 + 7 * j)).as_bytes());
            }
            buf.push(b'-');
            buf.extend_from_slice(itoa::Buffer::new().format(view.page).as_bytes());
            buf.extend_from_slice(b".html");
            match (h >> 48) % 1000 {
                0..10 => {
                    buf.extend_from_slice(b"?utm_source=google&utm_medium=cpc&utm_campaign=");
                    buf.extend_from_slice(word(h >> 20).as_bytes());
                }
                10..40 => {
                    buf.extend_from_slice(b"?from=");
                    buf.extend_from_slice(word(h >> 24).as_bytes());
                    buf.extend_from_slice(b"&sid=");
                    hex(buf, hash(&[h, 1]));
                    hex(buf, hash(&[h, 2]));
                }
                40..140 => {
                    buf.extend_from_slice(b"?page=");
                    buf.extend_from_slice(itoa::Buffer::new().format(h % 20 + 2).as_bytes());
                    buf.extend_from_slice(b"&sort=");
                    buf.extend_from_slice(word(h >> 28).as_bytes());
                }
                _ => {}
            }
        }
        if buf.len() - start < 20 {
            buf.extend_from_slice(b"index.html");
        }
        buf.truncate(start + 200);
    }

    /// Writes the title of a page (20–200 bytes, or empty for 1 % of pages).
    fn title(&self, view: &View, buf: &mut Vec<u8>) {
        let h = hash(&[self.seed, 0x5449_544C, view.site as u64, view.page]);
        if h.is_multiple_of(100) {
            return;
        }
        let start = buf.len();
        let site = &self.sites[view.site];
        let words = |buf: &mut Vec<u8>, n: u64, bits: u64| {
            for j in 0..n {
                if j > 0 {
                    buf.push(b' ');
                }
                let at = buf.len();
                buf.extend_from_slice(word(hash(&[bits, j])).as_bytes());
                if j == 0 {
                    buf[at].make_ascii_uppercase();
                }
            }
        };
        if view.page == 0 {
            buf.extend_from_slice(site.name.as_bytes());
            buf.extend_from_slice(b" - ");
            words(buf, 3 + (h >> 8) % 6, h);
        } else {
            words(buf, 2 + (h >> 8) % 14, h);
            buf.extend_from_slice(b" - ");
            buf.extend_from_slice(site.name.as_bytes());
        }
        if (h >> 16).is_multiple_of(100) {
            buf.extend_from_slice(b" on Google Maps");
        }
        if buf.len() - start < 20 {
            buf.extend_from_slice(b" - official site");
        }
        buf.truncate(start + 200);
    }

    /// Appends rows `first..first + n` (0-based) to `out`.
    pub(crate) fn rows(&self, first: u64, n: u64, rng: &mut impl RngCore, out: &mut Out) {
        let mut s = Scratch::default();
        let mut previous: Option<(u64, i32)> = None;
        for i in first..first + n {
            previous = Some(self.row(i, previous, rng, &mut s, out));
        }
    }

    /// Writes row `i`; returns its `WatchID` and `ClientIP`, which the next
    /// row may repeat.
    fn row(
        &self,
        i: u64,
        previous: Option<(u64, i32)>,
        rng: &mut impl RngCore,
        s: &mut Scratch,
        out: &mut Out,
    ) -> (u64, i32) {
        let time = self.time(i);
        let day = time.div_euclid(86_400) as u64;
        let site = self.counters.sample(rng);
        let view = View {
            site,
            page: self.page(rng, site),
        };

        // The user and what comes with it.
        let u = uniform(rng);
        let rank = ((self.users as f64 * u.powf(2.5)) as u64).min(self.users - 1);
        let user_id = if rank == self.query20_rank {
            QUERY20_USER
        } else {
            id63(rank + 1, self.user_key)
        };
        let uh = hash(&[self.seed, 0x5553_4552, rank]);
        let region = self.region_ids[self.regions.pick(uh as u32)];
        let mut ip = if chance(rng, 0.08) {
            hash(&[self.seed, 0x4950, rank, day]) as u32 as i32
        } else {
            hash(&[self.seed, 0x4950, rank]) as u32 as i32
        };
        let (phone, model) = if (uh >> 32) % 100 < 12 {
            let m = self.models.pick(hash(&[uh, 1]) as u32);
            (1 + (hash(&[uh, 2]) % 9) as i64, PHONE_MODELS[m])
        } else {
            (0, "")
        };
        let resolution = RESOLUTIONS[self.resolutions.pick(hash(&[uh, 3]) as u32)].0;

        // Where the view came from.
        let phrase = chance(rng, 0.15).then(|| {
            let u = uniform(rng);
            ((self.phrases as f64 * u.powf(2.5)) as u64).min(self.phrases - 1)
        });
        s.referer.clear();
        let mut engine = 0;
        let mut adv = 0;
        let (source, referer_hash) = if let Some(p) = phrase {
            if chance(rng, 0.95) {
                let e = &ENGINES[self.engines.sample(rng)];
                engine = e.0;
                s.referer.extend_from_slice(e.1.as_bytes());
                self.phrase(p, b'+', &mut s.referer);
                s.referer.extend_from_slice(e.2.as_bytes());
                s.referer.truncate(200);
                (2, hash(&[self.seed, 0x5345_4152, engine as u64, p]) as i64)
            } else {
                let from = View {
                    site,
                    page: self.page(rng, site),
                };
                self.url(&from, &mut s.referer);
                (-1, self.page_hash(&from))
            }
        } else if chance(rng, 0.02) {
            adv = AD_ENGINES[self.ad_engines.sample(rng)];
            let h = rng.next_u64();
            s.referer.extend_from_slice(b"http://an.yandex.ru/count/");
            hex(&mut s.referer, h);
            hex(&mut s.referer, hash(&[h, 1]));
            (3, hash(&[self.seed, 0x4144, h]) as i64)
        } else {
            let u = uniform(rng);
            if u < 0.20 {
                let from = View {
                    site,
                    page: self.page(rng, site),
                };
                self.url(&from, &mut s.referer);
                (-1, self.page_hash(&from))
            } else if u < 0.75 {
                (0, self.empty_hash())
            } else if u < 0.90 {
                let other = self.counters.sample(rng);
                let from = View {
                    site: other,
                    page: self.page(rng, other),
                };
                self.url(&from, &mut s.referer);
                (1, self.page_hash(&from))
            } else if u < 0.94 {
                let which = (rng.next_u32() % 3) as u64;
                s.referer
                    .extend_from_slice(SOCIAL[which as usize].as_bytes());
                self.url(&view, &mut s.referer);
                s.referer.truncate(200);
                let h = self.page_hash(&view) as u64;
                (6, hash(&[self.seed, 0x534F_4349, which, h]) as i64)
            } else if u < 0.97 {
                (4, self.empty_hash())
            } else if u < 0.99 {
                let h = rng.next_u64();
                s.referer.extend_from_slice(b"https://e.mail.ru/message/");
                hex(&mut s.referer, h);
                (5, hash(&[self.seed, 0x4D41_494C, h]) as i64)
            } else {
                (range(rng, 7, 9), self.empty_hash())
            }
        };

        // Flags: four 16-bit draws.
        let bits = rng.next_u64();
        let flag = |k: u32, per_65536: u64| i32::from((bits >> (16 * k)) & 0xFFFF < per_65536);
        let refresh = flag(0, 5243); // 8 %
        let dont_count = flag(1, 1966); // 3 %
        let link = flag(2, 1311); // 2 %
        let download = flag(3, 328); // 0.5 %
        let (win_w, win_h) = if resolution == 0 {
            (0, 0)
        } else {
            (
                resolution - range(rng, 0, (resolution - 1).min(400)),
                range(rng, 300, 1300),
            )
        };

        let mut watch = id63(i + 1, self.watch_key);
        if let Some((w, p)) = previous
            && chance(rng, 0.001)
        {
            watch = w;
            ip = p;
        }

        s.url.clear();
        if !chance(rng, 0.005) {
            self.url(&view, &mut s.url);
        }
        s.title.clear();
        self.title(&view, &mut s.title);

        out.int(watch);
        out.comma();
        out.text(&s.title);
        out.comma();
        out.timestamp(time);
        out.comma();
        out.date(time);
        out.comma();
        out.int(self.sites[site].id);
        out.comma();
        out.int(ip);
        out.comma();
        out.int(region);
        out.comma();
        out.int(user_id);
        out.comma();
        out.text(&s.url);
        out.comma();
        out.text(&s.referer);
        out.comma();
        out.int(refresh);
        out.comma();
        out.int(resolution);
        out.comma();
        out.int(phone);
        out.comma();
        out.text(model.as_bytes());
        out.comma();
        out.int(source);
        out.comma();
        out.int(engine);
        out.comma();
        s.title.clear();
        if let Some(p) = phrase {
            self.phrase(p, b' ', &mut s.title);
        }
        out.text(&s.title);
        out.comma();
        out.int(adv);
        out.comma();
        out.int(win_w);
        out.comma();
        out.int(win_h);
        out.comma();
        out.int(link);
        out.comma();
        out.int(download);
        out.comma();
        out.int(dont_count);
        out.comma();
        out.int(referer_hash);
        out.comma();
        out.int(self.page_hash(&view));
        out.nl();
        (watch, ip)
    }

    /// Writes search phrase `p` (1–4 words) with `sep` between words.
    fn phrase(&self, p: u64, sep: u8, buf: &mut Vec<u8>) {
        let h = hash(&[self.seed, 0x5048_5241, p]);
        for j in 0..1 + h % 4 {
            if j > 0 {
                buf.push(sep);
            }
            buf.extend_from_slice(word(hash(&[h, j])).as_bytes());
        }
    }

    /// `RefererHash` of an empty referer.
    fn empty_hash(&self) -> i64 {
        hash(&[self.seed, 0x454D_5054]) as i64
    }
}

/// A word chosen by the low bits of `h`.
fn word(h: u64) -> &'static str {
    WORDS[(h % WORDS.len() as u64) as usize]
}

/// Appends `v` as 16 lower-case hex digits.
fn hex(buf: &mut Vec<u8>, v: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for k in (0..16).rev() {
        buf.push(DIGITS[(v >> (4 * k) & 15) as usize]);
    }
}

/// `CounterID` of counter rank `r`: 62 for rank 0, distinct ids from 100 on
/// for the others (a multiplicative permutation modulo the prime 999,983).
fn counter_id(r: usize) -> i64 {
    if r == 0 {
        62
    } else {
        100 + (r as i64 * 48_271) % 999_983
    }
}

/// `RegionID` of region rank `r`: the first ranks are ClickBench's most
/// frequent regions, the rest distinct ids from 300 on.
fn region_id(r: usize) -> i64 {
    match r {
        0 => 229,
        1 => 2,
        2 => 208,
        3 => 1,
        4 => 34,
        _ => 300 + (r as i64 * 7_919) % 20_011,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_has_25_columns() {
        assert_eq!(HEADER.trim_end().split(',').count(), 25);
    }

    #[test]
    fn ids_are_distinct() {
        let counters: std::collections::HashSet<i64> = (0..COUNTERS).map(counter_id).collect();
        assert_eq!(counters.len(), COUNTERS);
        let regions: std::collections::HashSet<i64> = (0..REGIONS).map(region_id).collect();
        assert_eq!(regions.len(), REGIONS);
    }

    #[test]
    fn time_ascends_over_july_with_a_daily_cycle() {
        let h = Hits::new(1_000_000, 1);
        let mut prev = i64::MIN;
        let mut per_hour = [0u32; 24];
        for i in (0..1_000_000).step_by(7) {
            let t = h.time(i);
            assert!(t >= prev);
            prev = t;
            per_hour[(t.rem_euclid(86_400) / 3600) as usize] += 1;
        }
        assert!((h.start..h.start + 60).contains(&h.time(0)));
        assert!(h.time(999_999) < h.start + 31 * 86_400);
        assert!(per_hour[15] > 3 * per_hour[3], "{per_hour:?}");
    }
}
