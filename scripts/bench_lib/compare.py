"""Answer checks across engines.

Rows are compared after normalising each engine's result:
- `rows` (default): as sorted lists of rows (no ORDER BY, so any order is right);
- `ordered`: in the order returned;
- `limit N`: LIMIT without ORDER BY; when fewer than N rows match, as `rows`,
  otherwise any N matching rows are right and only the row count is compared;
- `topn COL`: ORDER BY … LIMIT [OFFSET] with ties possible, COL naming
  the sort key: the row count and the sorted values of COL; and the rows
  whose key lies strictly between the smallest and largest key returned,
  which every correct answer must hold, as sorted lists of whole rows (only
  rows tied with the first or last key may differ);
- `ties COL`: ORDER BY without LIMIT where ties can come in any order: the
  rows as sorted lists, and the values of COL in the order returned;
- `approx REL`: approximate distinct counts, equal within a relative REL or
  within APPROX_ABS (estimates of small counts), rows sorted first so they
  pair up by their group keys.
COL is a column name (case-insensitive), `#N` the N-th column (from 1, for
names engines spell differently, like count(*)), or several of them
separated by commas.
Values: integers exactly; a float against a number within a relative
tolerance of FLOAT_REL (sums add in different orders on different engines);
strings and timestamps (as `YYYY-MM-DD HH:MM:SS` text) exactly, a date
(`YYYY-MM-DD`) equal to the timestamp of its midnight (engines that read a
date column as a timestamp); NULL only equals NULL. Column names are not
compared.
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
    return (2, 0, _midnight(str(v)))


def row_key(row):
    return tuple(_sort_key(v) for v in row)


APPROX_ABS = 3


def values_equal(a, b, rel=FLOAT_REL, approx_ints=False):
    """Equality of two result values; `approx_ints` lets integers differ
    within `rel`, or by at most APPROX_ABS (estimates of small counts),
    too (approximate counts)."""
    if a is None or b is None:
        return a is None and b is None
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        if isinstance(a, int) and isinstance(b, int):
            if not approx_ints:
                return a == b
            if abs(a - b) <= APPROX_ABS:
                return True
        a, b = float(a), float(b)
        return abs(a - b) <= max(FLOAT_ABS, rel * max(abs(a), abs(b)))
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b) if isinstance(a, (bool, int)) and isinstance(b, (bool, int)) else False
    a, b = str(a), str(b)
    return a == b or _midnight(a) == b or a == _midnight(b)


def _midnight(text):
    """`YYYY-MM-DD` as the timestamp of its midnight; anything else as is."""
    if len(text) == 10 and text[4] == "-" and text[7] == "-" and text[:4].isdigit():
        return text + " 00:00:00"
    return text


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
    """Indices of `names` in the result's columns: a name (case-insensitive)
    or `#N`, the N-th column from 1. None when one is missing."""
    cols = [c.lower() for c in result.get("columns", [])]
    idx = []
    for n in names:
        if n.startswith("#") and n[1:].isdigit():
            i = int(n[1:]) - 1
            if not 0 <= i < len(cols):
                return None
            idx.append(i)
        elif n.lower() in cols:
            idx.append(cols.index(n.lower()))
        else:
            return None
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
    if kind in ("topn", "ties"):
        if len(a) != len(b):
            return f"{got} {len(b)} rows, {exp} {len(a)}"
        ia, ib = _columns(ref, mode[1]), _columns(other, mode[1])
        if ia is None or ib is None:
            return f"no column {', '.join(mode[1])}"
        ka = [tuple(r[i] for i in ia) for r in a]
        kb = [tuple(r[i] for i in ib) for r in b]
        if kind == "ties":
            if not rows_equal(ka, kb):
                return (f"{'/'.join(mode[1])} in another order: {got} "
                        f"{_short([v[0] for v in kb[:5]])}…, {exp} {_short([v[0] for v in ka[:5]])}…")
        else:
            va, vb = sorted(ka, key=row_key), sorted(kb, key=row_key)
            if not rows_equal(va, vb):
                return (f"{'/'.join(mode[1])} values differ: {got} {_short([v[0] for v in vb[:5]])}…, "
                        f"{exp} {_short([v[0] for v in va[:5]])}…")
            if not va:
                return None
            # Rows tied with the first or last key may be any of the tied
            # rows; every other row must be there.
            ends = [va[0], va[-1]]

            def inner(rows, keys):
                return [r for r, k in zip(rows, keys)
                        if not any(rows_equal([k], [e]) for e in ends)]
            a, b = inner(a, ka), inner(b, kb)
        kind = "rows"
    if kind == "approx":
        # No ORDER BY: sorted, so rows pair up by their exact leading
        # columns (the group keys).
        if len(a) != len(b):
            return f"{got} {len(b)} rows, {exp} {len(a)}"
        a, b = sorted(a, key=row_key), sorted(b, key=row_key)
        for x, y in zip(a, b):
            if not rows_equal([x], [y], rel=mode[1], approx_ints=True):
                return f"{got} {_short(y)}, {exp} {_short(x)}, not within {mode[1]:g}"
        return None
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
