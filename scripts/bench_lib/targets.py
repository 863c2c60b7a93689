"""The targets of issues 7, 10, 32 and 33 and the before/after comparison, from a
run's summary and benches/workloads/targets.json (the limits and the load
baseline live there, not in code).

Everything here is reported, never enforced. A target whose figures are
missing (a workload not run, a peer not asked for) is reported as not
measured ("–") with what it needs.
"""

import json
import math
import os

from . import compare
from .workloads import Query

TARGETS = os.path.join(os.path.dirname(__file__), "..", "..", "benches", "workloads",
                       "targets.json")


def load(path=TARGETS):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def per_query_limit(targets, workload):
    """The per-query limit (katydid / fastest peer) for `workload`, or None
    when the workload has none."""
    limits = targets["per_query_vs_fastest_peer"]
    return limits.get(workload, limits["default"])


def fraction(x):
    """A limit as text: ⅓, ½, or the number."""
    for value, text in ((1 / 3, "⅓"), (1 / 2, "½"), (2 / 3, "⅔")):
        if abs(x - value) < 1e-9:
            return text
    return f"{x:g}"


def _item(target, met, detail):
    return {"target": target, "met": met, "detail": detail}


def _k(q):
    return q["engines"].get("katydid", {})


def _ms(s):
    return f"{s * 1000:,.1f} ms" if s >= 0.1 else f"{s * 1000:.3g} ms"


def _queries(summary, workload):
    return [q for q in summary["queries"] if q["workload"] == workload]


def _peers(summary):
    return [e for e in summary["engines"] if e != "katydid"]


def _per_query(summary, targets, workload):
    """Every query of `workload` within its per-query limit against the
    fastest peer (targets.json's per_query_vs_fastest_peer)."""
    peers = _peers(summary)
    qs = _queries(summary, workload)
    limit = per_query_limit(targets, workload)
    name = f"{workload}: every query ≤ {fraction(limit)}× the fastest peer"
    if not qs:
        return _item(name, None, f"the {workload} workload did not run")
    if not peers:
        return _item(name, None, "no peers ran (--peers)")
    judged = [q for q in qs if q.get("target")]
    missed = [f"{q['name']} {q['target']['ratio']:.2f}× {q['target']['fastest_peer']}"
              for q in judged if not q["target"]["met"]]
    unanswered = [q["name"] for q in qs if _k(q).get("status") != "ok"]
    met = not missed and not unanswered and len(judged) == len(qs)
    detail = f"{len(judged) - len(missed)} of {len(qs)} met"
    if missed:
        detail += "; not met: " + ", ".join(missed)
    if unanswered:
        detail += "; katydid did not answer: " + ", ".join(unanswered)
    return _item(name, met, detail)


def _all_run(summary, workload):
    """Every query of `workload` answered by katydid."""
    qs = _queries(summary, workload)
    if not qs:
        return _item(f"{workload}: all queries run in katydid", None,
                     f"the {workload} workload did not run")
    failed = [q["name"] for q in qs if _k(q).get("status") != "ok"]
    return _item(f"{workload}: all {len(qs)} queries run in katydid", not failed,
                 f"{len(qs) - len(failed)} of {len(qs)} ran" + ("; not: " + ", ".join(failed)
                                                                 if failed else ""))


def _agree(doc, summary, workload, refs):
    """katydid's answers to `workload` equal to each peer's of `refs`."""
    qs = _queries(summary, workload)
    name = f"{workload}: answers agree with {', '.join(refs)}"
    missing = [r for r in refs if r not in _peers(summary)]
    if not qs or missing:
        return _item(name, None, f"needs the {workload} workload and --peers {','.join(refs)}")
    agree, differ = 0, []
    for q in qs:
        r = _result(doc, "katydid", q["id"])
        if r is None:
            continue
        peers = [_result(doc, ref, q["id"]) for ref in refs]
        if all(p is not None and compare.compare(_mode(q), p, r) is None for p in peers):
            agree += 1
        else:
            differ.append(q["name"])
    return _item(name, agree == len(qs), f"{agree} of {len(qs)} agree"
                 + ("; differ or a peer did not answer: " + ", ".join(differ) if differ else ""))


def _ratios(summary, workload, ref):
    """{query name: katydid / ref} over the queries both timed."""
    return {q["name"]: _k(q)["min_s"] / q["engines"][ref]["min_s"]
            for q in _queries(summary, workload)
            if ref in q["engines"] and _k(q).get("min_s") and q["engines"][ref].get("min_s")}


def _no_ratio(summary, workload, ref):
    """Why no query of `workload` has a katydid / ref ratio."""
    if not _queries(summary, workload) or ref not in _peers(summary):
        return f"needs the {workload} workload and --peers {ref}"
    return f"no query has both a katydid and a {ref} time"


def _geomean(summary, workload, ref, limit):
    """The geometric mean of katydid / ref over `workload` at most `limit`
    (met only when every query has both times)."""
    name = f"{workload}: geometric mean of katydid / {ref} ≤ {fraction(limit)}"
    ratios = list(_ratios(summary, workload, ref).values())
    total = len(_queries(summary, workload))
    if not ratios:
        return _item(name, None, _no_ratio(summary, workload, ref))
    g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return _item(name, g <= limit and len(ratios) == total,
                 f"{g:.2f} over {len(ratios)} of {total} queries")


def _sum_vs_fastest(summary, workload, ratio, count):
    """katydid's summed times over `workload` at most `ratio` of the fastest
    peer's sum (`count` names the queries when the workload did not run)."""
    peers = _peers(summary)
    qs = _queries(summary, workload)
    name = (f"{workload}: the sum of the {len(qs) or count} ≤ {fraction(ratio)} "
            "of the fastest peer's sum")
    k_times = [_k(q).get("min_s") for q in qs]
    sums = {p: sum(q["engines"][p]["min_s"] for q in qs)
            for p in peers if qs and all(q["engines"].get(p, {}).get("min_s") for q in qs)}
    if not qs or not peers:
        return _item(name, None, f"needs the {workload} workload and --peers")
    if None in k_times or not sums:
        return _item(name, None, "katydid or every peer lacks a time for some query")
    k_sum = sum(k_times)
    best = min(sums, key=sums.get)
    return _item(name, k_sum <= ratio * sums[best],
                 f"katydid {_ms(k_sum)}, {best} {_ms(sums[best])} ({k_sum / sums[best]:.2f}×)")


def issue7(doc, summary, targets):
    """The issue 7 targets: taxi, shapes and clickbench."""
    t7 = targets["issue7"]
    items = []
    peers = _peers(summary)

    # taxi
    items.append(_per_query(summary, targets, "taxi"))
    taxi = _queries(summary, "taxi")
    items.append(_sum_vs_fastest(summary, "taxi", t7["taxi_sum_vs_fastest_peer_sum"], "nine"))
    spec = t7["taxi_query_vs_peer"]
    name = f"taxi: {spec['query']} ≤ {fraction(spec['ratio'])}× {spec['peer']}"
    q = next((q for q in taxi if q["name"] == spec["query"]), None)
    if q is None or spec["peer"] not in peers:
        items.append(_item(name, None, f"needs the taxi workload and --peers {spec['peer']}"))
    elif not (_k(q).get("min_s") and q["engines"][spec["peer"]].get("min_s")):
        items.append(_item(name, None, "no time for one of them"))
    else:
        k, p = _k(q)["min_s"], q["engines"][spec["peer"]]["min_s"]
        items.append(_item(name, k <= spec["ratio"] * p,
                           f"katydid {_ms(k)}, {spec['peer']} {_ms(p)} ({k / p:.2f}×)"))

    # shapes
    items.append(_per_query(summary, targets, "shapes"))
    shapes = {q["name"]: q for q in _queries(summary, "shapes")}
    limit = t7["shapes_topn_ties_vs_unique"]
    name = f"shapes: top-n over 4 distinct keys ≤ {fraction(limit)}× the same over a unique key"
    if not shapes:
        items.append(_item(name, None, "the shapes workload did not run"))
    else:
        parts, met = [], True
        for ties, unique in t7["shapes_topn_pairs"]:
            a = _k(shapes.get(ties, {"engines": {}})).get("min_s")
            b = _k(shapes.get(unique, {"engines": {}})).get("min_s")
            if not (a and b):
                parts.append(f"{ties}: no time")
                met = None if met is not False else False
                continue
            parts.append(f"{ties} {a / b:.2f}× {unique}")
            if a > limit * b:
                met = False
        items.append(_item(name, met, "; ".join(parts)))

    # clickbench
    cb = _queries(summary, "clickbench")
    name = "clickbench: all queries run in katydid"
    if not cb:
        items.append(_item(name, None, "the clickbench workload did not run"))
    else:
        failed = [q["name"] for q in cb if _k(q).get("status") != "ok"]
        items.append(_item(f"clickbench: all {len(cb)} queries run in katydid", not failed,
                           f"{len(cb) - len(failed)} of {len(cb)} ran"
                           + ("; not: " + ", ".join(failed) if failed else "")))
    ref = t7["clickbench_reference"]
    name = f"clickbench: answers agree with {ref}"
    if not cb or ref not in peers:
        items.append(_item(name, None, f"needs the clickbench workload and --peers {ref}"))
    else:
        agree, differ = 0, []
        for q in cb:
            r = _result(doc, "katydid", q["id"])
            p = _result(doc, ref, q["id"])
            if r is None or p is None:
                continue
            if compare.compare(_mode(q), p, r) is None:
                agree += 1
            else:
                differ.append(q["name"])
        items.append(_item(name, agree == len(cb),
                           f"{agree} of {len(cb)} agree"
                           + ("; differ: " + ", ".join(differ) if differ else "")))
    limit = t7["clickbench_geomean_vs_reference"]
    name = f"clickbench: geometric mean of katydid / {ref} ≤ {fraction(limit)}"
    ratios = [_k(q)["min_s"] / q["engines"][ref]["min_s"] for q in cb
              if ref in q["engines"] and _k(q).get("min_s") and q["engines"][ref].get("min_s")]
    if not ratios:
        items.append(_item(name, None, f"needs the clickbench workload and --peers {ref}"))
    else:
        g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        items.append(_item(name, g <= limit and len(ratios) == len(cb),
                           f"{g:.2f} over {len(ratios)} of {len(cb)} queries"))
    return items


def issue32(doc, summary, targets):
    """The issue 32 targets: tpch (all 22 run and agree with DuckDB, the
    geometric mean and the worst query against DuckDB), join (all agree
    with every peer, each within the fastest peer's time) and star (the
    dimension join against the fact's own group-by and against DuckDB)."""
    t = targets["issue32"]
    ref = t["tpch_reference"]
    items = [_all_run(summary, "tpch"), _agree(doc, summary, "tpch", [ref]),
             _geomean(summary, "tpch", ref, t["tpch_geomean_vs_reference"])]
    limit = t["tpch_query_vs_reference_max"]
    name = f"tpch: no query above {fraction(limit)}× {ref}"
    ratios = _ratios(summary, "tpch", ref)
    total = len(_queries(summary, "tpch"))
    if not ratios:
        items.append(_item(name, None, _no_ratio(summary, "tpch", ref)))
    else:
        over = [f"{n} {r:.2f}×" for n, r in ratios.items() if r > limit]
        worst = max(ratios, key=ratios.get)
        items.append(_item(name, not over and len(ratios) == total,
                           f"worst {worst} {ratios[worst]:.2f}× over {len(ratios)} of {total}"
                           + ("; above: " + ", ".join(over) if over else "")))
    items.append(_all_run(summary, "join"))
    items.append(_agree(doc, summary, "join", t["join_agree_with"]))
    items.append(_per_query(summary, targets, "join"))
    items.extend(_star(summary, t, ref))
    return items


def _star(summary, t, ref):
    """The dimension-join targets of the star workload: the join's time
    against katydid's own group-by on the fact's column, and against
    `ref`'s time for the join."""
    qs = {q["name"]: q for q in _queries(summary, "star")}
    join, own = qs.get(t["star_join"]), qs.get(t["star_own"])
    mine = f"star: {t['star_join']} (dimension join) ≤ {fraction(t['star_join_vs_own'])}× " \
           f"{t['star_own']} (the fact's own column) in katydid"
    theirs = f"star: {t['star_join']} ≤ {fraction(t['star_join_vs_reference'])}× {ref}"
    if join is None or own is None:
        why = "the star workload did not run"
        return [_item(mine, None, why), _item(theirs, None, why)]
    k_join, k_own = _k(join).get("min_s"), _k(own).get("min_s")
    if k_join and k_own:
        r = k_join / k_own
        items = [_item(mine, r <= t["star_join_vs_own"],
                       f"{_ms(k_join)} against {_ms(k_own)} ({r:.2f}×)")]
    else:
        items = [_item(mine, None, "katydid lacks a time for one of them")]
    peer = join["engines"].get(ref, {}).get("min_s")
    if not k_join or not peer:
        items.append(_item(theirs, None, f"needs katydid's and {ref}'s time (--peers {ref})"))
    else:
        r = k_join / peer
        items.append(_item(theirs, r <= t["star_join_vs_reference"],
                           f"{_ms(k_join)} against {ref} {_ms(peer)} ({r:.2f}×)"))
    return items


def issue33(doc, summary, targets):
    """The issue 33 targets for groupby: all 10 run and agree with DuckDB,
    each within the fastest peer's time, the sum of the ten within half of
    the fastest peer's sum."""
    t = targets["issue33"]
    return [_all_run(summary, "groupby"),
            _agree(doc, summary, "groupby", t["groupby_agree_with"]),
            _per_query(summary, targets, "groupby"),
            _sum_vs_fastest(summary, "groupby", t["groupby_sum_vs_fastest_peer_sum"], "ten")]


def issue34(doc, summary, targets):
    """The issue 34 targets for tlc: every query answers as every peer
    (one file and the glob of drifting months), the Parquet load at least
    the fastest peer's rows/s, and the loaded table no larger than the
    Parquet file."""
    t = targets["issue34"]
    items = [_all_run(summary, "tlc"), _agree(doc, summary, "tlc", t["tlc_agree_with"])]
    loads = [e for e in summary["loads"] if e["workload"] == "tlc"
             and e["engines"].get("katydid", {}).get("status") == "ok"]
    rate_name = "tlc load: rows/s at least the fastest peer's"
    mem_name = f"tlc memory: table ≤ {t['tlc_mem_vs_file_max']:g}× the Parquet file"
    if not loads:
        return items + [_item(rate_name, None, "no tlc table loaded in this run"),
                        _item(mem_name, None, "no tlc table loaded in this run")]
    entry = loads[0]
    k = entry["engines"]["katydid"]
    peers = {p: v for p, v in entry["engines"].items() if p != "katydid" and v["status"] == "ok"}
    if peers:
        best, v = max(peers.items(), key=lambda pv: pv[1]["rows_per_s"] or 0)
        items.append(_item(rate_name, k["rows_per_s"] >= v["rows_per_s"],
                           f"{_rate(k['rows_per_s'])} rows/s against {best} "
                           f"{_rate(v['rows_per_s'])} at {k['rows']:,} rows"))
    else:
        items.append(_item(rate_name, None, "needs --peers"))
    ratio = k["mem_bytes"] / k["csv_bytes"]
    items.append(_item(mem_name, ratio <= t["tlc_mem_vs_file_max"],
                       f"{_mb(k['mem_bytes'])} in memory, {_mb(k['csv_bytes'])} of Parquet "
                       f"({ratio:.2f}×)"))
    return items


def _result(doc, engine, qid):
    """The raw answer of `engine` to query `qid` when it answered."""
    for w in doc["engines"].get(engine, {}).get("workloads", []):
        for r in w.get("queries", []):
            if r.get("id") == qid:
                return r if r.get("ok") else None
    return None


def _mode(q):
    """The check mode of a summary entry (its `check` text)."""
    check = q.get("check") or ""
    if check in ("rows", "ordered"):
        return (check,)
    return Query(q["workload"], q["name"], check=check).check_mode()


def dataset_of(doc, load):
    """The data set a load entry's table was generated from."""
    key = f"{load['workload']}/{load['table']}"
    return (doc["settings"].get("datasets") or {}).get(key, load["workload"])


def issue10(doc, summary, targets):
    """The issue 10 targets: memory per row, the load's peak, load rate."""
    t10 = targets["issue10"]
    base = targets["load_baseline"]
    items = []
    loads = {}
    for entry in summary["loads"]:
        k = entry["engines"].get("katydid", {})
        if k.get("status") == "ok":
            loads.setdefault(dataset_of(doc, entry), (entry, k))

    for d, limit in t10["mem_bytes_per_row"].items():
        name = f"memory: {d} ≤ {limit} B/row"
        if d not in loads:
            items.append(_item(name, None, f"no {d} table loaded in this run"))
            continue
        bpr = loads[d][1]["mem_bytes_per_row"]
        items.append(_item(name, bpr <= limit,
                           f"{bpr:.1f} B/row at {loads[d][1]['rows']:,} rows"))

    factor = t10["load_peak_vs_table_plus_working_set"]
    for d, (entry, k) in loads.items():
        name = (f"load peak: {d} ≤ {factor:g}× table + threads × partition rows × "
                "CSV bytes/row")
        peak = k.get("peak")
        if not peak or peak.get("error") or peak.get("peak_rss_bytes") is None:
            why = (peak or {}).get("error") or "not measured (--no-load-peak, or no /proc)"
            items.append(_item(name, None, why))
            continue
        load_peak = peak["peak_rss_bytes"] - (peak.get("rss_before_bytes") or 0)
        working = peak["threads"] * peak["partition_rows"] * peak["csv_bytes"] / peak["rows"] \
            if peak["rows"] else 0
        bound = factor * peak["mem_bytes"] + working
        if not peak["rows"]:
            items.append(_item(name, load_peak <= bound, "empty table"))
            continue
        # A table of linear columns holds (almost) no bytes: no ratio then.
        ratio = (f" ({load_peak / peak['mem_bytes']:.2f}× the {_mb(peak['mem_bytes'])} table)"
                 if peak["mem_bytes"] else f" (the table holds {peak['mem_bytes']} bytes)")
        items.append(_item(name, load_peak <= bound,
                           f"peak {_mb(load_peak)}{ratio}; bound {_mb(bound)} = "
                           f"{factor:g} × {_mb(peak['mem_bytes'])} + {peak['threads']} × "
                           f"{peak['partition_rows']:,} × {peak['csv_bytes'] / peak['rows']:.0f} B"))

    factor = t10["load_rows_per_s_vs_baseline"]
    for d, rate in base["rows_per_s"].items():
        name = f"load rate: {d} ≥ {factor:g}× {_rate(rate)} rows/s"
        if d not in loads:
            items.append(_item(name, None, f"no {d} table loaded in this run"))
            continue
        k = loads[d][1]
        note = "" if k["rows"] == base["rows"].get(d) else \
            f" (baseline at {base['rows'].get(d, 0):,} rows, this run {k['rows']:,})"
        items.append(_item(name, k["rows_per_s"] >= factor * rate,
                           f"{_rate(k['rows_per_s'])} rows/s, {k['rows_per_s'] / rate:.2f}× "
                           f"the baseline{note}"))
    return items


def _mb(b):
    return f"{b / 1e6:,.0f} MB" if b >= 1e6 else f"{b / 1e3:,.1f} kB"


def _rate(x):
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.3g}"


# ------------------------------------------------------------ before/after

def verdict(before, after, noise):
    """"slower", "faster" or "same": slower (faster) only when both the
    minimum and the median moved by more than noise's relative and absolute
    bounds. `before` and `after` are (min_s, median_s)."""
    rel, abs_s = noise["relative"], noise["absolute_ms"] / 1000

    def moved(a, b, sign):
        d = (b - a) * sign
        return d > rel * a and d > abs_s
    if all(moved(a, b, 1) for a, b in zip(before, after)):
        return "slower"
    if all(moved(a, b, -1) for a, b in zip(before, after)):
        return "faster"
    return "same"


def before_after(old_doc, doc, summary, targets):
    """Per query of this run also in `old_doc`: katydid's time before and
    after and the verdict; per table, load rate and memory before and after;
    and the issue 10 "faster than before" target."""
    noise = targets["noise"]
    old = {q["id"]: q for q in old_doc["summary"]["queries"]}
    rows = []
    for q in summary["queries"]:
        o = old.get(q["id"])
        k = _k(q)
        ok = (o or {}).get("engines", {}).get("katydid", {})
        if not (o and k.get("min_s") and ok.get("min_s")):
            continue
        b = (ok["min_s"], ok.get("median_s", ok["min_s"]))
        a = (k["min_s"], k.get("median_s", k["min_s"]))
        won = None
        if o.get("target") is not None:
            peer_times = [v["min_s"] for e, v in o["engines"].items()
                          if e != "katydid" and v.get("min_s")]
            won = bool(peer_times) and ok["min_s"] <= min(peer_times)
        rows.append({"id": q["id"], "before": b, "after": a, "ratio": a[0] / b[0],
                     "won_before": won, "verdict": verdict(b, a, noise)})
    old_loads = {(t["workload"], t["table"]): t for t in old_doc["summary"]["loads"]}
    loads = []
    for t in summary["loads"]:
        o = old_loads.get((t["workload"], t["table"]))
        k, ok = t["engines"].get("katydid", {}), \
            (o or {}).get("engines", {}).get("katydid", {})
        if k.get("status") == "ok" and ok.get("status") == "ok":
            loads.append({"table": t["table"], "workload": t["workload"],
                          "rows_per_s": (ok["rows_per_s"], k["rows_per_s"]),
                          "mem_bytes_per_row": (ok["mem_bytes_per_row"],
                                                k["mem_bytes_per_row"])})
    by_id = {r["id"]: r for r in rows}
    want = targets["issue10"]["faster_than_before"]
    missing = [i for i in want if i not in by_id]
    faster = _item(", ".join(want) + " faster than before (beyond noise)",
                   None if missing else all(by_id[i]["verdict"] == "faster" for i in want),
                   "; ".join(f"{i} {by_id[i]['ratio']:.2f}× ({by_id[i]['verdict']})"
                             for i in want if i in by_id)
                   + (f"; not in both runs: {', '.join(missing)}" if missing else ""))
    return {"queries": rows, "loads": loads, "faster_target": faster, "noise": noise,
            "before": {"started": old_doc.get("started"), "git": old_doc.get("git"),
                       "settings": old_doc.get("settings", {})}}
