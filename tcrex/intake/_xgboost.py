"""XGBoost models saved as JSON or UBJSON: parse in Python, check the structure, then hand XGBoost clean JSON.

Why not ``Booster.load_model(bytes)`` directly: XGBoost trusts the tree arrays of a model file. A hand-edited file
whose child index points outside its tree, whose split names a feature the model does not have, or whose
"tree" loops back on itself loads without complaint and then crashes the whole Python process (segmentation
fault) at the first prediction; an absurd class count makes prediction allocate without bound. In a dashboard
that is every user's session gone. So the document is parsed here (``json`` or the bounded UBJSON decoder),
every index is checked, and XGBoost only ever reads JSON re-serialised from the checked document (so a parser
difference, e.g. duplicate keys, cannot smuggle in unchecked values).

Categories (XGBoost >= 3.1 stores the category names of native categorical features in ``gradient_booster.
model.cats``): the names are decoded here and inputs are re-coded to the model's category codes before XGBoost
sees them, so predictions do not depend on the order of a pandas ``category`` column. XGBoost 3.1-3.2 write
non-ASCII category names damaged (character counts used as byte offsets; fixed upstream in dmlc/xgboost#12371);
the names that can be recovered are, the rest are reported.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from .. import MAX_TARGET_CLASSES
from ..errors import ModelError
from ..vocabulary import CATEGORICAL, CLASSIFICATION, NUMERIC, REGRESSION
from ._base import LoadedModel, as_frame, numeric_column, short_error
from ._categories import code_map, codes, integer_codes
from ._ubjson import UBJSONError
from ._ubjson import decode as ubj_decode

MAX_FEATURES = 100_000
MAX_CLASSES = MAX_TARGET_CLASSES  # the engine's cap (one owner): a model with more classes cannot be explained
MAX_NODES_PER_TREE = 1 << 26
MAX_CATEGORY_CODE = 1 << 16  # categorical split sets are bitfields sized by their largest code
_FEATURE_TYPES = {"float": NUMERIC, "int": NUMERIC, "i": NUMERIC, "q": NUMERIC, "c": CATEGORICAL}
_CLASSIFY_PREFIXES = ("binary:", "multi:")


class _Bad(Exception):
    """Internal: a structural problem, turned into a ModelError with the file's name by the caller."""


# ---------------------------------------------------------------------------------------------- parsing
def parse(data: bytes, fmt: str) -> dict:
    """The model document from JSON or UBJSON bytes, or a ModelError saying why it is not one."""
    if fmt == "ubj":
        try:
            doc = ubj_decode(data)
        except UBJSONError as exc:
            raise ModelError(f"not a valid XGBoost UBJSON model (truncated or damaged?): {exc}") from None
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ModelError(f"not a valid XGBoost JSON model: the file is not UTF-8 text (byte {exc.start})") \
                from None
        try:
            doc = json.loads(text)
        except RecursionError:
            raise ModelError("not a valid XGBoost JSON model: nesting is too deep") from None
        except json.JSONDecodeError as exc:
            hint = " — the file looks truncated" if exc.pos >= len(text.rstrip()) - 1 else ""
            raise ModelError(f"not a valid XGBoost JSON model: {exc.msg} at line {exc.lineno}, column "
                             f"{exc.colno}{hint}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("learner"), dict):
        raise ModelError("not an XGBoost model: the document has no 'learner' object (save the model with "
                         "Booster.save_model('model.json') or XGBClassifier.save_model)")
    return doc


# ---------------------------------------------------------------------------------------------- checking
def _int(v, what: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise _Bad(f"{what} must be a whole number, got {v!r}")
    if isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            raise _Bad(f"{what} must be a whole number, got {v[:40]!r}") from None
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
        v = int(v)
    if not isinstance(v, (int, np.integer)):
        raise _Bad(f"{what} must be a whole number, got {type(v).__name__}")
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise _Bad(f"{what} = {v} is out of range [{lo}, {hi}]")
    return v


def _array(v, what: str, n: int | None = None, *, integer: bool = True) -> np.ndarray:
    if isinstance(v, np.ndarray):
        arr = v
    elif isinstance(v, list):
        if any(isinstance(x, (list, dict, str)) or x is None for x in v):
            raise _Bad(f"{what} must be a list of numbers")
        arr = np.asarray(v) if v else np.zeros(0, dtype=np.int64 if integer else np.float64)
    else:
        raise _Bad(f"{what} must be a list, got {type(v).__name__}")
    if arr.ndim != 1:
        raise _Bad(f"{what} must be a flat list")
    if integer:
        if arr.dtype.kind == "f":
            if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
                raise _Bad(f"{what} must hold whole numbers")
        elif arr.dtype.kind not in "iub":
            raise _Bad(f"{what} must hold whole numbers")
        if arr.size and (arr.max() > 2**62 or arr.min() < -2**62):
            raise _Bad(f"{what} holds out-of-range numbers")
        arr = arr.astype(np.int64)
    else:
        if arr.dtype.kind not in "iubf":
            raise _Bad(f"{what} must hold numbers")
        arr = arr.astype(np.float64)
    if n is not None and len(arr) != n:
        raise _Bad(f"{what} has {len(arr)} entries, expected {n}")
    return arr


def _get(d: dict, key: str, what: str, kind=dict):
    if not isinstance(d, dict) or key not in d:
        raise _Bad(f"missing {what}")
    v = d[key]
    if kind is not None and not isinstance(v, kind):
        raise _Bad(f"{what} has the wrong type ({type(v).__name__})")
    return v


def _check_tree(t, k: int, num_feature: int, n_cats: list[int | None]) -> None:
    if not isinstance(t, dict):
        raise _Bad(f"tree {k} is not an object")
    if "id" in t and _int(t["id"], f"tree {k}: id") != k:  # XGBoost stores tree k at position id: unchecked
        raise _Bad(f"tree {k} has id {t['id']!r}; tree ids must be their positions")
    tp = _get(t, "tree_param", f"tree {k}: tree_param")
    nn = _int(_get(tp, "num_nodes", f"tree {k}: num_nodes", None), f"tree {k}: num_nodes", 1, MAX_NODES_PER_TREE)
    slv = _int(tp.get("size_leaf_vector", 1), f"tree {k}: size_leaf_vector", 0, 1 << 20)
    if slv > 1:
        raise _Bad(f"tree {k} has vector leaves (a multi-output model); T-CREx needs one output per row")
    left = _array(_get(t, "left_children", f"tree {k}: left_children", None), f"tree {k}: left_children", nn)
    right = _array(_get(t, "right_children", f"tree {k}: right_children", None), f"tree {k}: right_children", nn)
    split = _array(_get(t, "split_indices", f"tree {k}: split_indices", None), f"tree {k}: split_indices", nn)
    _array(_get(t, "split_conditions", f"tree {k}: split_conditions", None), f"tree {k}: split_conditions", nn,
           integer=False)
    _array(_get(t, "default_left", f"tree {k}: default_left", None), f"tree {k}: default_left", nn)
    _array(_get(t, "base_weights", f"tree {k}: base_weights", None), f"tree {k}: base_weights", None, integer=False)
    parents = _array(t["parents"], f"tree {k}: parents", nn) if "parents" in t else None
    split_type = (_array(t["split_type"], f"tree {k}: split_type", nn) if "split_type" in t
                  else np.zeros(nn, dtype=np.int64))
    leaf = left == -1
    if np.any((right == -1) != leaf):
        bad = int(np.flatnonzero((right == -1) != leaf)[0])
        raise _Bad(f"tree {k}: node {bad} has exactly one child")
    internal = np.flatnonzero(~leaf)
    children = np.concatenate([left[internal], right[internal]])
    if children.size:
        if children.min() < 1 or children.max() >= nn:
            bad = int(children[(children < 1) | (children >= nn)][0])
            raise _Bad(f"tree {k}: a child index ({bad}) points outside the tree's {nn} nodes")
        if len(np.unique(children)) != len(children):
            raise _Bad(f"tree {k}: a node is the child of two nodes (the tree has a loop or shared branch)")
        if parents is not None and (np.any(parents[left[internal]] != internal)
                                    or np.any(parents[right[internal]] != internal)):
            raise _Bad(f"tree {k}: the parents array does not match the children arrays")
        used = split[internal]
        if used.min() < 0 or used.max() >= num_feature:
            bad = int(used[(used < 0) | (used >= num_feature)][0])
            raise _Bad(f"tree {k}: a split uses feature index {bad}, but the model has {num_feature} features")
        if np.any((split_type[internal] != 0) & (split_type[internal] != 1)):
            raise _Bad(f"tree {k}: unknown split type")
    cat_nodes_expected = set(internal[split_type[internal] == 1].tolist()) if children.size else set()
    if cat_nodes_expected or any(len(t.get(f, [])) for f in ("categories_nodes", "categories")):
        nodes = _array(t.get("categories_nodes", []), f"tree {k}: categories_nodes")
        segs = _array(t.get("categories_segments", []), f"tree {k}: categories_segments", len(nodes))
        sizes = _array(t.get("categories_sizes", []), f"tree {k}: categories_sizes", len(nodes))
        cats = _array(t.get("categories", []), f"tree {k}: categories")
        if set(nodes.tolist()) != cat_nodes_expected or len(np.unique(nodes)) != len(nodes):
            raise _Bad(f"tree {k}: categorical split records do not match the categorical split nodes")
        if len(nodes) and (segs.min() < 0 or sizes.min() < 0 or np.max(segs + sizes) > len(cats)):
            raise _Bad(f"tree {k}: categorical split records point outside the category list")
        if len(cats) and (cats.min() < 0 or cats.max() >= MAX_CATEGORY_CODE):
            raise _Bad(f"tree {k}: a categorical split names category code {int(cats.max())}, out of range")
        for node, seg, size in zip(nodes.tolist(), segs.tolist(), sizes.tolist()):
            limit = n_cats[int(split[node])]
            if limit is not None and size and cats[seg:seg + size].max() >= limit:
                raise _Bad(f"tree {k}: a categorical split uses category code {int(cats[seg:seg + size].max())}"
                           f" but feature {int(split[node])} has {limit} categories")


def _decode_categories(cats, num_feature: int) -> tuple[list, list[bool]]:
    """Per feature: None (not categorical / unknown) or the list of category names in code order; and whether
    some names were stored damaged (then those entries are None)."""
    enc = _get(cats, "enc", "cats.enc", list)
    if not enc and not len(cats.get("feature_segments", [])) and not len(cats.get("sorted_idx", [])):
        return [None] * num_feature, [False] * num_feature  # no categorical feature
    if len(enc) != num_feature:
        raise _Bad(f"cats.enc has {len(enc)} entries for {num_feature} features")
    segs = _array(cats.get("feature_segments", []), "cats.feature_segments", num_feature + 1)
    sorted_idx = _array(cats.get("sorted_idx", []), "cats.sorted_idx")
    out, damaged = [], []
    for i, e in enumerate(enc):
        if not isinstance(e, dict):
            raise _Bad(f"cats.enc[{i}] is not an object")
        names, bad = None, False
        if "offsets" in e:
            offsets = _array(e["offsets"], f"cats.enc[{i}].offsets")
            values = _array(e.get("values", []), f"cats.enc[{i}].values")
            if len(offsets):
                if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] > len(values):
                    raise _Bad(f"cats.enc[{i}]: string offsets are inconsistent")
                if len(values) and (values.min() < -128 or values.max() > 255):
                    raise _Bad(f"cats.enc[{i}]: string bytes out of range")
                names, bad = _strings(values, offsets)
        elif "values" in e:
            values = e["values"]
            arr = _array(values, f"cats.enc[{i}].values", integer=False)
            if len(arr):
                names = [int(v) if float(v).is_integer() else float(v) for v in arr.tolist()]
        n = 0 if names is None else len(names)
        if segs[i + 1] - segs[i] != n or segs[i] < 0:
            raise _Bad(f"cats.feature_segments do not match the categories of feature {i}")
        part = sorted_idx[segs[i]:segs[i + 1]] if segs[i + 1] <= len(sorted_idx) else None
        if part is None or sorted(part.tolist()) != list(range(n)):
            raise _Bad(f"cats.sorted_idx is not a permutation for feature {i}")
        out.append(names)
        damaged.append(bad)
    if segs[-1] != len(sorted_idx):
        raise _Bad("cats.sorted_idx has the wrong length")
    return out, damaged


def _strings(values: np.ndarray, offsets: np.ndarray) -> tuple[list, bool]:
    raw = (values & 0xFF).astype(np.uint8).tobytes()
    try:
        return [raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])], False
    except UnicodeDecodeError:
        pass
    # XGBoost 3.1-3.2 bug: offsets count characters and the byte buffer was cut to that many bytes. Decode the
    # longest valid UTF-8 prefix and split it by character offsets; names past the cut are lost (None).
    for cut in range(len(raw), max(len(raw) - 4, -1), -1):
        try:
            text = raw[:cut].decode("utf-8")
            break
        except UnicodeDecodeError:
            continue
    else:
        text = ""
    return [text[a:b] if b <= len(text) else None for a, b in zip(offsets[:-1], offsets[1:])], True


_LOGISTIC = ("binary:logistic", "reg:logistic")  # base_score is a probability: (0, 1)
_LOG_LINK = ("count:poisson", "reg:gamma", "reg:tweedie")  # base_score is a mean: > 0


def _check_base_score(mp: dict, objective: str, n_groups: int) -> None:
    """``base_score`` as XGBoost 2 (``"5E-1"``) and 3 (``"[5E-1]"``, one per output group) write it. XGBoost reads
    it lazily and accepts values it then predicts nonsense from: ``"[0E0]"`` with a logistic objective is a margin
    of -inf (every row the same class), ``"-inf"`` and ``"5E-1]"`` parse to something else."""
    if "base_score" not in mp:
        return
    raw = mp["base_score"]
    text = raw.strip() if isinstance(raw, str) else None
    values = None
    if text:
        inner = text[1:-1] if text.startswith("[") and text.endswith("]") else text
        try:
            values = [float(v) for v in inner.split(",")] if "[" not in inner and "]" not in inner else None
        except ValueError:
            values = None
    if not values or not all(math.isfinite(v) for v in values):
        raise _Bad(f"base_score must be a finite number or a list of them, got {str(raw)[:40]!r}")
    if len(values) not in (1, n_groups):
        raise _Bad(f"base_score holds {len(values)} values for {n_groups} output(s)")
    if objective in _LOGISTIC and not all(0 < v < 1 for v in values):
        raise _Bad(f"base_score {str(raw)[:40]!r} must lie strictly between 0 and 1 for {objective}")
    if objective in _LOG_LINK and not all(v > 0 for v in values):
        raise _Bad(f"base_score {str(raw)[:40]!r} must be positive for {objective}")


def check(doc: dict) -> dict:
    """Check the document; return what the loader needs to know about it. Raises ModelError."""
    try:
        return _check(doc)
    except _Bad as exc:
        raise ModelError(f"the XGBoost model file is damaged or was edited by hand: {exc}") from None


def _check(doc: dict) -> dict:
    learner = doc["learner"]
    mp = _get(learner, "learner_model_param", "learner.learner_model_param")
    num_feature = _int(_get(mp, "num_feature", "num_feature", None), "num_feature", 1, MAX_FEATURES)
    num_class = _int(mp.get("num_class", 0), "num_class", 0, MAX_CLASSES)
    num_target = _int(mp.get("num_target", 1), "num_target", 0, 1 << 20)
    if num_target > 1:
        raise _Bad(f"the model has {num_target} targets; T-CREx explains one output per row")
    objective = _get(_get(learner, "objective", "learner.objective"), "name", "objective name", str)
    names = learner.get("feature_names", [])
    types = learner.get("feature_types", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _Bad("feature_names must be a list of strings")
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise _Bad("feature_types must be a list of strings")
    if names and len(names) != num_feature:
        raise _Bad(f"{len(names)} feature names for {num_feature} features")
    if types and len(types) != num_feature:
        raise _Bad(f"{len(types)} feature types for {num_feature} features")
    unknown = sorted({t for t in types if t not in _FEATURE_TYPES})
    if unknown:
        raise _Bad(f"unknown feature type(s) {unknown}")
    if names and len(set(names)) != len(names):
        raise _Bad("duplicate feature names")
    gb = _get(learner, "gradient_booster", "learner.gradient_booster")
    booster = _get(gb, "name", "gradient_booster.name", str)
    n_groups = max(num_class, 1)
    _check_base_score(mp, objective, n_groups)
    cats, damaged, n_trees, n_iter = [None] * num_feature, [False] * num_feature, 0, 0
    if booster in ("gbtree", "dart"):
        model = _get(_get(gb, "gbtree", "dart gbtree"), "model", "dart model") if booster == "dart" else \
            _get(gb, "model", "gbtree model")
        if isinstance(model.get("cats"), dict):
            cats, damaged = _decode_categories(model["cats"], num_feature)
        if types:
            for i, t in enumerate(types):
                if t != "c" and cats[i]:
                    raise _Bad(f"feature {i} has categories but is not typed categorical")
        trees = _get(model, "trees", "trees", list)
        n_trees = len(trees)
        param = _get(model, "gbtree_model_param", "gbtree_model_param")
        if _int(param.get("num_trees", -1), "num_trees") != n_trees:
            raise _Bad("num_trees does not match the number of trees")
        npt = _int(param.get("num_parallel_tree", 1), "num_parallel_tree", 1, max(n_trees, 1))
        info = _array(_get(model, "tree_info", "tree_info", None), "tree_info", n_trees)
        if n_trees and (info.min() < 0 or info.max() >= n_groups):
            raise _Bad(f"tree_info assigns a tree to output group {int(info.max())} of {n_groups}")
        if "iteration_indptr" in model:
            indptr = _array(model["iteration_indptr"], "iteration_indptr")
            if len(indptr) == 0 or indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] != n_trees:
                raise _Bad("iteration_indptr is inconsistent with the trees")
            n_iter = len(indptr) - 1
        else:
            n_iter = n_trees // (npt * n_groups) if n_trees else 0
        n_cats = [None if c is None else len(c) for c in cats]
        for k, t in enumerate(trees):
            _check_tree(t, k, num_feature, n_cats)
        if booster == "dart":
            _array(_get(gb, "weight_drop", "dart weight_drop", None), "weight_drop", n_trees, integer=False)
    elif booster == "gblinear":
        model = _get(gb, "model", "gblinear model")
        _array(_get(model, "weights", "gblinear weights", None), "gblinear weights", (num_feature + 1) * n_groups,
               integer=False)
        if any(t == "c" for t in types):
            raise _Bad("a linear booster with categorical features")
    else:
        raise _Bad(f"unknown booster {booster[:40]!r} (expected gbtree, dart or gblinear)")
    attrs = learner.get("attributes", {})
    if not isinstance(attrs, dict):
        raise _Bad("attributes must be an object")
    best = None
    if "best_iteration" in attrs and booster != "gblinear":
        best = _int(attrs["best_iteration"], "best_iteration", 0, max(n_iter - 1, 0))
    sk = {}
    if isinstance(attrs.get("scikit_learn"), str):
        try:
            sk = json.loads(attrs["scikit_learn"])
        except (json.JSONDecodeError, RecursionError):
            sk = {}
        sk = sk if isinstance(sk, dict) else {}
    classes = None
    if objective.startswith(_CLASSIFY_PREFIXES):
        n_classes = num_class if objective.startswith("multi:") else 2
        if n_classes < 2:
            raise _Bad(f"objective {objective} with num_class = {num_class}")
        classes = list(range(n_classes))
        stored = sk.get("classes_")
        if isinstance(stored, list) and len(stored) == n_classes and all(
                isinstance(c, (int, str)) and not isinstance(c, bool) for c in stored):
            classes = stored
    elif num_class > 1:
        raise _Bad(f"objective {objective} is not a classification objective but num_class = {num_class}")
    version = doc.get("version")
    version = ".".join(str(v) for v in version) if isinstance(version, list) and all(
        isinstance(v, int) for v in version) else None
    return {"num_feature": num_feature, "objective": objective, "names": names or None, "types": types or None,
            "booster": booster, "n_trees": n_trees, "n_iter": n_iter, "best": best, "classes": classes,
            "cats": cats, "damaged": damaged, "version": version}


def _jsonable(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(f"cannot serialise {type(o).__name__}")


# ---------------------------------------------------------------------------------------------- the model
class XGBoostModel(LoadedModel):
    kind = "xgboost"

    def __init__(self, booster, info: dict, fmt: str):
        self._booster = booster
        self._info = info
        self._objective = info["objective"]
        if info["classes"] is not None and self._objective in self._SCORED:
            self.predict_proba = self._proba
        nf = info["num_feature"]
        types = info["types"] or ["float"] * nf
        names = info["names"]
        label = names or [f"f{i}" for i in range(nf)]
        kinds = {label[i]: _FEATURE_TYPES[t] for i, t in enumerate(types)}
        categories, warnings = {}, []
        for i, c in enumerate(info["cats"]):
            if c is not None:
                categories[label[i]] = [v for v in c if v is not None]
            if info["damaged"][i]:
                lost = sum(v is None for v in c)
                warnings.append(
                    f"feature {label[i]!r}: this XGBoost file stores non-ASCII category names damaged (an XGBoost "
                    f"3.1-3.2 bug, fixed upstream in dmlc/xgboost#12371); {lost} of {len(c)} names could not be "
                    "recovered and rows with those values cannot be predicted — re-train with a fixed XGBoost")
        missing_names = [label[i] for i, t in enumerate(types) if t == "c" and info["cats"][i] is None]
        if missing_names:
            warnings.append(f"categorical feature(s) {missing_names} have no stored category names (saved by XGBoost "
                            "< 3.1): give them as integer codes or as pandas 'category' columns in training order")
        task = CLASSIFICATION if info["classes"] is not None else REGRESSION
        n_cat = sum(1 for t in types if t == "c")
        what = ("binary classifier" if info["classes"] is not None and len(info["classes"]) == 2 else
                f"{len(info['classes'])}-class classifier" if info["classes"] is not None else "regressor")
        trees = f"{info['n_trees']} trees" if info["booster"] != "gblinear" else "linear booster"
        desc = (f"XGBoost {what} ({self._objective}), {trees}, {nf} feature(s)"
                + (f" ({n_cat} categorical)" if n_cat else "")
                + ("" if names else ", no feature names (columns matched by position)")
                + (f", saved by XGBoost {info['version']}" if info["version"] else "")
                + f" [{fmt.upper()}]")
        super().__init__(task=task, feature_names=names, n_features=nf, classes=info["classes"],
                         categories=categories, feature_kinds=kinds, description=desc, warnings=warnings)
        self._label = label
        self._types = types
        self._code_maps = [None if c is None else code_map(c) for c in info["cats"]]

    def _matrix(self, X: pd.DataFrame) -> np.ndarray:
        arr = np.empty((len(X), len(self._types)), dtype=np.float64)
        for j, t in enumerate(self._types):
            s = X.iloc[:, j]
            name = self._label[j] if self.feature_names else str(X.columns[j])
            if t != "c":
                arr[:, j] = numeric_column(s, name)
            else:
                arr[:, j] = self._codes(s, j, name)
        return arr

    def _codes(self, s: pd.Series, j: int, name: str) -> np.ndarray:
        cmap = self._code_maps[j]
        if cmap is None:  # no stored names: pandas codes, or integer codes as given
            return integer_codes(s, name)
        extra = (" Some of the model's category names are damaged in the file (see the model's warnings)."
                 if self._info["damaged"][j] else "")
        return codes(s, cmap, name, self.categories.get(self._label[j], []), extra)

    #: objectives whose raw output gives class scores (probabilities, or a margin turned into one)
    _SCORED = ("binary:logistic", "binary:logitraw", "multi:softprob")

    def _proba(self, X) -> np.ndarray:
        """Class probabilities (columns in the order of ``classes``): ``predict_proba`` of the classifiers whose
        objective gives them (binary:logistic, binary:logitraw through the logistic function, multi:softprob).
        The others (binary:hinge, multi:softmax give only a class; regressors) have no ``predict_proba`` at all,
        so ``hasattr(model, "predict_proba")`` says whether there are scores (and a regressor is never taken for
        a classifier by the task detection)."""
        X = self.select(as_frame(X))
        out = self._raw(X)
        if self._objective == "multi:softprob":
            return out.reshape(len(X), -1).astype(np.float64)
        p = out.astype(np.float64).reshape(-1)
        if self._objective == "binary:logitraw":
            p = 1.0 / (1.0 + np.exp(-p))
        return np.column_stack([1.0 - p, p])

    def _raw(self, X: pd.DataFrame) -> np.ndarray:
        import xgboost as xgb

        names = self.feature_names
        dm = xgb.DMatrix(self._matrix(X), feature_names=names, feature_types=self._booster.feature_types,
                         enable_categorical=True, missing=np.nan)
        best = self._info["best"]
        kw = {"iteration_range": (0, best + 1)} if best is not None else {}
        return np.asarray(self._booster.predict(dm, validate_features=names is not None, **kw))

    def _predict(self, X: pd.DataFrame):
        best = self._info["best"]
        kw = {"iteration_range": (0, best + 1)} if best is not None else {}
        # in place on the matrix (no DMatrix copy of every batch): the columns are already the model's, in its
        # order (select), with categories as the model's codes (_codes), so XGBoost need not check names
        out = np.asarray(self._booster.inplace_predict(self._matrix(X), missing=np.nan, validate_features=False,
                                                       **kw))
        obj = self._objective
        if self.task == REGRESSION:
            return out.astype(np.float64)
        if obj.startswith("multi:"):
            idx = out.argmax(axis=1) if out.ndim == 2 else out.astype(np.int64)
        elif obj == "binary:logitraw":
            idx = (out > 0).astype(np.int64)
        elif obj == "binary:hinge":
            idx = (out > 0.5).astype(np.int64)
        else:  # binary:logistic: probabilities of class 1
            idx = (out > 0.5).astype(np.int64)
        return np.asarray(self.classes, dtype=object if any(isinstance(c, str) for c in self.classes) else None)[idx]


def load(data: bytes, fmt: str) -> XGBoostModel:
    doc = parse(data, fmt)
    info = check(doc)
    try:
        import xgboost as xgb
    except ImportError:  # pragma: no cover - xgboost is a runtime requirement
        raise ModelError("XGBoost is not installed on this server") from None
    try:
        clean = json.dumps(doc, default=_jsonable, allow_nan=True).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise ModelError(f"the XGBoost model holds values that cannot be read: {short_error(exc)}") from None
    booster = xgb.Booster()
    try:
        booster.load_model(bytearray(clean))
        # XGBoost reads some parameters (base_score, the objective's settings) only when first used: make it use
        # them now, on one row of missing values, so a bad value is refused at load and not at every prediction
        n_features = booster.num_features()
        trial = booster.predict(xgb.DMatrix(np.full((1, info["num_feature"]), np.nan), missing=np.nan,
                                            feature_names=booster.feature_names,
                                            feature_types=booster.feature_types, enable_categorical=True))
    except Exception as exc:  # noqa: BLE001 - XGBoostError and friends: every one is the file's fault here
        raise ModelError(f"XGBoost could not load the model: {short_error(exc)}") from None
    if n_features != info["num_feature"]:  # pragma: no cover - defensive
        raise ModelError("XGBoost read a different feature count than the file declares")
    if not np.all(np.isfinite(np.asarray(trial, dtype=np.float64))):
        raise ModelError("the XGBoost model predicts a non-number (NaN or infinite) for a row of missing values: its "
                         "base_score or leaf values are damaged")
    return XGBoostModel(booster, info, fmt)
