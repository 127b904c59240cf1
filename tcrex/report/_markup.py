"""HTML building blocks of the report: the style sheet, escaping, tables that wrap to the page, numbers written for
people (shares, points, intervals), collapsed blocks and key-value lists, and the fingerprints of its inputs.
"""
from __future__ import annotations

import hashlib
import html
import json

import numpy as np
import pandas as pd


MAX_TABLE_ROWS = 500

_CSS = """
:root { --ink: #1a1a1a; --muted: #5a5a5a; --rule: #d0d0d0; --band: #f4f4f4; }
* { box-sizing: border-box; }
body { font-family: Arial, Helvetica, sans-serif; font-size: 18px; line-height: 1.45; color: var(--ink);
       max-width: 1280px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 34px; margin: 0 0 4px; }
h2 { font-size: 26px; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 2px solid var(--ink); }
h3 { font-size: 21px; margin: 28px 0 8px; }
.meta { color: var(--muted); margin: 0 0 20px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 15px; width: 100%; }
th, td { border: 1px solid var(--rule); padding: 5px 8px; text-align: left; vertical-align: top; }
td { overflow-wrap: anywhere; }  /* long feature names wrap: every table fits an A4 / 1280 px page */
th { overflow-wrap: normal; hyphens: auto; }  /* headings break between words only */
td.num, th.num { text-align: right; }
td.num, td.short { white-space: nowrap; overflow-wrap: normal; }
th { background: var(--band); }
tbody tr:nth-child(even) td { background: #fafafa; }
table.kv { width: auto; min-width: 50%; }
table.kv th { width: 14em; }
code, pre, .fp { font-family: "DejaVu Sans Mono", Consolas, monospace; }
.fp { font-size: 16px; background: var(--band); padding: 1px 6px; border-radius: 4px; }
pre { font-size: 14px; background: var(--band); padding: 12px 14px; border-radius: 6px; white-space: pre-wrap;
      word-break: break-word; }
pre.summary { font-size: 16px; }
.figure { margin: 12px 0 28px; page-break-inside: avoid; break-inside: avoid; }
.tree { overflow-x: auto; border: 1px solid var(--rule); border-radius: 6px; padding: 8px; background: #fff; }
.tree svg { display: block; margin: 0 auto; max-width: 100%; height: auto; }  /* sized to fit */
.note { color: var(--muted); font-size: 15px; }
li.clear, li.gap { color: #B03A00; }
.exec { background: #f7f9fc; border: 1px solid #c9d6ea; border-radius: 8px; padding: 4px 22px 14px; }
.headline { display: flex; flex-wrap: wrap; gap: 14px; margin: 12px 0; }
.headline div { background: #fff; border: 1px solid var(--rule); border-radius: 8px; padding: 8px 14px; min-width: 11em; }
.headline b { display: block; font-size: 28px; }
.contains { border-left: 4px solid #0072B2; padding: 4px 12px; background: #f4f8fb; font-size: 15px; }
.bar { display: inline-block; height: 12px; vertical-align: middle; }
.tcrex-outline { font-size: 15px; }
nav ol { columns: 2; font-size: 16px; }
details summary { cursor: pointer; color: var(--muted); font-size: 15px; }
details.full { margin: 8px 0 18px; }
details.full > summary { color: #0b4f8a; font-size: 16px; }
.exec .contains { margin-top: 14px; }
section.question { break-inside: avoid; page-break-inside: avoid; }
section.question h2 { margin-top: 28px; }
.stack { display: flex; height: 30px; border-radius: 4px; overflow: hidden; margin: 8px 0 4px; }
.stack span { display: block; height: 100%; }
.legend { font-size: 15px; margin: 4px 0 10px; }
.legend > span { display: inline-block; white-space: nowrap; }  /* a swatch stays with its words */
.legend i { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: middle; }
details.appendix { margin-top: 40px; border-top: 2px solid var(--ink); }
details.appendix > summary { font-size: 24px; font-weight: bold; color: var(--ink); padding: 12px 0; }
dl.glossary dt { font-weight: bold; margin-top: 6px; }
dl.glossary dd { margin: 0 0 0 1.5em; }
.figure, figure, svg, .stack, tr, .headline div, dl.glossary dt, dl.glossary dd {
  break-inside: avoid; page-break-inside: avoid; }
@media print {
  details.appendix { break-before: page; page-break-before: always; border-top: none; }
  details.appendix::details-content { display: block; content-visibility: visible; height: auto; }
  details.appendix > summary { list-style: none; }
  body { font-size: 12pt; max-width: none; padding: 0; }
  h2 { page-break-after: avoid; break-after: avoid; }
  table { font-size: 9.5pt; }
  .tree { overflow: visible; border: none; }
  .tree svg { max-width: 100%; height: auto; }
  .tcrex-outline details > *:not(summary) { display: block; }
  .figure > details, details.full { display: none; }
  nav { display: none; }
}
"""


def fingerprint_bytes(data: bytes) -> str:
    """SHA-256 hex digest of raw bytes (e.g. an uploaded file)."""
    return hashlib.sha256(data).hexdigest()


def fingerprint_frame(df: pd.DataFrame) -> str:
    """SHA-256 hex digest of a DataFrame's column names, dtypes, index and values (row-hash based, exact)."""
    h = hashlib.sha256()
    h.update(json.dumps([[str(c), str(t)] for c, t in df.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
    return h.hexdigest()


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _fp(value: str | None) -> str:
    if not value:
        return '<span class="note">not given</span>'
    v = str(value)
    short = v[:16] + ("…" if len(v) > 16 else "")
    return f'<span class="fp" title="{_e(v)}">sha256:{_e(short)}</span> <span class="note">({_e(v)})</span>'


def _cell(v) -> str:
    """A value as a reader sees it: yes/no for booleans, plain numbers (no numpy reprs), lists joined."""
    if isinstance(v, (list, tuple, set)):
        return ", ".join(_cell(x) for x in v)
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float):
        return "" if np.isnan(v) else f"{v:.4g}"
    if v is None or v is pd.NA or v is pd.NaT:
        return ""
    return str(v)


def _table(df: pd.DataFrame, max_rows: int = MAX_TABLE_ROWS, widths: dict | None = None) -> str:
    """``df`` as an HTML table (first ``max_rows`` rows); numbers right-aligned; ``widths`` sets some columns'
    share of the width (``{"conditions": "34%"}``) so long texts take the room and short columns stay narrow."""
    n = len(df)
    shown = df.iloc[:max_rows]
    numeric = [pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in shown.dtypes]
    widths = widths or {}

    def th(c, num):
        style = f' style="width:{widths[c]}"' if c in widths else ""
        cls = ' class="num"' if num else ""
        return f"<th{cls}{style}>{_e(c)}</th>"

    head = "".join(th(c, num) for c, num in zip(shown.columns, numeric))
    # short texts (ids, "2 %", "change") never break; long ones (conditions, advice) wrap anywhere
    short = [bool(num) or not len(shown) or max(len(_cell(v)) for v in shown.iloc[:, i]) <= 14
             for i, num in enumerate(numeric)]
    cls = [' class="num"' if num else ' class="short"' if sh else "" for num, sh in zip(numeric, short)]
    body = []
    for row in shown.itertuples(index=False):
        body.append("<tr>" + "".join(f"<td{c}>{_e(_cell(v))}</td>" for v, c in zip(row, cls)) + "</tr>")
    note = f'<p class="note">First {max_rows} of {n} rows.</p>' if n > max_rows else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{note}"


def _percent(v) -> str:
    """A share for readers: "81 %", empty when unknown."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return ""
    return "" if v != v else f"{v:.0%}"


def _readable(frame: pd.DataFrame, columns: dict, percent=()) -> pd.DataFrame:
    """``frame`` with only ``columns`` (in that order), renamed to the words a reader sees; shares as "81 %"."""
    out = frame[[c for c in columns if c in frame.columns]].copy()
    for c in percent:
        if c in out.columns:
            out[c] = out[c].map(_percent)
    return out.rename(columns=columns)


def _points(v, sign: bool = True) -> str:
    """A difference of shares in percentage points for readers: "+3.2 points", "–" when unknown."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "–"
    return "–" if v != v else f"{100 * v:{'+' if sign else ''}.1f} points"


def _interval(low, high) -> str:
    """An interval of a difference of shares: "-3.1 to 8.0 points", "–" when unknown."""
    lo, hi = _points(low, sign=False), _points(high, sign=False)
    if "–" in (lo, hi):
        return "–"
    return f"{lo.removesuffix(' points')} to {hi}"


def _mean(v) -> str:
    """A mean (changes, distances) for readers: two decimals, "–" when unknown."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "–"
    return "–" if v != v else f"{v:.2f}"


def _full(summary: str, body: str) -> str:
    """A full table kept out of the reading flow: collapsed until opened (and left out on paper)."""
    return f'<details class="full"><summary>{_e(summary)}</summary>{body}</details>'


def _kv(items, raw: dict | None = None) -> str:
    """A two-column key/value table; ``raw`` maps keys to ready-made (already escaped) HTML cells."""
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(_cell(v))}</td></tr>" for k, v in items)
    rows += "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in (raw or {}).items())
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


def _slug(prefix: str, i: int) -> str:
    return f"{prefix}-{i}"


def _pct(a: int, b: int) -> str:
    return "–" if not b else f"{a / b:.0%}"


def _bars(counts: pd.DataFrame) -> str:
    """Change/keep counts per feature as an HTML table with inline bars (no plotting library)."""
    if not len(counts):
        return '<p class="note">No feature is to change or keep.</p>'
    top = max(int(counts["total"].max()), 1)
    rows = []
    for _, r in counts.iterrows():
        c, k = int(r["change"]), int(r["keep"])
        rows.append(f"<tr><td>{_e(r['feature'])}</td><td>{c:,}</td><td>{k:,}</td><td style=\"width:45%\">"
                    f'<span class="bar" style="width:{100 * c / top:.1f}%;background:#D55E00"></span>'
                    f'<span class="bar" style="width:{100 * k / top:.1f}%;background:#0072B2"></span></td></tr>')
    return ("<table><thead><tr><th>feature</th><th>change</th><th>keep</th><th>"
            '<span style="color:#D55E00">■ change</span> <span style="color:#0072B2">■ keep</span></th></tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


#: The colours of the "who gets recourse" bar (colour-blind safe, as the figures').
_WHO_COLORS = ("#009E73", "#56B4E9", "#0072B2", "#E69F00", "#D55E00")


def _stack(parts) -> str:
    """A horizontal 100 % bar with its legend: ``parts`` is ``[(label, count, colour)]`` (static HTML, no
    script); each label says its count and share."""
    total = sum(n for _, n, _ in parts) or 1
    bar = "".join(f'<span style="width:{100 * n / total:.2f}%;background:{c}" title="{_e(label)}"></span>'
                  for label, n, c in parts if n)
    legend = "".join(f'<span><i style="background:{c}"></i>{_e(label)}: {n:,} ({_e(_percent(n / total))})</span>'
                     for label, n, c in parts if n)
    return f'<div class="figure"><div class="stack">{bar}</div><p class="legend">{legend}</p></div>'
