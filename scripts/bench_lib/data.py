"""Data sets: sizes per scale, generation on demand, lookup keys.

Files live in `.bench-data/` (git-ignored) as `<dataset>-<rows>.csv`, made
by `katydid generate` (seed 42) when missing; the same bytes feed every
engine. The multi-table sets are directories named in workload files as
`SET/TABLE`: `tpch/lineitem` is `.bench-data/tpch-sf<SF>/lineitem.csv`
(`katydid generate tpch --sf SF`), `join/x` is
`.bench-data/join-<rows>/x.csv` (`katydid generate join --rows N`), and
`tlc/yellow_tripdata_2024-01.parquet` (a TABLE with an extension names the
file as it is) is `.bench-data/tlc-<rows>/yellow_tripdata_2024-01.parquet`
(`katydid generate tlc --rows N`: TLC-like monthly Parquet files of N trips
each, one month of each schema the real files have had).

Sizes are rows per data set; for `tpch` the size is lineitem's row count,
from which `tpch_scale_factor` takes the scale factor (6M rows = SF 1).
"""

import json
import os
import random
import subprocess
import sys

SEED = 42
# Rows of the `zones` table (`katydid generate zones`, which takes no size).
ZONES_ROWS = 195

# Rows per data set for each scale. `default` fits a 2-core, 24 GiB machine
# and, with all three peers, finishes in a few minutes.
# `tpch` counts lineitem rows (SF 0.01, 0.1, 1, 10); `join` the rows of x
# (the targets: SF 1 and x at 10M, the default scale); `groupby` the
# rows of db-benchmark's groupby table (issue 33's targets: 10M, the default);
# `tlc` the trips of each monthly Parquet file (four are written); `zones`
# is the taxi trips' fixed lookup table of 195 neighbourhoods at every scale.
SCALES = {
    "smoke": {"taxi": 3_000, "taxi-f32": 3_000, "iot": 5_000, "numbers": 5_000, "kv": 5_000, "hits": 3_000,
              "shapes": 3_000, "tpch": 60_000, "join": 10_000, "groupby": 10_000, "tlc": 5_000,
              "zones": ZONES_ROWS},
    "small": {"taxi": 200_000, "taxi-f32": 200_000, "iot": 500_000, "numbers": 1_000_000, "kv": 500_000,
              "hits": 1_000_000, "shapes": 1_000_000, "tpch": 600_000, "join": 1_000_000,
              "groupby": 1_000_000, "tlc": 500_000, "zones": ZONES_ROWS},
    "default": {"taxi": 2_000_000, "taxi-f32": 2_000_000, "iot": 5_000_000, "numbers": 10_000_000, "kv": 5_000_000,
                "hits": 10_000_000, "shapes": 10_000_000, "tpch": 6_000_000, "join": 10_000_000,
                "groupby": 10_000_000, "tlc": 3_000_000, "zones": ZONES_ROWS},
    "large": {"taxi": 20_000_000, "taxi-f32": 20_000_000, "iot": 50_000_000, "numbers": 100_000_000, "kv": 20_000_000,
              "hits": 50_000_000, "shapes": 50_000_000, "tpch": 60_000_000, "join": 100_000_000,
              "groupby": 100_000_000, "tlc": 10_000_000, "zones": ZONES_ROWS},
}

# Lineitem rows per TPC-H scale factor (clause 4.2.5: about 6,000,000 × SF).
TPCH_ROWS_PER_SF = 6_000_000
# The smallest scale factor the suite uses: below it TPC-H's fixed tables
# (25 nations) outweigh the rest and several queries return nothing.
TPCH_MIN_SF = 0.01
# The fewest rows of x `katydid generate join` accepts.
JOIN_MIN_ROWS = 10


def base(dataset):
    """The generator of a data set name: `tpch` for `tpch/lineitem`,
    `taxi` for `taxi`."""
    return dataset.split("/", 1)[0]


def tpch_scale_factor(rows):
    """The TPC-H scale factor for a size of `rows` lineitem rows: rows / 6M
    to two significant digits, at least 0.01 (60k → 0.01, 600k → 0.1,
    6m → 1, 100k → 0.017, 1k → 0.01)."""
    return max(TPCH_MIN_SF, float(f"{rows / TPCH_ROWS_PER_SF:.2g}"))


def rows_for(scale, rows_arg):
    """Rows per data set from --scale and --rows (`N` for every data set, or
    `taxi=N,iot=M`)."""
    rows = dict(SCALES[scale])
    if rows_arg:
        for part in rows_arg.split(","):
            part = part.strip()
            if "=" in part:
                name, n = part.split("=", 1)
                if name not in rows:
                    raise SystemExit(f"bench: unknown data set {name!r} in --rows")
                rows[name] = _count(n)
            else:
                n = _count(part)
                rows = {k: n for k in rows}
    rows["zones"] = ZONES_ROWS  # a fixed table: no size to choose
    return rows


def _count(text):
    text = text.strip().replace("_", "").lower()
    mult = 1
    for suffix, m in (("k", 1_000), ("m", 1_000_000), ("g", 1_000_000_000)):
        if text.endswith(suffix):
            text, mult = text[:-1], m
    try:
        n = int(float(text) * mult)
    except ValueError:
        raise SystemExit(f"bench: bad row count {text!r}")
    if n < 1:
        raise SystemExit("bench: row counts must be at least 1")
    return n


def set_dir(data_dir, name, rows):
    """The directory of multi-table set `name` (tpch, join or tlc) at size
    `rows`."""
    if name == "tlc":
        return os.path.join(data_dir, f"tlc-{rows}")
    if name == "tpch":
        return os.path.join(data_dir, f"tpch-sf{tpch_scale_factor(rows):g}")
    if name == "join":
        return os.path.join(data_dir, f"join-{max(rows, JOIN_MIN_ROWS)}")
    raise SystemExit(f"bench: unknown multi-table data set {name!r}")


def ensure(katydid, data_dir, dataset, rows):
    """The path of the CSV of `dataset` with `rows` rows, generated if
    missing (written under a temporary name, then renamed). For `SET/TABLE`
    the whole set's directory is generated and the table's path returned."""
    os.makedirs(data_dir, exist_ok=True)
    if "/" in dataset:
        name, table = dataset.split("/", 1)
        directory = os.path.abspath(set_dir(data_dir, name, rows))
        path = os.path.join(directory, table if "." in table else f"{table}.csv")
        if not os.path.exists(directory):
            tmp = directory + ".tmp"
            if name == "tpch":
                size = ["--sf", f"{tpch_scale_factor(rows):g}"]
                what = f"TPC-H SF {tpch_scale_factor(rows):g}"
            elif name == "tlc":
                size = ["--rows", str(rows), "--seed", str(SEED)]
                what = f"TLC-like Parquet months ({rows:,} trips each)"
            else:
                size = ["--rows", str(max(rows, JOIN_MIN_ROWS)), "--seed", str(SEED)]
                what = f"join (x of {max(rows, JOIN_MIN_ROWS):,} rows)"
            print(f"bench: generating {what} into {directory}", file=sys.stderr)
            subprocess.run([katydid, "generate", name, *size, "--out", tmp], check=True,
                           stdout=sys.stderr)
            os.replace(tmp, directory)
        if not os.path.exists(path):
            raise SystemExit(f"bench: {path} is missing ({name} has no table {table!r}?)")
        return path
    path = os.path.abspath(os.path.join(data_dir, f"{dataset}-{rows}.csv"))
    if not os.path.exists(path):
        tmp = path + ".tmp"
        print(f"bench: generating {dataset} ({rows:,} rows) into {path}", file=sys.stderr)
        size = [] if dataset == "zones" else ["--rows", str(rows), "--seed", str(SEED)]
        subprocess.run([katydid, "generate", dataset, *size, "--out", tmp], check=True,
                       stdout=sys.stderr)
        os.replace(tmp, path)
    return path


def warm_page_cache(path, chunk=8 << 20):
    """Reads the file at `path` once and discards it, so that the load
    which follows reads from the operating system's page cache and times
    the engine's parsing, not the disk. The suite's files (10 GB at the
    default scale) do not all stay cached while peers hold their tables,
    and a cold 4 GB read runs at the disk's rate (about 280 MB/s here).
    A file that cannot be read is left to the engine's load to report."""
    try:
        with open(path, "rb", buffering=0) as f:
            while f.read(chunk):
                pass
    except OSError:
        pass


def lookup_keys(csv_path, lookups, count):
    """Keys for the lookup series of the kv workload, cached beside the CSV.

    For each lookup, one warm-up statement and `count` timed ones; each
    statement has `keys` ids of which `hits` are ids taken at random (without
    replacement over all series, or within each statement when the file has
    too few rows) from the file and the rest are random
    63-bit numbers (misses; a collision with one of the file's ids has
    probability about rows/2^63 per key and would show as an answer
    mismatch), shuffled. Returns {lookup name: [[ids of one statement], …]}
    with the warm-up statement first.
    """
    spec = [(lk.name, lk.keys, lk.hits) for lk in lookups]
    cache = f"{csv_path}.keys-{count}-" + "-".join(f"{n}.{k}.{h}" for n, k, h in spec) + ".json"
    if os.path.exists(cache):
        with open(cache) as f:
            return json.load(f)
    with open(csv_path, "rb") as f:
        rows = sum(1 for _ in f) - 1
    rng = random.Random(SEED)
    need = sum(h * (count + 1) for _, _, h in spec)
    if max(h for _, _, h in spec) > rows:
        raise SystemExit(f"bench: kv has {rows} rows, fewer than the hits of one lookup")
    if need <= rows:
        picked = rng.sample(range(rows), need)
    else:
        # Too few rows for distinct keys everywhere: distinct within each
        # statement only.
        picked = [r for _, _, h in spec for _ in range(count + 1)
                  for r in rng.sample(range(rows), h)]
    wanted = {}
    for i, r in enumerate(picked):
        wanted.setdefault(r, []).append(i)
    ids = [None] * need
    with open(csv_path, "rb") as f:
        next(f)
        for r, line in enumerate(f):
            for i in wanted.get(r, ()):
                ids[i] = int(line.split(b",", 1)[0])
    out = {}
    at = 0
    for name, keys, hits in spec:
        stmts = []
        for _ in range(count + 1):
            ks = ids[at:at + hits]
            at += hits
            ks += [rng.randrange(0, 1 << 63) for _ in range(keys - hits)]
            rng.shuffle(ks)
            stmts.append(ks)
        out[name] = stmts
    with open(cache + ".tmp", "w") as f:
        json.dump(out, f)
    os.replace(cache + ".tmp", cache)
    return out


def lookup_statements(template, key_lists):
    """The SQL texts of a lookup series from its template and key lists."""
    out = []
    for ks in key_lists:
        out.append(template.replace("{key}", str(ks[0])).replace(
            "{keys}", ", ".join(str(k) for k in ks)))
    return out
