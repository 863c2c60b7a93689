"""The chart: time per engine for each query (and lookup p90, and load),
horizontal bars on a log scale, as a self-contained SVG written by hand."""

import math
from xml.sax.saxutils import escape

from .report import fmt_ms, machine_line

COLORS = {"katydid": "#2e7d32", "duckdb": "#f9a825", "clickhouse": "#c62828",
          "polars": "#1565c0"}
BAR = 13
GAP = 3
GROUP_GAP = 12
LEFT = 170
PLOT_W = 620
RIGHT = 90
TOP = 104
LEGEND_Y = 64


def _groups(summary):
    """[(section, label, {engine: seconds or error text})]."""
    groups = []
    for q in summary["queries"]:
        vals = {}
        for e, v in q["engines"].items():
            if v.get("min_s") is not None:
                vals[e] = v["min_s"]
            elif v["status"] in ("unsupported", "error", "timeout"):
                vals[e] = v["status"]
        mark = " ≠" if q["answers"] == "MISMATCH" else ""
        groups.append(("Queries (min time)", f"{q['workload']} {q['name']}{mark}", vals))
    for lk in summary["lookups"]:
        vals = {e: (v["p90_s"] if v.get("p90_s") is not None else v["status"])
                for e, v in lk["engines"].items()}
        groups.append(("Point lookups (p90 latency of one statement)", lk["id"], vals))
    for t in summary["loads"]:
        vals = {e: (v["load_s"] if v.get("load_s") is not None else v["status"])
                for e, v in t["engines"].items()}
        groups.append(("Loading the CSV into memory", f"load {t['table']}", vals))
    return groups


def svg(doc, summary):
    engines = summary["engines"]
    groups = _groups(summary)
    times = [v for _, _, vals in groups for v in vals.values() if isinstance(v, float) and v > 0]
    if not times:
        times = [1e-3]
    lo = 10 ** math.floor(math.log10(min(times)))
    hi = 10 ** math.ceil(math.log10(max(times)))
    if hi <= lo:
        hi = lo * 10
    span = math.log10(hi) - math.log10(lo)

    def x(s):
        return LEFT + PLOT_W * (math.log10(s) - math.log10(lo)) / span

    parts = []
    y = TOP
    section = None
    for sec, label, vals in groups:
        if sec != section:
            section = sec
            y += 8
            parts.append(f'<text x="8" y="{y + 10}" class="sec">{escape(sec)}</text>')
            y += 18
        h = len(engines) * (BAR + GAP) - GAP
        parts.append(f'<text x="{LEFT - 8}" y="{y + h / 2 + 4}" class="lbl" '
                     f'text-anchor="end">{escape(label)}</text>')
        for i, e in enumerate(engines):
            by = y + i * (BAR + GAP)
            v = vals.get(e)
            if isinstance(v, float) and v > 0:
                w = max(1.0, x(v) - LEFT)
                parts.append(f'<rect x="{LEFT}" y="{by}" width="{w:.1f}" height="{BAR}" '
                             f'fill="{COLORS.get(e, "#777")}"><title>{escape(e)}: '
                             f'{fmt_ms(v)} ms</title></rect>')
                parts.append(f'<text x="{LEFT + w + 4:.1f}" y="{by + BAR - 3}" class="val">'
                             f'{fmt_ms(v)} ms</text>')
            elif v is not None:
                parts.append(f'<text x="{LEFT + 4}" y="{by + BAR - 3}" class="val" '
                             f'fill="{COLORS.get(e, "#777")}">{escape(str(v))} ({escape(e)})'
                             f'</text>')
        y += h + GROUP_GAP
    height = y + 30
    width = LEFT + PLOT_W + RIGHT

    grid = []
    d = lo
    while d <= hi * 1.0001:
        gx = x(d)
        grid.append(f'<line x1="{gx:.1f}" y1="{TOP - 4}" x2="{gx:.1f}" y2="{height - 28}" '
                    f'class="grid"/>')
        grid.append(f'<text x="{gx:.1f}" y="{TOP - 8}" class="tick" text-anchor="middle">'
                    f'{_tick(d)}</text>')
        grid.append(f'<text x="{gx:.1f}" y="{height - 14}" class="tick" text-anchor="middle">'
                    f'{_tick(d)}</text>')
        d *= 10

    legend = []
    lx = LEFT
    for e in engines:
        legend.append(f'<rect x="{lx}" y="{LEGEND_Y}" width="12" height="12" fill="{COLORS.get(e, "#777")}"/>'
                      f'<text x="{lx + 16}" y="{LEGEND_Y + 10}" class="leg">{escape(e)}</text>')
        lx += 30 + 8 * len(e)
    mism_note = "; ≠ marks an answer mismatch" if any(
        q["answers"] == "MISMATCH" for q in summary["queries"]) else ""
    title = (f"katydid vs peers: time per engine (log scale, shorter is better), "
             f"{doc['settings']['scale']} scale")
    sub_lines = _wrap(machine_line(doc), 150)[:3]
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
<style>
.title {{ font-size: 15px; font-weight: bold; }}
.sub {{ font-size: 9px; fill: #555; }}
.sec {{ font-size: 12px; font-weight: bold; fill: #333; }}
.lbl {{ font-size: 11px; }}
.val {{ font-size: 9.5px; fill: #333; }}
.tick {{ font-size: 9.5px; fill: #555; }}
.leg {{ font-size: 11px; }}
.grid {{ stroke: #ddd; stroke-width: 1; }}
</style>
<rect width="100%" height="100%" fill="white"/>
<text x="8" y="18" class="title">{escape(title)}</text>
{''.join(f'<text x="8" y="{31 + 11 * i}" class="sub">{escape(line)}</text>' for i, line in enumerate(sub_lines))}
{''.join(legend)}
<text x="{LEFT + PLOT_W}" y="{LEGEND_Y + 10}" class="tick" text-anchor="end">milliseconds{escape(mism_note)}</text>
{''.join(grid)}
{''.join(parts)}
</svg>
"""


def _wrap(text, width):
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def _tick(seconds):
    ms = seconds * 1000
    if ms >= 1:
        return f"{ms:,.0f}"
    return f"{ms:g}"
