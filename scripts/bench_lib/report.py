"""Figures, answer checks and targets from the engines' raw outputs, and
the markdown report.

Conventions (also printed under the tables):
- a query's time is the minimum over the timed runs (the median is shown
  beside it and kept in the JSON); the ratio katydid / peer uses the
  minimums, so a ratio below 1 means katydid wins;
- rows/s is the table's row count over the minimum time;
- targets, reported and never enforced: per query, at most a multiple of
  the fastest peer's time (issue 3's ⅓, replaced by issue 7's 1 for taxi
  and shapes; see benches/workloads/targets.json); every load faster than
  every peer's and memory at most a fifth of the smallest peer's for the
  same table (issue 3); the issue 7 and issue 10 targets and the
  before/after comparison of bench_lib/targets.py.
"""

import statistics

from . import compare, targets as targets_mod

TARGET_TIME = 1 / 3  # lookups (p90) and runs whose JSON predates targets.json
TARGET_MEM = 1 / 5


def _status(result):
    if result is None:
        return "missing"
    if result.get("ok"):
        return "ok"
    return "error"


def _by_id(out, key):
    found = {}
    for w in out.get("workloads", []):
        for item in w.get(key, []):
            found[item.get("id") or (w["name"] + "/" + item.get("name", "?"))] = item
    return found


def _tables(out):
    found = {}
    for w in out.get("workloads", []):
        for t in w.get("tables", []):
            found[(w["name"], t["name"])] = t
    return found


def analyse(doc, workloads, keys, targets=None):
    targets = targets or targets_mod.load()
    engines = list(doc["engines"])
    outs = doc["engines"]
    queries_by = {e: _by_id(outs[e], "queries") for e in engines}
    series_by = {e: _by_id(outs[e], "series") for e in engines}
    tables_by = {e: _tables(outs[e]) for e in engines}
    peers = [e for e in engines if e != "katydid"]

    # Loads.
    loads = []
    for (wname, tname) in dict.fromkeys(k for e in engines for k in tables_by[e]):
        entry = {"workload": wname, "table": tname, "engines": {}}
        for e in engines:
            t = tables_by[e].get((wname, tname))
            if t is None:
                entry["engines"][e] = {"status": "missing"}
                continue
            if "error" in t:
                entry["engines"][e] = {"status": "error", "error": t["error"]}
                continue
            rows, s, csv, mem = t["rows"], t["load_s"], t["csv_bytes"], t.get("mem_bytes")
            entry["engines"][e] = {
                "status": "ok", "rows": rows, "load_s": s, "rows_per_s": rows / s if s else None,
                "mb_per_s": csv / s / 1e6 if s else None, "csv_bytes": csv, "mem_bytes": mem,
                "csv_bytes_per_row": csv / rows if rows else None,
                "mem_bytes_per_row": mem / rows if rows and mem is not None else None,
                "mem_source": t.get("mem_source", "LoadStats.heap_bytes"),
            }
            if t.get("load_peak"):
                entry["engines"][e]["peak"] = t["load_peak"]
        k = entry["engines"].get("katydid", {})
        ok_peers = [entry["engines"][p] for p in peers if entry["engines"][p]["status"] == "ok"]
        if k.get("status") == "ok" and ok_peers:
            fastest = min(p["load_s"] for p in ok_peers)
            smallest = min((p["mem_bytes"] for p in ok_peers if p["mem_bytes"]), default=None)
            entry["target_load"] = {"met": k["load_s"] < fastest, "katydid_s": k["load_s"],
                                    "fastest_peer_s": fastest}
            if smallest:
                entry["target_mem"] = {"met": k["mem_bytes"] <= smallest * TARGET_MEM,
                                       "katydid_bytes": k["mem_bytes"],
                                       "smallest_peer_bytes": smallest,
                                       "ratio": k["mem_bytes"] / smallest}
        rows_ok = {e: v["rows"] for e, v in entry["engines"].items() if v["status"] == "ok"}
        entry["rows_agree"] = len(set(rows_ok.values())) <= 1
        loads.append(entry)
    table_rows = {}
    for entry in loads:
        for v in entry["engines"].values():
            if v["status"] == "ok":
                table_rows.setdefault(entry["workload"], v["rows"])

    # Queries.
    queries = []
    for w in workloads:
        for q in w.queries:
            entry = {"id": q.id, "workload": w.name, "name": q.name, "check": q.check or
                     q.check_mode()[0], "about": q.about, "pending": q.pending, "engines": {}}
            answered = {}
            for e in engines:
                r = queries_by[e].get(q.id)
                st = _status(r)
                v = {"status": st}
                if st == "error":
                    v["error"] = r.get("error", "")
                    if v["error"].startswith("timed out"):
                        v["status"] = "timeout"
                    elif e == "katydid":
                        v["status"] = "unsupported"
                elif st == "ok":
                    answered[e] = r
                    v["result_rows"] = len(r["rows"])
                    times = r.get("times_s") or []
                    if times:
                        v["runs"] = len(times)
                        v["min_s"] = min(times)
                        v["median_s"] = statistics.median(times)
                        n = table_rows.get(w.name)
                        v["rows_per_s"] = n / v["min_s"] if n and v["min_s"] > 0 else None
                    if "rows_scanned" in r:
                        v["rows_scanned"] = r["rows_scanned"]
                entry["engines"][e] = v
            entry["answers"], entry["answer_details"] = compare.check_query(q.check_mode(), answered)
            k = entry["engines"].get("katydid", {})
            if "min_s" in k:
                entry["ratios"] = {p: k["min_s"] / entry["engines"][p]["min_s"] for p in peers
                                   if entry["engines"][p].get("min_s")}
                peer_times = {p: entry["engines"][p]["min_s"] for p in peers
                              if entry["engines"][p].get("min_s")}
                limit = targets_mod.per_query_limit(targets, w.name)
                if peer_times and limit is not None:
                    fastest = min(peer_times, key=peer_times.get)
                    entry["target"] = {"met": k["min_s"] <= peer_times[fastest] * limit,
                                       "fastest_peer": fastest, "limit": limit,
                                       "ratio": k["min_s"] / peer_times[fastest]}
            queries.append(entry)

    # Lookup series.
    lookups = []
    for w in workloads:
        for lk in w.lookups:
            n = len(keys.get(lk.name, [])) - 1
            entry = {"id": lk.id, "about": lk.about, "statements": n, "hits": lk.hits,
                     "engines": {}}
            for e in engines:
                r = series_by[e].get(lk.id)
                st = _status(r)
                v = {"status": "unsupported" if st == "error" and e == "katydid" else st}
                if st == "error":
                    v["error"] = r.get("error", "")
                elif st == "ok":
                    lat = sorted(r["latencies_s"])
                    total = sum(lat)
                    expected = lk.hits * len(lat)
                    v.update({
                        "statements": len(lat), "expected_rows": expected,
                        "qps": len(lat) / total if total else None,
                        "p50_s": _pct(lat, 50), "p90_s": _pct(lat, 90), "p99_s": _pct(lat, 99),
                        "max_s": lat[-1] if lat else None, "first_s": r.get("first_s"),
                        "rows_returned": r["rows_returned"],
                        "answer_ok": r["rows_returned"] == expected,
                    })
                entry["engines"][e] = v
            k = entry["engines"].get("katydid", {})
            peer_p90 = {p: entry["engines"][p]["p90_s"] for p in peers
                        if entry["engines"][p].get("p90_s")}
            if k.get("p90_s") and peer_p90:
                best = min(peer_p90, key=peer_p90.get)
                entry["target"] = {"met": k["p90_s"] <= peer_p90[best] * TARGET_TIME,
                                   "fastest_peer": best, "ratio": k["p90_s"] / peer_p90[best]}
            lookups.append(entry)
    return {"engines": engines, "loads": loads, "queries": queries, "lookups": lookups}


def _pct(sorted_values, p):
    """The p-th percentile by the nearest-rank method."""
    if not sorted_values:
        return None
    k = max(1, -(-p * len(sorted_values) // 100))
    return sorted_values[int(k) - 1]


def smoke_pending(summary):
    """Queries marked `-- pending:` (a known gap in katydid): [(id, reason,
    katydid's error or None when it answers after all)]."""
    return [(q["id"], q["pending"], q["engines"].get("katydid", {}).get("error")
             if q["engines"].get("katydid", {}).get("status") != "ok" else None)
            for q in summary["queries"] if q.get("pending")]


def smoke_problems(summary):
    """What the smoke mode fails on: katydid not answering or not loading
    (queries marked `-- pending:` excepted: see smoke_pending)."""
    problems = []
    for entry in summary["loads"]:
        k = entry["engines"].get("katydid", {})
        if k.get("status") != "ok":
            problems.append(f"load {entry['table']}: {k.get('error', k.get('status'))}")
        elif (k.get("peak") or {}).get("error"):
            problems.append(f"load peak of {entry['table']}: {k['peak']['error']}")
    for entry in summary["queries"]:
        k = entry["engines"].get("katydid", {})
        if k.get("status") != "ok" and not entry.get("pending"):
            problems.append(f"{entry['id']}: {k.get('error', k.get('status'))}")
    for entry in summary["lookups"]:
        k = entry["engines"].get("katydid", {})
        if k.get("status") != "ok":
            problems.append(f"{entry['id']}: {k.get('error', k.get('status'))}")
        elif not k["answer_ok"]:
            problems.append(f"{entry['id']}: {k['rows_returned']} rows returned, "
                            f"expected {k['expected_rows']}")
    return problems


# ---------------------------------------------------------------- markdown

def fmt_ms(s):
    if s is None:
        return "–"
    ms = s * 1000
    if ms >= 100:
        return f"{ms:,.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def fmt_rate(x):
    if x is None:
        return "–"
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.3g}"


def fmt_ratio(x):
    if x is None:
        return "–"
    if x < 0.01:
        return f"{x:.1g}"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def fmt_bytes(b):
    if b is None:
        return "–"
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= div:
            return f"{b / div:.3g} {unit}"
    return f"{b:.0f} B"


def _met(m):
    if m is None:
        return "–"
    return "met" if m else "**not met**"


def machine_line(doc):
    m = doc["machine"]
    mem = f"{m['memory_bytes'] / 2**30:.1f} GiB" if m.get("memory_bytes") else "? GiB"
    s = doc["settings"]
    rows = ", ".join(f"{d} {n:,}" + (f" (SF {s['tpch_scale_factor']:g})"
                                      if d == "tpch" and "tpch_scale_factor" in s else "")
                     for d, n in s["rows"].items())
    versions = ", ".join(f"{e} {v}" for e, v in doc["versions"].items() if v and e != "rustc")
    git = doc.get("git") or {}
    commit = f"katydid commit {git.get('commit')}{' (modified)' if git.get('dirty') else ''}; " \
        if git.get("commit") else ""
    return (f"Machine: {m['cpu']}, {m['cores']} cores, {mem}, {m['os']}. "
            f"Run {doc['started']}; {commit}threads {s['threads']}; "
            f"{s['runs']} timed runs after {s['warmup']} warm-up; scale {s['scale']} "
            f"(rows: {rows}). Versions: {versions}.")


def markdown(doc, summary, targets=None, before=None):
    """The report. `before`: the targets.before_after comparison, if any."""
    targets = targets or targets_mod.load()
    smoke = doc["settings"].get("smoke")
    engines = summary["engines"]
    peers = [e for e in engines if e != "katydid"]
    out = [f"## katydid benchmark ({doc['settings']['scale']} scale)", "", machine_line(doc), ""]
    notes = []

    def note(text):
        notes.append(text)
        return f"[{len(notes)}]"

    # Queries.
    head = ["query"] + [e if smoke else f"{e} ms" for e in engines]
    if peers:
        head += [f"katydid / {p}" for p in peers] + ["target vs fastest peer"]
    if not smoke:
        head.append("katydid rows/s")
    head.append("answers")
    out += ["### Queries", "",
            "Smoke run: result sizes only, nothing is timed." if smoke else
            "Time in ms: min / median of the timed runs (fewer runs, shown in brackets, when "
            f"a query's runs took {doc['settings'].get('query_seconds', 0):g} s)."
            + (" Ratio = katydid min / peer min (< 1: katydid wins)." if peers else ""), ""]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(head) - 1)) + "|:---|")
    for q in summary["queries"]:
        row = [f"{q['workload']} {q['name']}"]
        for e in engines:
            v = q["engines"][e]
            if v["status"] == "ok":
                runs = v.get("runs", doc["settings"]["runs"])
                few = runs < doc["settings"]["runs"]
                row.append(f"{v['result_rows']:,} row{'' if v['result_rows'] == 1 else 's'}"
                           if smoke or "min_s" not in v else
                           f"{fmt_ms(v['min_s'])} / {fmt_ms(v['median_s'])}"
                           + (f" ({runs} run{'s' if runs > 1 else ''})" if few else ""))
            elif v["status"] == "unsupported":
                pend = f" (pending: {q['pending']})" if q.get("pending") else ""
                row.append(("pending " if pend else "unsupported ")
                           + note(f"katydid, {q['id']}: {v['error']}{pend}"))
            elif v["status"] == "error":
                row.append("error " + note(f"{e}, {q['id']}: {v['error']}"))
            elif v["status"] == "timeout":
                row.append("**timed out** " + note(f"{e}, {q['id']}: {v['error']}"))
            else:
                row.append(v["status"])
        if peers:
            ratios = q.get("ratios", {})
            row += [fmt_ratio(ratios.get(p)) for p in peers]
            t = q.get("target")
            row.append(f"{_met(t['met'])} ({fmt_ratio(t['ratio'])}× {t['fastest_peer']}, "
                       f"≤ {targets_mod.fraction(t.get('limit', TARGET_TIME))})"
                       if t else "–")
        if not smoke:
            row.append(fmt_rate(q["engines"].get("katydid", {}).get("rows_per_s")))
        if q["answers"] == "agree":
            row.append("✓ all agree")
        elif q["answers"] == "single":
            who = [e for e in engines if q["engines"][e]["status"] == "ok"]
            row.append("answered" if not peers and who else
                       f"only {who[0]} answered" if who else "no answer")
        else:
            row.append("**MISMATCH** " + note(f"{q['id']}: " + "; ".join(q["answer_details"])))
        out.append("| " + " | ".join(row) + " |")

    # Lookups.
    if summary["lookups"]:
        budget = doc["settings"].get("lookup_seconds")
        out += ["", "### Point lookups (kv)", ""]
        if not smoke:
            out += [
                "Statements issued one after another on one thread through each engine's "
                "in-process API, after one warm-up statement (its time: \"first\"); "
                "qps = statements / summed latency"
                + (f"; a series stops once its statements took {budget:g} s" if budget else "")
                + ".", ""]
        head = ["lookup", "engine", "statements", "qps", "p50 ms", "p90 ms", "first ms", "rows",
                "answers"]
        if peers:
            head.insert(-1, "target p90 ≤ ⅓ best peer")
        body = []
        for lk in summary["lookups"]:
            for e in engines:
                v = lk["engines"][e]
                label = lk["id"]
                if v["status"] != "ok":
                    msg = v["status"]
                    if v.get("error"):
                        msg += " " + note(f"{e}, {lk['id']}: {v['error']}")
                    row = [label, e, msg] + ["–"] * (len(head) - 3)
                else:
                    qps = f"{v['qps']:,.0f}" if v["qps"] >= 10 else f"{v['qps']:.2g}"
                    row = [label, e, f"{v['statements']:,} of {lk['statements']:,}", qps,
                           fmt_ms(v["p50_s"]), fmt_ms(v["p90_s"]),
                           fmt_ms(v["first_s"]), f"{v['rows_returned']:,}"]
                    if peers:
                        t = lk.get("target")
                        row.append(f"{_met(t['met'])} ({fmt_ratio(t['ratio'])}× {t['fastest_peer']})"
                                   if t and e == "katydid" else "")
                    row.append("✓" if v["answer_ok"] else
                               f"**MISMATCH**: {v['rows_returned']:,} rows, expected "
                               f"{v['expected_rows']:,}")
                body.append(row)
        out += _table(head, body, smoke)

    # Loads.
    if summary["loads"]:
        out += ["", "### Loading (ingestion) and memory", "",
                "CSV file (Parquet for tlc) into memory; CSV B/row and MB/s count that file's bytes. mem/row: bytes in memory per row (katydid: "
                "LoadStats.heap_bytes; DuckDB: duckdb_memory(); ClickHouse: "
                "system.tables.total_bytes; Polars: estimated_size()). Each engine's "
                "runner starts with its files read once into the page cache, so loads "
                "time parsing, not the disk.", ""]
        head = ["table", "engine", "load s", "rows/s", "MB/s", "CSV B/row", "mem B/row",
                "mem / CSV"]
        if smoke:
            head.insert(2, "rows")
        if peers:
            head += ["target load < every peer", "target mem ≤ ⅕ smallest peer"]
        body = []
        for t in summary["loads"]:
            for e in engines:
                v = t["engines"][e]
                label = t["table"] if t["table"] == t["workload"] else \
                    f"{t['table']} ({t['workload']})"
                if v["status"] != "ok":
                    msg = v["status"]
                    if v.get("error"):
                        msg += " " + note(f"{e}, load {t['table']}: {v['error']}")
                    row = [label, e, msg] + ["–"] * (len(head) - 3)
                else:
                    row = [label, e] + ([f"{v['rows']:,}"] if smoke else []) + [
                           f"{v['load_s']:.2f}", fmt_rate(v["rows_per_s"]),
                           f"{v['mb_per_s']:.0f}", f"{v['csv_bytes_per_row']:.1f}",
                           f"{v['mem_bytes_per_row']:.1f}" if v["mem_bytes_per_row"] is not None
                           else "–",
                           f"{v['mem_bytes'] / v['csv_bytes']:.2f}" if v["mem_bytes"] is not None
                           else "–"]
                    if peers:
                        if e == "katydid":
                            tl, tm = t.get("target_load"), t.get("target_mem")
                            row.append(_met(tl["met"]) if tl else "–")
                            row.append(f"{_met(tm['met'])} ({tm['ratio']:.2f}×)" if tm else "–")
                        else:
                            row += ["", ""]
                body.append(row)
            if not t["rows_agree"]:
                body.append([t["table"], "**MISMATCH**", "row counts differ " + note(
                    f"load {t['table']}: " + ", ".join(
                        f"{e} {v.get('rows')}" for e, v in t["engines"].items()))]
                    + [""] * (len(head) - 3))
        out += _table(head, body, smoke)

    # Targets summary.
    if peers:
        qt = [q["target"]["met"] for q in summary["queries"] if q.get("target")]
        lt = [t["target_load"]["met"] for t in summary["loads"] if t.get("target_load")]
        mt = [t["target_mem"]["met"] for t in summary["loads"] if t.get("target_mem")]
        mism = [q["id"] for q in summary["queries"] if q["answers"] == "MISMATCH"] + \
            [lk["id"] for lk in summary["lookups"]
             if any(v.get("answer_ok") is False for v in lk["engines"].values())]
        uns = [q["id"] for q in summary["queries"]
               if q["engines"].get("katydid", {}).get("status") == "unsupported"]
        slow = [f"{q['id']} ({e})" for q in summary["queries"]
                for e, v in q["engines"].items() if v.get("status") == "timeout"]
        limits = sorted({(targets_mod.fraction(q["target"].get("limit", TARGET_TIME)),
                          q["workload"]) for q in summary["queries"] if q.get("target")})
        per = "; ".join(f"≤ {lim}× for {', '.join(w for l2, w in limits if l2 == lim)}"
                        for lim in dict.fromkeys(lim for lim, _ in limits))
        out += ["", "### Targets", "",
                f"- queries at most the per-workload multiple of the fastest peer ({per}):"
                f" {sum(qt)} of {len(qt)} met" if qt else
                "- queries: no per-query target for the workloads of this run",
                f"- loads faster than every peer: {sum(lt)} of {len(lt)} met",
                f"- memory at most ⅕ of the smallest peer: {sum(mt)} of {len(mt)} met",
                f"- answers: {'all agree' if not mism else 'MISMATCH in ' + ', '.join(mism)}"
                + (f"; unsupported by katydid: {', '.join(uns)}" if uns else "")
                + (f"; timed out: {', '.join(slow)}" if slow else "")]
    if not smoke:
        out += _issue_targets(doc, summary, targets, peers)
    if before:
        out += _before_after(before)
    out += ["", "Answer checks: rows compared as sorted sets unless the query orders them; "
            f"floats within a relative {compare.FLOAT_REL:g}; approximate distinct counts "
            "within the relative tolerance of their `-- check: approx` line; LIMIT without "
            "ORDER BY compares the row count when the limit is reached; ORDER BY … LIMIT "
            "with ties compares the sort key's values and the rows not tied with the first or "
            "last key (see benches/workloads/README.md)."]
    if notes:
        out += [""] + [f"[{i + 1}] {_one_line(n)}" for i, n in enumerate(notes)]
    return "\n".join(out) + "\n"


def _issue_targets(doc, summary, targets, peers):
    """The issue 7, 10, 32, 33 and 34 tables (met / not met / – not measured)."""
    out = []
    for title, items in (
            ("Issue 7 (2 threads, taxi at --rows taxi=10m, clickbench at ≥ 10M rows)",
             targets_mod.issue7(doc, summary, targets)),
            ("Issue 10 (memory at 10M taxi rows; load rate against the README baseline)",
             targets_mod.issue10(doc, summary, targets)),
            ("Issue 32 (2 threads, tpch at SF 1, join with x at 10M rows)",
             targets_mod.issue32(doc, summary, targets)),
            ("Issue 33 (2 threads, groupby at 10M rows)",
             targets_mod.issue33(doc, summary, targets)),
            ("Issue 34 (2 threads, tlc at 10M rows per month)",
             targets_mod.issue34(doc, summary, targets))):
        measured = [i for i in items if i["met"] is not None]
        if not measured:
            continue
        out += ["", f"#### {title}", "", "| target | status | figures |", "|---|---|---|"]
        for i in items:
            out.append(f"| {i['target']} | {_met(i['met'])} | {_cell(i['detail'])} |")
    if out:
        settings = doc["settings"]
        rows = settings.get("rows", {})
        caveats = [f"this run used {settings['threads']} threads"
                   if settings.get("threads") != 2 else None,
                   f"taxi has {rows['taxi']:,} rows, not 10M" if rows.get("taxi", 10**7) != 10**7
                   else None,
                   f"hits has {rows['hits']:,} rows, fewer than 10M"
                   if rows.get("hits", 10**7) < 10**7 else None,
                   f"tpch is at SF {settings['tpch_scale_factor']:g}, not "
                   f"{targets['issue32']['tpch_scale_factor']:g}"
                   if settings.get("tpch_scale_factor", targets["issue32"]["tpch_scale_factor"])
                   != targets["issue32"]["tpch_scale_factor"] else None,
                   f"join's x has {rows['join']:,} rows, not "
                   f"{targets['issue32']['join_x_rows']:,}"
                   if rows.get("join", targets["issue32"]["join_x_rows"])
                   != targets["issue32"]["join_x_rows"] else None,
                   f"groupby has {rows['groupby']:,} rows, not "
                   f"{targets['issue33']['groupby_rows']:,}"
                   if rows.get("groupby", targets["issue33"]["groupby_rows"])
                   != targets["issue33"]["groupby_rows"] else None,
                   f"tlc has {rows['tlc']:,} rows per month, not "
                   f"{targets['issue34']['tlc_rows']:,}"
                   if rows.get("tlc", targets["issue34"]["tlc_rows"])
                   != targets["issue34"]["tlc_rows"] else None]
        caveats = [c for c in caveats if c]
        out[0:0] = ["", "Working set of a load = threads × rows per partition × CSV bytes per "
                    "row; its peak = VmHWM − VmRSS before the load, of `katydid-bench "
                    "--load-peak` in a process of its own."
                    + (" The targets are set for 2 threads, taxi at 10M rows, ClickBench at "
                       "10M rows or more, tpch at SF 1, join's x, groupby and tlc at 10M rows: " + "; ".join(caveats) + "." if caveats else "")]
    return out


def _before_after(ba):
    """The --compare-to section."""
    b = ba["before"]
    git = b.get("git") or {}
    s = b.get("settings") or {}
    rows = ", ".join(f"{d} {n:,}" for d, n in (s.get("rows") or {}).items())
    noise = ba["noise"]
    out = ["", "### Before and after (katydid)", "",
           f"Before: run {b.get('started')}, commit {git.get('commit')}"
           f"{' (modified)' if git.get('dirty') else ''}, threads {s.get('threads')}, "
           f"rows: {rows}. A query is slower (faster) only when its minimum and its median "
           f"both moved by more than {noise['relative']:.0%} and {noise['absolute_ms']:g} ms.",
           "", "| query | before ms (min / median) | after ms | after / before | won before | "
           "verdict |", "|---|---:|---:|---:|---|---|"]
    for r in ba["queries"]:
        won = {True: "yes", False: "no", None: "?"}[r["won_before"]]
        v = {"slower": "**slower**", "faster": "faster", "same": "≈ (noise)"}[r["verdict"]]
        out.append(f"| {r['id']} | {fmt_ms(r['before'][0])} / {fmt_ms(r['before'][1])} | "
                   f"{fmt_ms(r['after'][0])} / {fmt_ms(r['after'][1])} | "
                   f"{fmt_ratio(r['ratio'])} | {won} | {v} |")
    if ba["loads"]:
        out += ["", "| table | load rows/s before | after | mem B/row before | after |",
                "|---|---:|---:|---:|---:|"]
        for t in ba["loads"]:
            (r0, r1), (m0, m1) = t["rows_per_s"], t["mem_bytes_per_row"]
            out.append(f"| {t['table']} | {fmt_rate(r0)} | {fmt_rate(r1)} | "
                       f"{m0:.1f} | {m1:.1f} |")
    slower = [r["id"] for r in ba["queries"] if r["verdict"] == "slower"]
    won_slower = [r["id"] for r in ba["queries"]
                  if r["verdict"] == "slower" and r["won_before"]]
    faster = [r["id"] for r in ba["queries"] if r["verdict"] == "faster"]
    f = ba["faster_target"]
    out += ["",
            f"- queries katydid won before that got slower beyond noise: "
            f"{', '.join(won_slower) or 'none'}",
            f"- slower beyond noise: {', '.join(slower) or 'none'}",
            f"- faster beyond noise: {', '.join(faster) or 'none'}",
            f"- issue 10: {f['target']}: {_met(f['met'])} ({f['detail'] or 'not measured'})"]
    return out


def _cell(text):
    return str(text).replace("|", "\\|")


TIMED_COLUMNS = {"qps", "p50 ms", "p90 ms", "first ms", "load s", "rows/s", "MB/s"}


def _table(head, body, smoke):
    """Markdown lines of a table; in smoke runs without the timed columns."""
    keep = [i for i, h in enumerate(head) if not (smoke and h in TIMED_COLUMNS)]
    align = ["---" if i < 2 or head[i] == "answers" else "---:" for i in keep]
    lines = ["| " + " | ".join(head[i] for i in keep) + " |", "|" + "|".join(align) + "|"]
    for row in body:
        lines.append("| " + " | ".join(str(row[i]) if i < len(row) else "" for i in keep) + " |")
    return lines


def _one_line(text):
    text = " ".join(str(text).split())
    return text if len(text) <= 600 else text[:597] + "..."
