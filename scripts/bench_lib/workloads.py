"""Reads the workload files in benches/workloads/ (format: README.md there).

Every engine runs the same file: a statement without a `-- for:` line before
it is shared; `-- for: ENGINE [ENGINE…]` gives engines their own dialect, and
`-- for: polars python` a Python expression over `pl` and the tables.
"""

import os
import re
from dataclasses import dataclass, field

ENGINES = ("katydid", "duckdb", "clickhouse", "polars")
WORKLOAD_ORDER = ("taxi", "taxi_f32", "star", "iot", "numbers", "kv", "shapes", "clickbench", "tpch",
                  "join", "groupby", "tlc")


@dataclass
class Query:
    """One query of a workload: its SQL per engine and how answers compare."""

    workload: str
    name: str
    default: str | None = None
    by_engine: dict = field(default_factory=dict)  # engine -> (kind, text)
    check: str = ""
    about: str = ""
    pending: str = ""  # why katydid cannot answer yet (a known gap)

    @property
    def id(self):
        return f"{self.workload}/{self.name}"

    def statement(self, engine):
        """(kind, text) for `engine`: kind is "sql" or "python"."""
        if engine in self.by_engine:
            return self.by_engine[engine]
        if self.default is None:
            raise ValueError(f"query {self.id} has no statement for {engine}")
        return ("sql", self.default)

    def check_mode(self):
        """The comparison: ("rows",), ("ordered",), ("limit", n),
        ("topn", [cols]), ("ties", [cols]) or ("approx", rel)."""
        if self.check:
            word, _, rest = self.check.partition(" ")
            rest = rest.strip()
            if word == "limit":
                return ("limit", int(rest))
            if word in ("topn", "ties"):
                cols = [c.strip() for c in rest.split(",") if c.strip()]
                if not cols:
                    raise ValueError(f"query {self.id}: `{word}` needs a column")
                return (word, cols)
            if word == "approx":
                return ("approx", float(rest))
            if word in ("rows", "ordered"):
                return (word,)
            raise ValueError(f"query {self.id}: unknown check {self.check!r}")
        if re.search(r"\border\s+by\b", self.default or "", re.IGNORECASE):
            return ("ordered",)
        return ("rows",)


@dataclass
class Lookup:
    """A lookup series: a statement template with `{key}` or `{keys}`."""

    workload: str
    name: str
    template: str = ""
    keys: int = 1
    hits: int = 1
    about: str = ""

    @property
    def id(self):
        return f"{self.workload}/{self.name}"


@dataclass
class Workload:
    name: str
    tables: list = field(default_factory=list)  # (table name, dataset)
    queries: list = field(default_factory=list)
    lookups: list = field(default_factory=list)


def parse(path):
    """Parses one workload file into a Workload named after the file."""
    name = os.path.splitext(os.path.basename(path))[0]
    w = Workload(name)
    current = None  # Query or Lookup
    engines = None  # engines the next statement is for, None = shared
    kind = "sql"
    buf = []
    open_key = None  # "about" or "pending" while its text may continue

    def flush():
        nonlocal buf, engines, kind
        text = " ".join(line.strip() for line in buf).strip()
        buf = []
        if not text:
            return
        if current is None:
            raise ValueError(f"{path}: statement outside a query: {text[:40]!r}")
        text = text.rstrip(";").strip()
        if isinstance(current, Lookup):
            current.template = text
        elif engines is None:
            current.default = text
        else:
            for e in engines:
                current.by_engine[e] = (kind, text)
        engines = None
        kind = "sql"

    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for raw in lines:
        line = raw.strip()
        m = re.match(r"^--\s*(\w+):\s*(.*)$", line)
        if m and m.group(1) in ("table", "query", "lookup", "for", "check",
                                "about", "pending", "keys", "hits"):
            key, value = m.group(1), m.group(2).strip()
            flush()
            open_key = key if key in ("about", "pending") else None
            if key == "table":
                table, dataset = value.split()
                w.tables.append((table, dataset))
            elif key == "query":
                current = Query(name, value)
                w.queries.append(current)
            elif key == "lookup":
                current = Lookup(name, value)
                w.lookups.append(current)
            elif key == "for":
                words = value.split()
                kind = "python" if "python" in words else "sql"
                engines = [e for e in words if e != "python"]
                unknown = [e for e in engines if e not in ENGINES]
                if unknown:
                    raise ValueError(f"{path}: unknown engine(s) {unknown}")
            elif key == "check":
                current.check = value
            elif key == "about":
                current.about = value
            elif key == "pending":
                if not isinstance(current, Query):
                    raise ValueError(f"{path}: `-- pending:` outside a query")
                current.pending = value
            elif key == "keys":
                current.keys = int(value)
            elif key == "hits":
                current.hits = int(value)
            continue
        if line.startswith("--"):
            if open_key and current is not None and line[2:].strip():
                setattr(current, open_key,
                        getattr(current, open_key) + " " + line[2:].strip())
            continue
        open_key = None
        if not line:
            continue
        buf.append(line)
        if line.endswith(";"):
            flush()
    flush()
    return w


def load_all(directory):
    """All workloads in `directory`, in the canonical order."""
    found = {}
    for fname in os.listdir(directory):
        if fname.endswith(".sql"):
            w = parse(os.path.join(directory, fname))
            found[w.name] = w
    order = [n for n in WORKLOAD_ORDER if n in found] + sorted(
        n for n in found if n not in WORKLOAD_ORDER)
    return [found[n] for n in order]
