"""Colours, line styles and shared helpers for every figure.

Rules are coloured from a twelve-colour palette (Okabe-Ito's blue, orange, green and purple, then Paul Tol's),
keyed by the rule's id within its target: rule ``r`` of target ``t`` has the same colour in the metarule tree, the
icicle, the rule plots and the overview. Any two of the twelve differ by a CIEDE2000 distance of at least 15 (the
first eight by at least 23; one orange only), checked in ``tests/test_figures.py``. Rules 9-12 also get a dashed
outline, as a second cue; past twelve the cycle repeats darker, then lighter, with other dashes.
"""
from __future__ import annotations

import html
import math
import re
import textwrap

import numpy as np
import pandas as pd

from .. import check_fitted
from ..errors import ParameterError
from ..vocabulary import (ALREADY_IN_RULE, ALREADY_IN_TARGET, BOUNDARY, MINIMAL_CHANGE, NEXT_RULE, NO_ACTIONABLE_RULE,
                          NO_RULE, OK, SEARCHED, needs_recourse)

# Okabe & Ito (2008) blue, orange, green and reddish purple, then Paul Tol's indigo, red, cyan, wine, olive, green,
# sand and purple: chosen greedily for the largest smallest CIEDE2000 distance, also under simulated deuteranopia
RULE_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#332288", "#CC3311", "#66CCEE", "#882255",
                "#999933", "#117733", "#DDCC77", "#AA4499")
#: Rules with a solid outline; later ones are dashed (a second cue where the colours come closer).
SOLID_RULES = 8
# Paul Tol's "bright" scheme for model outputs (classes), distinct in hue order from the rule palette
CLASS_PALETTE = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB")
CLASS_SYMBOLS = ("circle", "x", "triangle-up", "square", "diamond", "cross", "star-triangle-down")
TARGET_SYMBOLS = ("circle", "diamond", "square", "triangle-up", "hexagon", "star", "cross")
DASHES = ("solid", "dash", "dot", "dashdot")
CHANGE_COLOR = "#D55E00"
KEEP_COLOR = "#0072B2"
NEUTRAL = "#BBBBBB"
EMPTY_FILL = "#EEEEEE"
EMPTY_LINE = "#999999"
STATUS_COLORS = {OK: "#0072B2", ALREADY_IN_RULE: "#56B4E9", ALREADY_IN_TARGET: "#999999", NO_RULE: "#D55E00",
                 NO_ACTIONABLE_RULE: "#CC79A7"}
#: Colour of metarules whose cells have no rule the constraints allow (rule id -1).
NO_ACTION_COLOR = "#7F7F7F"
FONT = dict(family="Arial, Helvetica, sans-serif", size=15)
TEMPLATE = "plotly_white"


def _mix(color: str, other: str, share: float) -> str:
    """``color`` moved ``share`` of the way towards ``other`` (both ``#RRGGBB``)."""
    a = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(other[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * share):02X}" for x, y in zip(a, b))


def _shade(color: str, cycle: int) -> str:
    if cycle == 0:
        return color
    step = (cycle + 1) // 2
    if cycle % 2:  # darker shades on odd cycles, lighter ones on even cycles
        return _mix(color, "#000000", min(0.3 * step, 0.75))
    return _mix(color, "#FFFFFF", min(0.35 * step, 0.8))


def rule_colors(n: int) -> list[str]:
    """``n`` rule colours (``#RRGGBB``): the twelve of :data:`RULE_PALETTE`, then the same hues darker, then
    lighter, ..."""
    if n < 0:
        raise ParameterError(f"n must be >= 0, got {n}")
    k = len(RULE_PALETTE)
    return [_shade(RULE_PALETTE[i % k], i // k) for i in range(n)]


def rule_color(target: int, rule: int) -> str:
    """The colour of rule ``rule`` of target ``target`` in every figure (keyed by the rule id; targets are told
    apart by marker symbol where several appear together). Rule ``-1`` (no actionable rule under the constraints)
    is grey."""
    if int(rule) < 0:
        return NO_ACTION_COLOR
    return rule_colors(int(rule) + 1)[int(rule)]


def rule_dash(target: int, rule: int) -> str:
    """Line dash of a rule's outline: solid for the first eight rules, dashed for the rest of the palette's twelve,
    then dotted, dash-dotted, ... with each repeat of the palette (rule ``-1``, no actionable rule: dotted)."""
    r = int(rule)
    if r < 0:
        return "dot"
    if r < len(RULE_PALETTE):
        return DASHES[0] if r < SOLID_RULES else DASHES[1]
    return DASHES[1 + (r // len(RULE_PALETTE)) % (len(DASHES) - 1)]


def tint(color: str, share: float = 0.6) -> str:
    """A light version of a colour for filled areas where black text must stay legible."""
    return _mix(color, "#FFFFFF", share)


def rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:g})"


def class_color(i: int) -> str:
    return CLASS_PALETTE[i % len(CLASS_PALETTE)]


# ---------------------------------------------------------------------- text
def esc(value) -> str:
    """A user string made literal for plotly's HTML-like text (and for HTML): ``<``, ``>`` and ``&``."""
    return html.escape(str(value), quote=False)


def clip_text(text: str, width: int) -> str:
    text = str(text)
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


_GLUE = re.compile(r"(≤|≥|<|>|=|≠|\bin|\bto) ")


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` characters (long words are broken; a comparison stays with its value)."""
    width = max(int(width), 8)
    glued = _GLUE.sub(lambda m: m.group(1) + "\u00a0", str(text))
    lines = textwrap.wrap(glued, width=width, break_long_words=True, break_on_hyphens=False) or [""]
    return [line.replace("\u00a0", " ") for line in lines]


def fmt(v, digits: int = 4) -> str:
    """A short, readable value for tables and hovers."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.{digits}g}"
    return str(v)


# ---------------------------------------------------------------------- explainer access
def solution(ex, target: int):
    """The fitted target entry ``target`` (an index into ``ex.targets_``), with a clear error otherwise."""
    check_fitted(ex)
    if isinstance(target, bool) or not isinstance(target, (int, np.integer)):
        raise ParameterError(f"target must be the id of a target entry (an int, as in explain()['target']), "
                             f"got {target!r}")
    if not 0 <= int(target) < len(ex.targets_):
        raise ParameterError(f"target {target} does not exist; this explainer has target entries "
                             f"0..{len(ex.targets_) - 1}: "
                             + "; ".join(f"{t} = {s.target.describe()}" for t, s in enumerate(ex.targets_)))
    return ex.solution(int(target))


def target_spec(sol):
    """The ``target=`` argument that makes the explainer use exactly this target entry."""
    if sol.target.classes is not None:
        return list(sol.target.classes)
    return tuple(sol.target.interval)


def population_counts(ex, target: int, population: pd.DataFrame | None) -> tuple[np.ndarray | None, dict]:
    """Rows of an ``explain()`` frame per metarule of ``target``, and how many rows went elsewhere."""
    sol = solution(ex, target)
    if population is None:
        return None, {}
    missing = {"target", "metarule", "status"} - set(population.columns)
    if missing:
        raise ParameterError(f"population must be a DataFrame from explain() (columns target, rule, metarule, "
                             f"changes, status, text); it lacks {sorted(missing)}")
    tgt = pd.to_numeric(population["target"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    meta = pd.to_numeric(population["metarule"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    here = (tgt == target) & ~np.isnan(meta)
    counts = np.bincount(meta[here].astype(np.int64), minlength=len(sol.metarules))[: len(sol.metarules)]
    status = population["status"].astype(str).to_numpy()
    info = {"total": int(len(population)), "here": int(here.sum()),
            ALREADY_IN_TARGET: int((status == ALREADY_IN_TARGET).sum()),
            NO_RULE: int(((status == NO_RULE) & (tgt == target)).sum()),
            "other_target": int(((tgt != target) & ~np.isnan(tgt) & needs_recourse(status)).sum())}
    return counts, info


def verified_breakdown(ex, target: int, population: pd.DataFrame | None) -> dict | None:
    """Per metarule of ``target``, what verifies the people it serves, when ``population`` carries
    the ``source`` column of ``counterfactuals(verify=True)`` beside the ``explain()`` columns: ``{metarule:
    (through this rule, through the next rule, by a minimal change, not verified)}`` over the rows needing
    recourse; None when the population was not checked on a model."""
    if population is None or "source" not in population.columns:
        return None
    sol = solution(ex, target)
    tgt = pd.to_numeric(population["target"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    meta = pd.to_numeric(population["metarule"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    here = (tgt == target) & ~np.isnan(meta) & needs_recourse(population["status"].astype(str).to_numpy())
    source = population["source"].astype(object).to_numpy()
    m = meta[here].astype(np.int64)
    src = source[here]
    size = len(sol.metarules)
    this = np.bincount(m, weights=np.isin(src, [BOUNDARY, SEARCHED]), minlength=size)
    nxt = np.bincount(m, weights=src == NEXT_RULE, minlength=size)
    minimal = np.bincount(m, weights=src == MINIMAL_CHANGE, minlength=size)
    total = np.bincount(m, minlength=size)
    return {k: (int(this[k]), int(nxt[k]), int(minimal[k]), int(total[k] - this[k] - nxt[k] - minimal[k]))
            for k in range(size) if total[k]}


def breakdown_text(counts: tuple | None) -> str:
    """"3 verified through this rule, 13 through the next rule, 1 not verified" (parts that are 0 left out)."""
    if not counts:
        return ""
    this, nxt, minimal, none = counts
    parts = [f"{this} verified through this rule"] if this else []
    parts += [f"{nxt} through the next rule"] if nxt else []
    parts += [f"{minimal} by a minimal change"] if minimal else []
    parts += [f"{none} not verified"] if none else []
    return ", ".join(parts)


#: Height of one row of a legend placed above the plot (``legend_top``), in pixels.
LEGEND_ROW = 30


def base_layout(fig, title: str | None = None, notes=None, *, legend_top: bool = False, wrap_width: int = 95,
                **kwargs):
    """Shared look: white template, large type, a left-aligned title and a grey subtitle of ``notes`` (already
    escaped strings, joined with " · " and wrapped); the top margin grows with the lines.

    The title is pinned to the top of the figure, so the title, the subtitle and the plot never overlap whatever
    height the figure is drawn at. ``legend_top`` puts a horizontal legend in its own row between the subtitle and
    the plot (for figures drawn in narrow columns, where a legend on the right squeezes the plot)."""
    lines = wrap(" · ".join(notes), wrap_width) if notes else []  # 95 characters fit a 2/3-width column
    n_title = title.count("<br>") + 1 if title else 0
    n_items = sum(1 for t in fig.data if t.name and t.showlegend is not False)
    legend_rows = (1 + (n_items > 3)) if legend_top else 0  # a narrow column wraps more than three entries
    top = 40 + 28 * n_title + 20 * len(lines) + (8 if lines else 0) + LEGEND_ROW * legend_rows
    margin = {**dict(l=60, r=30, t=top, b=60), **kwargs.pop("margin", {})}
    if legend_top:
        kwargs["legend"] = {**dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom",
                                   traceorder="normal"), **kwargs.get("legend", {}),
                            **dict(orientation="h", y=1.0, yanchor="bottom", yref="paper")}
    title_spec = None
    if title:
        title_spec = dict(text=title, x=0.01, xanchor="left", y=1.0, yref="container", yanchor="top",
                          pad=dict(t=14), font=dict(size=18))
        if lines:
            title_spec["subtitle"] = dict(text="<br>".join(lines), font=dict(size=13, color="#555555"))
    fig.update_layout(template=TEMPLATE, font=FONT, title=title_spec, margin=margin, **kwargs)
    return fig
