"""Random problems for the property tests, each from one seed: a data set (integer, repeated, float32-sensitive and
categorical features, some with rare categories), a black box (hand-written axis-aligned threshold functions, sums of
random steps, checkerboards, scikit-learn trees fitted to random labels, small XGBoost classifiers) and a parameter
choice, for binary, multi-class and regression tasks, with default or explicit targets (:func:`make_problem`)."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

RHOS = [0.02, 0.05, 0.1, 0.2]
TAUS = [0.6, 0.7, 0.8, 0.9]
HIST_AVAILABLE = importlib.util.find_spec("tcrex._engine.fitting._hist") is not None  # grower="hist" is importable

# ---------------------------------------------------------------------------------------------------- data


NUMERIC_KINDS = ["int_small", "int_wide", "tenths", "pool", "tiny_near_one", "tiny_near_zero", "f32_edges",
                 "normal2"]
_F32 = np.array([0.1, 0.7, 3.0, 1000.1], dtype=np.float32).astype(np.float64)
_F32_ULP = np.spacing(_F32.astype(np.float32)).astype(np.float64)
# float32 values, their float64 neighbours, the next float32 up, the exact float64 midpoint between the two
# (scikit-learn's threshold when it splits them — it does when they differ by more than 1e-7 — and a float32
# rounding tie) and the float64 decimals they approximate
F32_EDGES = np.unique(np.concatenate([_F32, np.nextafter(_F32, np.inf), np.nextafter(_F32, -np.inf),
                                      _F32 + _F32_ULP / 2, _F32 + _F32_ULP, [0.1, 0.7, 3.0, 1000.1]]))


def numeric_column(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "int_small":
        return rng.integers(0, int(rng.integers(2, 12)) + 1, n)
    if kind == "int_wide":
        return rng.integers(-50, 200, n)
    if kind == "tenths":  # 0.1 * k: 0.30000000000000004 and friends
        return rng.integers(0, 20, n) * 0.1
    if kind == "pool":  # few repeated values, none exact in binary or float32
        return rng.choice([0.1, 0.7, 0.2, 0.3, 1.1, 2.7, 0.15, 0.35, 0.6999999999999999], n)
    if kind == "tiny_near_one":  # distinct in float64, mostly equal in float32
        return 1.0 + rng.integers(0, 40, n) * 1e-8
    if kind == "tiny_near_zero":
        return rng.integers(0, 40, n) * 1e-8
    if kind == "f32_edges":
        return rng.choice(F32_EDGES, n)
    if kind == "normal2":
        return np.round(rng.normal(50, 15, n), 2)
    raise AssertionError(kind)


def categorical_column(n_categories: int, rare: bool, n: int, rng: np.random.Generator) -> np.ndarray:
    names = np.array(["red", "green", "blue", "amber", "violet"][:n_categories], dtype=object)
    common = names[:-1] if rare else names
    col = rng.choice(common, n, p=rng.dirichlet(np.ones(len(common)) * 2))
    n_rare = int(rng.integers(1, 4)) if rare else 0  # the last category appears on 1 to 3 rows only
    where = rng.choice(n, len(common) + n_rare, replace=False)
    col[where[:len(common)]] = common  # every common category appears
    col[where[len(common):]] = names[-1]
    return col


# ---------------------------------------------------------------------------------------------------- models


def design(X: pd.DataFrame, cats: dict) -> np.ndarray:
    """Numeric columns as they are, categoricals one-hot over a fixed category list (the models' own input)."""
    cols = []
    for name in X.columns:
        if name in cats:
            v = X[name].astype(object).to_numpy()
            cols.extend((v == c).astype(np.float64) for c in cats[name])
        else:
            cols.append(X[name].to_numpy(dtype=np.float64))
    return np.column_stack(cols)


def random_split_tree(X: pd.DataFrame, cats: dict, depth: int, rng: np.random.Generator, n_leaves_out: list):
    """A random axis-aligned threshold function: nested splits on data values / category subsets."""
    if depth == 0:
        n_leaves_out[0] += 1
        return ("leaf", n_leaves_out[0] - 1)
    name = X.columns[int(rng.integers(len(X.columns)))]
    if name in cats:
        k = len(cats[name])
        size = int(rng.integers(1, k))
        subset = set(rng.choice(cats[name], size, replace=False).tolist())
        test = ("cat", name, subset)
    else:
        col = X[name].to_numpy(dtype=np.float64)
        thr = float(np.quantile(col, rng.uniform(0.15, 0.85), method="nearest"))  # a value present in the data
        test = ("num", name, thr)
    left = random_split_tree(X, cats, depth - 1 if rng.random() < 0.85 else 0, rng, n_leaves_out)
    right = random_split_tree(X, cats, depth - 1 if rng.random() < 0.85 else 0, rng, n_leaves_out)
    return ("split", test, left, right)


def leaf_of(tree, X: pd.DataFrame) -> np.ndarray:
    out = np.empty(len(X), dtype=np.int64)

    def walk(node, rows):
        if node[0] == "leaf":
            out[rows] = node[1]
            return
        kind, name, arg = node[1]
        sub = X.iloc[rows]
        if kind == "num":
            go_left = sub[name].to_numpy(dtype=np.float64) <= arg
        else:
            go_left = np.array([v in arg for v in sub[name].astype(object)], dtype=bool)
        walk(node[2], rows[go_left])
        walk(node[3], rows[~go_left])

    walk(tree, np.arange(len(X)))
    return out


@dataclass
class Problem:
    X: pd.DataFrame
    y: np.ndarray
    model: Callable = field(repr=False)
    task: str
    kind: str
    model_kind: str
    rho: float
    tau: float
    n_trees: int
    grower: str
    surrogate_params: dict | None
    categorical_features: list | None
    target: object
    seed: int
    integer: dict = field(repr=False, default_factory=dict)  # numeric feature -> every fit value is whole
    cats: dict = field(repr=False, default_factory=dict)  # categorical feature -> its categories

    def params(self, **over) -> dict:
        p = dict(rho=self.rho, tau=self.tau, n_trees=self.n_trees, task=self.task, target=self.target,
                 grower=self.grower, surrogate_params=self.surrogate_params,
                 categorical_features=self.categorical_features, random_state=0)
        p.update(over)
        return p

    def __repr__(self) -> str:
        cols = ", ".join(f"{c}:{self.X[c].dtype}{'(cat)' if c in self.cats else ''}" for c in self.X.columns)
        return (f"Problem(seed={self.seed}, n={len(self.X)}, [{cols}], {self.kind}, model={self.model_kind}, "
                f"rho={self.rho}, tau={self.tau}, n_trees={self.n_trees}, grower={self.grower}, "
                f"surrogate_params={self.surrogate_params}, target={self.target!r})")

    def _repr_pretty_(self, printer, cycle):  # Hypothesis prints failing examples with this, not the fields
        printer.text(repr(self))


def make_problem(seed: int) -> Problem | None:
    """A random data set, black box and parameter choice, all from one seed (None: degenerate outputs).

    Every choice comes from the seed rather than from separate Hypothesis draws: with ~40 examples Hypothesis'
    draws lean heavily towards the first option of each choice, and an even spread matters more here than
    shrinking (a failure is reported with its seed and a one-line summary of the problem).
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(60, 401))
    numeric_kinds = [str(k) for k in rng.choice(NUMERIC_KINDS, int(rng.integers(1, 5)))]
    cat_specs = [(int(rng.integers(2, 6)), bool(rng.random() < 0.5)) for _ in range(int(rng.integers(0, 3)))]
    kind = str(rng.choice(["binary", "multiclass", "regression"]))
    model_kind = str(rng.choice(["threshold", "additive", "checker", "sk_tree"] * 2 + ["xgboost"]))
    if model_kind == "xgboost" and kind == "regression":
        model_kind = "threshold"
    rho = float(rng.choice(RHOS, p=[0.35, 0.3, 0.2, 0.15]))
    tau = float(rng.choice(TAUS))
    n_trees = int(rng.choice([1, 2, 3]))
    grower = "hist" if HIST_AVAILABLE and rng.random() < 0.2 else "exact"
    # sometimes leaves smaller than ceil(rho * N): then validity must filter candidates by n, not only by accuracy
    surrogate_params = {"min_samples_leaf": 1, "max_depth": 6} if rng.random() < 0.2 else None

    cols, cats, declared = {}, {}, []
    for j, k in enumerate(numeric_kinds):
        cols[f"n{j}_{k}"] = numeric_column(k, n, rng)
    for j, (k, rare) in enumerate(cat_specs):
        name = f"c{j}"
        col = categorical_column(k, rare and k > 2, n, rng)
        style = str(rng.choice(["str", "int", "category"]))
        if style == "int":  # whole-number codes, declared categorical
            col = np.array([10 * (["red", "green", "blue", "amber", "violet"].index(v) + 1) for v in col])
            declared.append(name)
        cats[name] = sorted(set(col.tolist()))
        cols[name] = pd.Categorical(col, categories=cats[name]) if style == "category" else col
    X = pd.DataFrame(cols)
    integer = {c: bool(np.all(X[c] == np.round(X[c]))) for c in X.columns if c not in cats}

    n_classes = {"binary": 2, "multiclass": int(rng.integers(3, 5)), "regression": 0}[kind]
    labels = (np.array(["no", "yes", "maybe", "later"][:n_classes], dtype=object) if rng.random() < 0.5
              else np.arange(n_classes))

    if model_kind == "threshold":
        counter = [0]
        tree = random_split_tree(X, cats, int(rng.integers(1, 5)), rng, counter)
        if kind == "regression":
            values = rng.normal(0, 10, counter[0])
            slope = rng.normal(0, 0.05)
            first = X.columns[0]

            def model(Z, tree=tree, values=values, slope=slope, first=first):
                return values[leaf_of(tree, Z)] + slope * Z[first].to_numpy(dtype=np.float64)
        else:
            leaf_class = rng.permutation(np.arange(counter[0]) % n_classes)

            def model(Z, tree=tree, leaf_class=leaf_class, labels=labels):
                return labels[leaf_class[leaf_of(tree, Z)]]
    elif model_kind == "additive":  # a sum of random steps, cut into classes: many overlapping valid rules
        steps = []
        for _ in range(int(rng.integers(2, 6))):
            name = X.columns[int(rng.integers(len(X.columns)))]
            if name in cats:
                hot = set(rng.choice(cats[name], int(rng.integers(1, len(cats[name]))), replace=False).tolist())
                steps.append((name, "cat", hot, float(rng.normal(0, 1))))
            else:
                col = X[name].to_numpy(dtype=np.float64)
                steps.append((name, "num", float(np.quantile(col, rng.uniform(0.1, 0.9), method="nearest")),
                              float(rng.normal(0, 1))))

        def score(Z, steps=steps):
            s = np.zeros(len(Z))
            for name, how, arg, w in steps:
                hit = (Z[name].astype(object).isin(arg).to_numpy() if how == "cat"
                       else Z[name].to_numpy(dtype=np.float64) > arg)
                s += w * hit
            return s
        if kind == "regression":
            model = score
        else:
            cuts = np.quantile(score(X), np.arange(1, n_classes) / n_classes + rng.uniform(-0.1, 0.1, n_classes - 1))

            def model(Z, score=score, cuts=cuts, labels=labels):
                return labels[np.searchsorted(cuts, score(Z), side="left")]
    elif model_kind == "checker":  # a checkerboard of bins: many small, disjoint rules per target
        axes = []
        for name in rng.choice(X.columns, int(rng.integers(1, min(3, len(X.columns)) + 1)), replace=False):
            if name in cats:
                axes.append((name, "cat", {c: int(rng.integers(0, 3)) for c in cats[name]}))
            else:
                col = X[name].to_numpy(dtype=np.float64)
                cuts = np.unique(np.quantile(col, rng.uniform(0.05, 0.95, int(rng.integers(1, 4))), method="nearest"))
                axes.append((name, "num", cuts))
        period = max(n_classes, 2)
        offsets = rng.normal(0, 10, period)

        def cell(Z, axes=axes):
            k = np.zeros(len(Z), dtype=np.int64)
            for name, how, arg in axes:
                k += (np.array([arg[v] for v in Z[name].astype(object)], dtype=np.int64) if how == "cat"
                      else np.searchsorted(arg, Z[name].to_numpy(dtype=np.float64), side="left"))
            return k % period
        if kind == "regression":
            def model(Z, cell=cell, offsets=offsets):
                return offsets[cell(Z)]
        else:
            def model(Z, cell=cell, labels=labels):
                return labels[cell(Z)]
    elif model_kind == "sk_tree":  # a scikit-learn tree fitted to random labels: an arbitrary piecewise model
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
        D = design(X, cats)
        depth = int(rng.integers(2, 7))
        if kind == "regression":
            est = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(D, rng.normal(0, 5, n))

            def model(Z, est=est, cats=cats):
                return est.predict(design(Z, cats))
        else:
            est = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(D, rng.integers(0, n_classes, n))

            def model(Z, est=est, cats=cats, labels=labels):
                return labels[est.predict(design(Z, cats)).astype(np.int64)]
    else:
        import xgboost
        counter = [0]
        tree = random_split_tree(X, cats, 2, rng, counter)
        leaf_class = rng.permutation(np.arange(counter[0]) % n_classes)
        raw = leaf_class[leaf_of(tree, X)]
        raw = np.where(rng.random(n) < 0.1, rng.integers(0, n_classes, n), raw)
        present, codes = np.unique(raw, return_inverse=True)
        if len(present) < 2:
            return None
        est = xgboost.XGBClassifier(n_estimators=5, max_depth=2, n_jobs=1, random_state=0)
        est.fit(design(X, cats), codes)

        def model(Z, est=est, cats=cats, labels=labels, present=present):
            return labels[present[est.predict(design(Z, cats)).astype(np.int64)]]

    y = model(X)
    task = "regression" if kind == "regression" else "classification"
    if len(pd.unique(y)) < 2:
        return None
    # half the problems use the default targets, the others an explicit one (so some inputs are already there)
    target = None
    if rng.random() < 0.5:
        if task == "classification":
            seen = sorted(set(y.tolist()), key=str)
            wanted = rng.choice(len(seen), int(rng.integers(1, len(seen))), replace=False)
            target = [seen[i] for i in sorted(wanted)]
            target = target[0] if len(target) == 1 and rng.random() < 0.5 else target
        else:
            q = np.quantile(y, np.sort(rng.uniform(0.1, 0.9, 2)))
            target = str(rng.choice(["split", "above", "below", "between"]))
            target = {"split": float(q[0]), "above": (float(q[0]), None), "below": (None, float(q[1])),
                      "between": (float(q[0]), float(q[1]))}[target]
            if isinstance(target, tuple) and None not in target and not target[0] < target[1]:
                target = (target[0], None)
    return Problem(X=X, y=y, model=model, task=task, kind=kind, model_kind=model_kind, rho=rho, tau=tau,
                   n_trees=n_trees, grower=grower, surrogate_params=surrogate_params,
                   categorical_features=declared or None, target=target, seed=seed, integer=integer, cats=cats)
