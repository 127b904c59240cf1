"""A brute-force reference for T-CREx rules and metarules, written from the specification only.

It reads nothing but the explainer's JSON export (``json.loads(ex.to_json())``), the fit data and the model
outputs; it imports nothing from ``tcrex``. Everything is recomputed the slow, obvious way:

* a numeric condition ``{"low": l, "high": h}`` holds when ``l < x <= h`` (``None`` = unbounded); a categorical
  condition ``{"in": [...]}`` holds when ``x`` is one of the listed values; a feature absent from ``conditions``
  is unconstrained;
* ``changes(x, R)`` counts the features whose condition in ``R`` the point ``x`` violates;
* for every target, the optimal rule of ``x`` minimises ``changes(x, R) - n_R / N``; ties go to the earlier rule.
  The exact integer key ``changes * (N + 1) - n_R`` orders rules identically;
* a rule is valid when ``n >= ceil(rho * N)`` and ``n_target / n >= tau``, with ``n`` and ``n_target`` recounted
  from the fit data (accuracy is compared as an exact fraction against the decimal value of ``tau``);
* an input with output ``y`` is served by the first target whose outputs do not contain ``y``.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd

ALREADY_IN_TARGET = "already_in_target"
ALREADY_IN_RULE = "already_in_rule"
NO_RULE = "no_rule"
OK = "ok"


class Oracle:
    """Brute-force semantics of one ``tcrex-rules`` JSON document."""

    def __init__(self, doc: dict):
        assert doc["format"] == "tcrex-rules", doc.get("format")
        assert doc["version"] in (1, 2, 4, 5), doc.get("version")  # 4 adds per-rule values, 5 labels: ignored here
        # the unconstrained cost only: actionability constraints (version 2) change the cost and are not modelled
        assert not doc["params"].get("constraints"), "the oracle does not model actionability constraints"
        self.doc = doc
        self.task = doc["task"]
        self.N = int(doc["n_fit_rows"])
        self.params = doc["params"]
        self.features = doc["features"]
        self.names = [f["name"] for f in self.features]
        self.targets = doc["targets"]

    # ------------------------------------------------------------------ columns
    def _numeric(self, X: pd.DataFrame, name: str) -> np.ndarray:
        return np.asarray(pd.to_numeric(X[name]), dtype=np.float64)

    def _values(self, X: pd.DataFrame, name: str) -> list:
        return list(X[name].astype(object))

    # ------------------------------------------------------------------ boxes
    def outside(self, conditions: dict, X: pd.DataFrame) -> np.ndarray:
        """(n_rows, n_features) bool: which features of each row violate ``conditions``."""
        out = np.zeros((len(X), len(self.features)), dtype=bool)
        for i, f in enumerate(self.features):
            cond = conditions.get(f["name"])
            if cond is None:
                continue
            if f["type"] == "categorical":
                allowed = cond["in"]
                out[:, i] = [not any(v == a for a in allowed) for v in self._values(X, f["name"])]
            else:
                x = self._numeric(X, f["name"])
                bad = np.zeros(len(X), dtype=bool)
                if cond.get("low") is not None:
                    bad |= ~(x > float(cond["low"]))
                if cond.get("high") is not None:
                    bad |= ~(x <= float(cond["high"]))
                out[:, i] = bad
        return out

    def changes(self, conditions: dict, X: pd.DataFrame) -> np.ndarray:
        return self.outside(conditions, X).sum(axis=1).astype(np.int64)

    def inside(self, conditions: dict, X: pd.DataFrame) -> np.ndarray:
        return self.changes(conditions, X) == 0

    # ------------------------------------------------------------------ outputs and targets
    def target_contains(self, t: int, y) -> np.ndarray:
        outputs = self.targets[t]["outputs"]
        y = list(np.asarray(y, dtype=object))
        if "classes" in outputs:
            wanted = outputs["classes"]
            return np.array([any(_same(v, w) for w in wanted) for v in y], dtype=bool)
        iv = outputs["interval"]
        low, high = iv.get("low"), iv.get("high")
        res = []
        for v in y:
            v = float(v)
            res.append((low is None or v > float(low)) and (high is None or v <= float(high)))
        return np.array(res, dtype=bool)

    def serving(self, y) -> np.ndarray:
        """Index of the target serving each output: the first whose outputs do not contain it; -1 if none."""
        result = np.full(len(y), -1, dtype=np.int64)
        for t in range(len(self.targets)):
            free = (result < 0) & ~self.target_contains(t, y)
            result[free] = t
        return result

    # ------------------------------------------------------------------ validity
    def recount(self, t: int, X_fit: pd.DataFrame, y_fit) -> list[tuple[int, int]]:
        """(n, n_target) of every rule of target t, counted from the fit data."""
        in_target = self.target_contains(t, y_fit)
        out = []
        for rule in self.targets[t]["rules"]:
            inside = self.inside(rule["conditions"], X_fit)
            out.append((int(inside.sum()), int((inside & in_target).sum())))
        return out

    def min_count(self) -> int:
        return math.ceil(self.params["rho"] * self.N)  # exactly scikit-learn's min_samples_leaf for a fraction

    def is_valid(self, n: int, n_target: int) -> bool:
        tau = Fraction(repr(float(self.params["tau"])))  # the decimal the user typed, not its binary neighbour
        return n >= self.min_count() and n > 0 and Fraction(n_target, n) >= tau

    # ------------------------------------------------------------------ optimal rules and metarules
    def best_rules(self, t: int, X: pd.DataFrame, n_rules: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Brute-force argmin of ``changes * (N + 1) - n`` over target t's rules (first on ties).

        Returns the rule index (-1 when the target has no rule) and its number of changes.
        """
        rules = self.targets[t]["rules"]
        if not rules:
            return np.full(len(X), -1, dtype=np.int64), np.zeros(len(X), dtype=np.int64)
        ch = np.column_stack([self.changes(r["conditions"], X) for r in rules])  # (n_rows, n_rules)
        assert (len(self.features) + 1) * (self.N + 1) < 2 ** 62  # the int64 key below is exact
        key = ch.astype(np.int64) * (self.N + 1) - np.asarray(n_rules, dtype=np.int64)[None, :]
        best = np.argmin(key, axis=1)  # numpy's argmin returns the first minimum: ties -> earlier rule
        return best, ch[np.arange(len(X)), best].astype(np.int64)

    def metarule_membership(self, t: int, X: pd.DataFrame) -> np.ndarray:
        """(n_rows, n_metarules) bool: which metarules of target t contain each row."""
        metas = self.targets[t]["metarules"]
        if not metas:
            return np.zeros((len(X), 0), dtype=bool)
        return np.column_stack([self.inside(m["conditions"], X) for m in metas])

    def explain(self, X: pd.DataFrame, y, n_rules: dict[int, list[int]] | None = None) -> pd.DataFrame:
        """What a correct engine must answer for every row: target, rule, metarule, changes, status.

        ``n_rules`` maps a target to its rules' counts (default: the counts in the export). ``metarule`` is the
        unique metarule containing the row, or -2 when the row is in none or in several (a partition failure).
        """
        n = len(X)
        tgt = self.serving(y)
        rule = np.full(n, -1, dtype=np.int64)
        meta = np.full(n, -1, dtype=np.int64)
        changes = np.zeros(n, dtype=np.int64)
        status = np.array([ALREADY_IN_TARGET] * n, dtype=object)
        for t in range(len(self.targets)):
            rows = np.flatnonzero(tgt == t)
            if not len(rows):
                continue
            sub = X.iloc[rows]
            counts = (n_rules or {}).get(t) or [int(r["n"]) for r in self.targets[t]["rules"]]
            best, ch = self.best_rules(t, sub, counts)
            if not self.targets[t]["rules"]:
                status[rows] = NO_RULE
                continue
            member = self.metarule_membership(t, sub)
            hits = member.sum(axis=1)
            m = np.where(hits == 1, np.argmax(member, axis=1) if member.shape[1] else -2, -2)
            rule[rows], meta[rows], changes[rows] = best, m, ch
            status[rows] = np.where(ch == 0, ALREADY_IN_RULE, OK)
        return pd.DataFrame({"target": tgt, "rule": rule, "metarule": meta, "changes": changes, "status": status},
                            index=X.index)

    # ------------------------------------------------------------------ grids of test points
    def bounds(self, t: int | None = None) -> dict[str, list[float]]:
        """Per numeric feature, the sorted finite bounds of the rules and metarules (of target t, or all)."""
        targets = self.targets if t is None else [self.targets[t]]
        out = {f["name"]: set() for f in self.features if f["type"] == "numeric"}
        for target in targets:
            for box in target["rules"] + target["metarules"]:
                for name, cond in box["conditions"].items():
                    if name in out:
                        for k in ("low", "high"):
                            if cond.get(k) is not None:
                                out[name].add(float(cond[k]))
        return {k: sorted(v) for k, v in out.items()}

    def axis_points(self, t: int) -> list[list]:
        """Per feature, test values: every category; for numerics every bound, a point strictly inside every
        interval between consecutive bounds, and one point beyond each unbounded end."""
        bounds = self.bounds(t)
        axes = []
        for f in self.features:
            if f["type"] == "categorical":
                axes.append(list(f["categories"]))
                continue
            b = bounds[f["name"]]
            if not b:
                axes.append([0.0])
                continue
            pts = set(b)
            pts.add(b[0] - max(1.0, abs(b[0])))
            pts.add(b[-1] + max(1.0, abs(b[-1])))
            for lo, hi in zip(b, b[1:]):
                mid = lo / 2 + hi / 2
                if lo < mid < hi:
                    pts.add(mid)
                nxt = math.nextafter(lo, math.inf)  # the smallest value of the interval (lo, hi]
                if nxt < hi:
                    pts.add(nxt)
            axes.append(sorted(pts))
        return axes

    def grid(self, t: int, rng: np.random.Generator, cap: int = 3000) -> pd.DataFrame:
        """The product of :meth:`axis_points` (a random sample of ``cap`` points when larger)."""
        axes = self.axis_points(t)
        total = math.prod(len(a) for a in axes)
        if total <= cap:
            rows = list(itertools.product(*axes))
        else:
            idx = [rng.integers(0, len(a), size=cap) for a in axes]
            rows = [tuple(a[i[k]] for a, i in zip(axes, idx)) for k in range(cap)]
        return self.frame(rows)

    def frame(self, rows: list[tuple]) -> pd.DataFrame:
        cols = {}
        for i, f in enumerate(self.features):
            vals = [r[i] for r in rows]
            cols[f["name"]] = (pd.Series(vals, dtype=object) if f["type"] == "categorical"
                               else pd.Series(vals, dtype=np.float64))
        return pd.DataFrame(cols)


def _same(a, b) -> bool:
    """Output equality as JSON would see it (numpy scalars vs Python scalars)."""
    a = a.item() if isinstance(a, np.generic) else a
    b = b.item() if isinstance(b, np.generic) else b
    return a == b


def point_inside(conditions: dict, point: dict) -> bool:
    """Whether one point (``{feature: value}``) meets every condition: ``low < x <= high`` (None = open end), or
    ``x`` one of the listed categories."""
    for f, c in conditions.items():
        if "in" in c:
            if point[f] not in c["in"]:
                return False
        elif not ((c["low"] is None or point[f] > c["low"]) and (c["high"] is None or point[f] <= c["high"])):
            return False
    return True


def interval_has_integer(low, high) -> bool:
    """Whether ``(low, high]`` (None = open end) contains a whole number."""
    if low is None or high is None:
        return True
    return math.floor(low) + 1 <= high


# ---------------------------------------------------------------------- the surrogate's own nodes
def forest_nodes(X: pd.DataFrame, y, *, n_trees: int, rho: float, random_state) -> list[dict]:
    """Every node of the surrogate grown independently with scikit-learn (numeric features only, in X's column
    order, as the exact grower is documented to grow it): a decision tree for one tree, else a random forest,
    ``min_samples_leaf = ceil(rho * N)``. Each node is ``{name: (low, high)}`` over the features it bounds, with
    scikit-learn's raw float64 thresholds (float32 midpoints such as 28.8499994 included)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    leaf = max(1, math.ceil(rho * len(X)))
    if n_trees == 1:
        trees = [DecisionTreeClassifier(min_samples_leaf=leaf, random_state=random_state).fit(X.to_numpy(), y).tree_]
    else:
        forest = RandomForestClassifier(n_estimators=n_trees, min_samples_leaf=leaf, random_state=random_state,
                                        n_jobs=1).fit(X.to_numpy(), y)
        trees = [est.tree_ for est in forest.estimators_]
    names = list(X.columns)
    nodes = []
    for tree in trees:
        stack = [(0, {})]
        while stack:
            node, box = stack.pop()
            nodes.append(box)
            if tree.children_left[node] < 0:
                continue
            name, t = names[tree.feature[node]], float(tree.threshold[node])
            low, high = box.get(name, (-math.inf, math.inf))
            stack.append((tree.children_left[node], {**box, name: (low, min(high, t))}))
            stack.append((tree.children_right[node], {**box, name: (max(low, t), high)}))
    return nodes


def is_float32_artefact(t: float) -> bool:
    """Whether a scikit-learn threshold is a float32 midpoint no one would write (28.849999427795410 between
    28.8 and 28.9): more than 7 significant digits. Such a threshold may be printed as any number between the
    same two fit values (the documented readable move); every other threshold must be kept as it is."""
    return len(f"{t:.17g}".lstrip("-").replace(".", "").lstrip("0").rstrip("0")) > 7


def same_threshold(ours: float, theirs: float, fit_values: np.ndarray) -> bool:
    """``ours`` is the surrogate's threshold ``theirs``: equal, or ``theirs`` is a float32 artefact and no fit
    value lies between the two (``x <= ours`` and ``x <= theirs`` agree on every fit value)."""
    if ours == theirs:
        return True
    if not (math.isfinite(ours) and math.isfinite(theirs)) or not is_float32_artefact(theirs):
        return False
    lo, hi = min(ours, theirs), max(ours, theirs)
    return not np.any((fit_values > lo) & (fit_values <= hi))  # where x <= ours and x <= theirs disagree


def rule_is_a_node(conditions: dict, nodes: list[dict], X_fit: pd.DataFrame) -> bool:
    """Whether an exported rule (its ``conditions``) is one of ``nodes`` (from :func:`forest_nodes`)."""
    ours = {name: (-math.inf if c.get("low") is None else float(c["low"]),
                   math.inf if c.get("high") is None else float(c["high"])) for name, c in conditions.items()}
    for node in nodes:
        bounded = {k: v for k, v in node.items() if v != (-math.inf, math.inf)}
        if set(bounded) != set(ours):
            continue
        if all(same_threshold(ours[k][0], v[0], X_fit[k].to_numpy(dtype=float))
               and same_threshold(ours[k][1], v[1], X_fit[k].to_numpy(dtype=float)) for k, v in bounded.items()):
            return True
    return False


def maximal_valid_nodes(X: pd.DataFrame, in_target: np.ndarray, nodes: list[dict], *, tau: float,
                        rho: float) -> list[dict]:
    """The maximal-valid nodes among ``nodes`` (from :func:`forest_nodes`), by brute force: the distinct boxes
    holding at least ``ceil(rho * N)`` fit rows of which a share >= ``tau`` are ``in_target``, minus every one that
    lies within another such box (bound by bound, on the surrogate's own thresholds)."""
    names = list(X.columns)
    boxes = list(dict.fromkeys(tuple(b.get(n, (-math.inf, math.inf)) for n in names) for b in nodes))
    values = X.to_numpy(dtype=float)
    need = max(1, math.ceil(rho * len(X)))
    valid = []
    for box in boxes:
        inside = np.ones(len(X), dtype=bool)
        for j, (low, high) in enumerate(box):
            inside &= (values[:, j] > low) & (values[:, j] <= high)
        n, hit = int(inside.sum()), int((inside & in_target).sum())
        if n >= need and hit >= tau * n:
            valid.append(box)

    def within(a, b):
        return all(lb <= la and ha <= hb for (la, ha), (lb, hb) in zip(a, b))

    return [{names[j]: v for j, v in enumerate(a) if v != (-math.inf, math.inf)} for a in valid
            if not any(b != a and within(a, b) for b in valid)]
