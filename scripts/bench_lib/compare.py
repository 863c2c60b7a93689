"""Answer checks across engines.

Rows are compared after normalising each engine's result:
- `rows` (default): as sorted lists of rows (no ORDER BY, so any order is right);
- `ordered`: in the order returned;
- `limit N`: LIMIT without ORDER BY; when fewer than N rows match, as `rows`,
  otherwise any N matching rows are right and only the row count is compared;
- `topn COL`: ORDER BY … LIMIT with ties possible: the row count and the
  sorted values of the named column(s) only;
- `approx REL`: approximate distinct counts, equal within a relative REL.
Values: integers exactly; a float against a number within a relative
tolerance of FLOAT_REL (sums add in different orders on different engines);
strings and timestamps (as `YYYY-MM-DD HH:MM:SS` text) exactly; NULL only
equals NULL. Column names are not compared.
"""

FLOAT_REL = 1e-6
FLOAT_ABS = 1e-9


def _sort_key(v):
    if v is None:
        return (0, 0, "")
    if isinstance(v, bool):
        return (1, float(v), "")
    if isinstance(v, (int, float)):
        return (1, float(v), "")
    return (2, 0, str(v))


def row_key(row):
    return tuple(_sort_key(v) for v in row)


def values_equal(a, b, rel=FLOAT_REL, approx_ints=False):
    """Equality of two result values; `approx_ints` lets integers differ
    within `rel` too (approximate counts)."""
    if a is None or b is None:
        return a is None and b is None
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        if isinstance(a, int) and isinstance(b, int) and not approx_ints:
            return a == b
        a, b = float(a), float(b)
        return abs(a - b) <= max(FLOAT_ABS, rel * max(abs(a), abs(b)))
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b) if isinstance(a, (bool, int)) and isinstance(b, (bool, int)) else False
    return str(a) == str(b)


def rows_equal(ra, rb, rel=FLOAT_REL, approx_ints=False):
    if len(ra) != len(rb):
        return False
    for x, y in zip(ra, rb):
        if len(x) != len(y):
            return False
        if not all(values_equal(a, b, rel, approx_ints) for a, b in zip(x, y)):
            return False
    return True


def _columns(result, names):
    """Indices of `names` in the result's columns (case-insensitive)."""
    cols = [c.lower() for c in result["columns"]]
    idx = []
    for n in names:
        if n.lower() not in cols:
            return None
        idx.append(cols.index(n.lower()))
    return idx


def compare(mode, ref, other, ref_name="expected", other_name="got"):
    """None when `other` agrees with `ref` under `mode`, else a short reason
    naming the two sides `other_name` and `ref_name`."""
    got, exp = other_name, ref_name
    a, b = ref["rows"], other["rows"]
    kind = mode[0]
    if kind == "limit":
        n = mode[1]
        if len(a) != len(b):
            return f"{got} {len(b)} rows, {exp} {len(a)}"
        if len(a) >= n:
            return None
        kind = "rows"
    if kind == "topn":
        if len(a) != len(b):
            return f"{got} {len(b)} rows, {exp} {len(a)}"
        ia, ib = _columns(ref, mode[1]), _columns(other, mode[1])
        if ia is None or ib is None:
            return f"no column {', '.join(mode[1])}"
        va = sorted((tuple(r[i] for i in ia) for r in a), key=row_key)
        vb = sorted((tuple(r[i] for i in ib) for r in b), key=row_key)
        if rows_equal(va, vb):
            return None
        return (f"{'/'.join(mode[1])} values differ: {got} {_short([v[0] for v in vb[:5]])}…, "
                f"{exp} {_short([v[0] for v in va[:5]])}…")
    if kind == "approx":
        if len(a) != len(b):
            return f"{got} {len(b)} rows, {exp} {len(a)}"
        if rows_equal(a, b, rel=mode[1], approx_ints=True):
            return None
        return (f"{got} {_short(b[0]) if b else '()'}, {exp} {_short(a[0]) if a else '()'}, "
                f"not within {mode[1]:g}")
    if kind == "rows":
        a = sorted(a, key=row_key)
        b = sorted(b, key=row_key)
    if len(a) != len(b):
        return f"{got} {len(b)} rows, {exp} {len(a)}"
    if not rows_equal(a, b):
        for i, (x, y) in enumerate(zip(a, b)):
            if not rows_equal([x], [y]):
                return f"row {i + 1}: {got} {_short(y)}, {exp} {_short(x)}"
    return None


def _short(row):
    text = ", ".join("NULL" if v is None else str(v) for v in row)
    return "(" + (text if len(text) < 80 else text[:77] + "...") + ")"


def check_query(mode, results):
    """Compares the answers of one query across engines.

    `results` maps engine -> result dict (only engines that answered).
    Returns (status, details): status "agree", "single" (one engine only)
    or "MISMATCH"; details lists, per disagreeing engine, the reason, and
    which engines agree with each other.
    """
    engines = list(results)
    if len(engines) < 2:
        return "single", []
    # Group engines into classes of agreeing answers (first member is the
    # representative).
    classes = []
    for e in engines:
        for cls in classes:
            if compare(mode, results[cls[0]], results[e]) is None:
                cls.append(e)
                break
        else:
            classes.append([e])
    if len(classes) == 1:
        return "agree", []
    classes.sort(key=lambda c: (-len(c), engines.index(c[0])))
    main = classes[0]
    details = []
    for cls in classes[1:]:
        reason = compare(mode, results[main[0]], results[cls[0]], main[0], cls[0])
        if len(cls) == len(main):
            who = f"{' + '.join(cls)} and {' + '.join(main)} differ"
        else:
            who = f"{' + '.join(cls)} disagree{'s' if len(cls) == 1 else ''} with " \
                f"{' + '.join(main)}"
        details.append(f"{who}: {reason}")
    return "MISMATCH", details
