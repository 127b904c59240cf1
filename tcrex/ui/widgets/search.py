"""Finding individuals: a text anywhere in the row, or an expression over the columns.

Syntax (documented on the Individual page and in docs/dashboard.md):

* **Text** (no ``= < > !`` and no backticks): rows whose values contain it, case-insensitive, including the label
  and the model output (by class name), and a labelled value by its codebook label as well as its code
  ("no checking account (A14)": ``checking`` and ``A14`` both find it), e.g. ``Unemployed``.
* **Expression**, pandas-query style: comparisons ``== != < <= > >=``, ``in [..]`` / ``not in [..]``, joined by
  ``and`` / ``or`` / ``not`` (or ``& | ~``) with parentheses; arithmetic ``+ - * /``. Names with spaces or symbols go
  in backticks. Besides the features there are two columns: ``label`` (the data's label column, also under its own
  name) and `` `model output` `` (also ``model_output``). A class may be written by its value or its name:
  ``label == 1``, `` `model output` == "approved" ``, ``income > 80 and age < 30``.

An expression that cannot be read is reported with the parser's message, never searched as text. Expressions are
evaluated here, node by node, on a fixed set of operations: no attribute access, no function calls, no
``@variables``, so a search cannot run code on the server.
"""

from __future__ import annotations

import ast
import operator
import re
from typing import Any

import numpy as np
import pandas as pd

from tcrex.population import labelled_groups
from tcrex.vocabulary import REGRESSION

from ..state.active import DataAndModel

#: Column names of the label and the model's output in searches (``label`` only when no feature has that name).
LABEL = "label"
OUTPUT = "model output"
OUTPUT_ALIAS = "model_output"
#: Most rows a search returns.
LIMIT = 200

_EXPRESSION = re.compile(r"[<>=!`]|\bin\s*[\[(]")
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
        ast.NotIn: "not in"}


class SearchError(ValueError):
    """A search the user must fix; the message is written for them."""


def is_expression(query: str) -> bool:
    """Whether a search is an expression (it has a comparison, ``!``, a backtick or ``in [``) rather than text."""
    return bool(_EXPRESSION.search(query))


def search_frame(ws: DataAndModel) -> pd.DataFrame:
    """The columns a search sees: the features, the label (as ``label`` and under its own name) and the model
    output (as ``model output`` / ``model_output``), aligned with ``ws.X``."""
    frame = ws.X.copy()
    label = ws.data.label_column
    if label and label in ws.data.frame.columns and label not in frame.columns:
        frame[label] = ws.data.frame[label].reindex(ws.X.index).to_numpy()
    if label and label in frame.columns and LABEL not in frame.columns:
        frame[LABEL] = frame[label].to_numpy()
    for name in (OUTPUT, OUTPUT_ALIAS):
        if name not in frame.columns:
            frame[name] = ws.y_pred
    return frame


def outcome_columns(ws: DataAndModel, frame: pd.DataFrame) -> set[str]:
    """Columns whose values are classes (compared by value or by class name)."""
    if ws.task == REGRESSION:
        return set()
    label = ws.data.label_column
    return {c for c in (OUTPUT, OUTPUT_ALIAS, LABEL if label else None, label) if c and c in frame.columns}


def search_rows(ws: DataAndModel, query: str, limit: int = LIMIT) -> pd.Index:
    """Row labels of ``ws.X`` matching ``query`` (first ``limit``); :class:`SearchError` when an expression cannot
    be read or evaluated."""
    query = (query or "").strip()
    if not query:
        return ws.X.index[:limit]
    frame = search_frame(ws)
    if is_expression(query):
        mask = evaluate(query, frame, outcome_columns(ws, frame), ws.class_name)
        return ws.X.index[mask][:limit]
    text = frame.copy()
    outcomes = outcome_columns(ws, frame)
    for c in outcomes:
        words = {v: f"{v} {ws.class_name(v)}" for v in pd.unique(frame[c].dropna())}
        text[c] = frame[c].map(words)
    for c, labels in (ws.data.value_labels or {}).items():
        if c in text.columns and c not in outcomes:  # "label (code)": found by its label and by its code
            text[c] = labelled_groups(frame[c], labels).astype(object)
    hits = text.astype(str).apply(lambda col: col.str.contains(query, case=False, regex=False))
    return ws.X.index[hits.any(axis=1).to_numpy()][:limit]


# ============================================================================================ expressions
def evaluate(query: str, frame: pd.DataFrame, outcomes: set[str] = frozenset(), class_name=str) -> np.ndarray:
    """Boolean mask over ``frame``'s rows: where the expression ``query`` holds."""
    if "@" in query:
        raise SearchError("`@` (variables) is not part of a search; compare columns with values, e.g. income > 50")
    names: dict[str, str] = {}

    def swap(m: re.Match) -> str:
        ident = f"__col{len(names)}__"
        names[ident] = m.group(1)
        return ident

    source = re.sub(r"`([^`]*)`", swap, query)
    if "`" in source:
        raise SearchError("a backtick is not closed: write names with spaces as `model output`")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise SearchError(_syntax_message(exc, query)) from None
    ev = _Evaluator(frame, names, outcomes, class_name)
    try:
        value = ev.eval(tree.body)
    except SearchError:
        raise
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise SearchError(f"this expression cannot be evaluated on the data ({_plain(exc)}); compare numbers with "
                          "numbers and text with quoted text, e.g. employment == \"Unemployed\"") from None
    if isinstance(value, _Col):
        value = value.series
    if not isinstance(value, pd.Series) or not (pd.api.types.is_bool_dtype(value)
                                                or value.dropna().isin([True, False]).all()):
        raise SearchError("the expression must say yes or no for every row: use a comparison such as income > 50 "
                          "or label == 1")
    return value.fillna(False).to_numpy(dtype=bool)


def _syntax_message(exc: SyntaxError, query: str) -> str:
    msg = str(exc.msg or "invalid syntax").rstrip(".")
    where = ""
    if exc.offset:
        pos = max(0, min(len(query), exc.offset - 1))
        where = f" near “{query[max(0, pos - 12):pos + 12].strip()}”" if query.strip() else ""
    if re.search(r"(?<![=!<>])=(?!=)", query):
        hint = "; to compare use == (two equals signs)"
    else:
        hint = "; put names with spaces or symbols in backticks (`model output`) and text values in quotes"
    return f"this search is not a valid expression: {msg}{where}{hint}"


def _plain(exc: Exception) -> str:
    return str(exc).replace("\n", " ").strip() or type(exc).__name__


class _Col:
    """A column of the frame (kept apart from computed values so class names can be matched)."""

    def __init__(self, name: str, series: pd.Series):
        self.name, self.series = name, series


class _Evaluator:
    def __init__(self, frame: pd.DataFrame, names: dict, outcomes: set, class_name):
        self.frame, self.names, self.outcomes, self.class_name = frame, names, outcomes, class_name

    def eval(self, node) -> Any:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise SearchError(f"{_describe(node)} is not allowed in a search; use comparisons (== != < <= > >=, "
                              "in [...]) joined by and / or / not")
        return method(node)

    # ------------------------------------------------------------------ leaves
    def _Name(self, node):
        name = self.names.get(node.id, node.id)
        if name in self.frame.columns:
            return _Col(name, self.frame[name])
        known = ", ".join(_quote(c) for c in list(self.frame.columns)[:30])
        raise SearchError(f"there is no column {_quote(name)}; columns: {known}")

    def _Constant(self, node):
        if isinstance(node.value, (str, int, float, bool)) or node.value is None:
            return node.value
        raise SearchError(f"{node.value!r} is not a value a search can compare with")

    def _List(self, node):
        return [self._value(self.eval(e)) for e in node.elts]

    _Tuple = _List

    def _value(self, v):
        if isinstance(v, (_Col, pd.Series)):
            raise SearchError("a list in a search holds values, not columns: e.g. employment in [\"A\", \"B\"]")
        return v

    # ------------------------------------------------------------------ operators
    def _series(self, v):
        return v.series if isinstance(v, _Col) else v

    def _bool(self, v) -> pd.Series:
        s = self._series(v)
        if isinstance(s, pd.Series) and (pd.api.types.is_bool_dtype(s) or s.dropna().isin([True, False]).all()):
            return s.fillna(False).astype(bool)
        if isinstance(s, bool):
            return pd.Series(s, index=self.frame.index)
        raise SearchError("and / or / not join conditions that say yes or no, e.g. (income > 50) and (age < 30)")

    def _BoolOp(self, node):
        parts = [self._bool(self.eval(v)) for v in node.values]
        out = parts[0]
        for p in parts[1:]:
            out = (out & p) if isinstance(node.op, ast.And) else (out | p)
        return out

    def _UnaryOp(self, node):
        v = self.eval(node.operand)
        if isinstance(node.op, (ast.Not, ast.Invert)):
            return ~self._bool(v)
        s = self._series(v)
        if isinstance(node.op, ast.USub):
            return -s
        if isinstance(node.op, ast.UAdd):
            return +s
        raise SearchError(f"{_describe(node.op)} is not allowed in a search")

    def _BinOp(self, node):
        if isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            a, b = self._bool(self.eval(node.left)), self._bool(self.eval(node.right))
            return (a & b) if isinstance(node.op, ast.BitAnd) else (a | b)
        op = _ARITH.get(type(node.op))
        if op is None:
            raise SearchError(f"{_describe(node.op)} is not allowed in a search; use + - * /")
        return op(self._series(self.eval(node.left)), self._series(self.eval(node.right)))

    def _Compare(self, node):
        left = self.eval(node.left)
        out = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node)
            part = self._compare(left, op, right)
            out = part if out is None else (out & part)
            left = right
        return out

    def _compare(self, left, op, right) -> pd.Series:
        if isinstance(op, (ast.In, ast.NotIn)):
            if not isinstance(right, list):
                raise SearchError("`in` needs a list of values in brackets, e.g. purpose in [\"Car\", \"Home\"]")
            values = self._classes(left, right)
            mask = self._series(left).isin(values)
            if not isinstance(mask, pd.Series):
                raise SearchError("the left side of `in` must be a column")
            return ~mask if isinstance(op, ast.NotIn) else mask
        fn = _COMPARE.get(type(op))
        if fn is None:
            raise SearchError(f"{_OPS.get(type(op), type(op).__name__)} is not allowed in a search")
        if isinstance(left, _Col) and not isinstance(right, _Col):
            left_v, right_v = left.series, self._classes(left, [right])[0]
        elif isinstance(right, _Col) and not isinstance(left, _Col):
            left_v, right_v = self._classes(right, [left])[0], right.series
        else:
            left_v, right_v = self._series(left), self._series(right)
        result = fn(left_v, right_v)
        if not isinstance(result, pd.Series):
            raise SearchError("a comparison in a search needs a column on one side, e.g. income > 50")
        return result

    def _classes(self, col, values: list) -> list:
        """Class names written as text become their class values (``"approved"`` → 1) for outcome columns."""
        if not (isinstance(col, _Col) and col.name in self.outcomes):
            return values
        lookup = {}
        for v in pd.unique(col.series.dropna()):
            lookup.setdefault(str(self.class_name(v)).casefold(), v)
            lookup.setdefault(str(v).casefold(), v)
        return [lookup.get(v.casefold(), v) if isinstance(v, str) else v for v in values]


def _describe(node) -> str:
    names = {"Call": "a function call", "Attribute": "attribute access (a dot after a name)",
             "Subscript": "indexing with [...]", "Lambda": "lambda", "NamedExpr": ":=", "Dict": "a dictionary",
             "Set": "a set { }", "IfExp": "if / else", "ListComp": "a comprehension", "Starred": "*",
             "JoinedStr": "an f-string", "MatMult": "@", "LShift": "<<", "RShift": ">>", "BitXor": "^",
             "Invert": "~"}
    return names.get(type(node).__name__, type(node).__name__)


def _quote(name: str) -> str:
    return f"`{name}`" if not re.fullmatch(r"[A-Za-z_]\w*", str(name)) else str(name)
