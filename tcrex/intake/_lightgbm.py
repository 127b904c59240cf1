"""LightGBM models saved as text (``booster.save_model("model.txt")``) or as its JSON dump (``booster.dump_model()``):
parsed and checked in Python, then LightGBM reads a text model written here from the checked trees.

Why not ``lightgbm.Booster(model_str=...)`` on the upload directly: LightGBM trusts the arrays of a model file.
Found while building this (LightGBM 4.7): a tree whose child points back at an earlier node makes the first
prediction loop for ever, and a split on a feature index the model does not have, or a categorical split whose
threshold names a category list the tree lacks, loads and predicts from whatever memory lies there (no error);
``num_class = 2000000000`` makes prediction allocate 45 GB. So every index is checked here (:func:`check`), the
file's sizes are read before the arrays they declare (a line is split only when it holds as many numbers as the tree
declares; at most :data:`MAX_TREES` trees and :data:`MAX_LEAVES` leaves per tree), and LightGBM only ever reads the
text written by :func:`to_text` from the checked arrays (so a parser difference cannot smuggle in unchecked values).

Categories: a model trained on pandas ``category`` columns stores their categories (``pandas_categorical``), one
list per categorical feature in column order; inputs are coded by value against them (:mod:`._categories`). A model
trained on integer-coded categories stores none: the codes are taken as given.
"""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd

from .. import MAX_TARGET_CLASSES
from ..errors import ModelError
from ..vocabulary import CATEGORICAL, CLASSIFICATION, NUMERIC, REGRESSION
from ._base import LoadedModel, as_frame, numeric_column, short_error, threads_given
from ._categories import code_map, codes, integer_codes
from ..trees import (MISSING_AS_ZERO, MISSING_NAN_DEFAULT, MISSING_ZERO_DEFAULT, TreeArrays, TreeEnsemble,
                     TreeProblem, check_tree)

MAX_FEATURES = 100_000
MAX_CLASSES = MAX_TARGET_CLASSES  # the engine's cap (one owner): a model with more classes cannot be explained
MAX_TREES = 100_000
MAX_LEAVES = 131_072  # LightGBM's own largest num_leaves
#: Objectives whose outputs are class probabilities (binary: of class 1), and the link of each.
_CLASSIFIERS = {"binary": "sigmoid", "multiclass": "softmax", "softmax": "softmax", "multiclassova": "sigmoid",
                "multiclass_ova": "sigmoid", "ova": "sigmoid", "ovr": "sigmoid"}
_LOG_LINK = ("poisson", "gamma", "tweedie")
_RANKING = ("lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart")
#: The keys of a tree in the text format, and how many entries each holds: "i" one per internal node, "l" one per
#: leaf, "1" a single value, "c" per categorical split set (checked against cat_boundaries).
_TREE_KEYS = {"num_leaves": "1", "num_cat": "1", "split_feature": "i", "split_gain": "i", "threshold": "i",
              "decision_type": "i", "left_child": "i", "right_child": "i", "leaf_value": "l", "leaf_weight": "l",
              "leaf_count": "l", "internal_value": "i", "internal_weight": "i", "internal_count": "i",
              "cat_boundaries": "c", "cat_threshold": "c", "is_linear": "1", "shrinkage": "1"}
_LINEAR_KEYS = ("leaf_const", "num_features", "leaf_features", "leaf_coeff")
#: Header lines that are a bare word (a random forest's trees are averaged, not added).
_HEADER_FLAGS = ("average_output",)
_HEADER_KEYS = ("version", "num_class", "num_tree_per_iteration", "label_index", "max_feature_idx", "objective",
                "average_output", "feature_names", "monotone_constraints", "feature_infos", "tree_sizes")


class _Bad(Exception):
    """Internal: a structural problem, turned into a ModelError by the caller."""


def _damaged(what: str) -> ModelError:
    return ModelError(f"the LightGBM model file is damaged or was edited by hand: {what}")


# ---------------------------------------------------------------------------------------------- reading
def looks_like_text_model(data: bytes) -> bool:
    """A LightGBM text model starts with the line ``tree`` and a ``version=`` line."""
    head = bytes(data[:256]).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"tree") and head[4:5] in (b"\n", b"\r") and b"version=" in head


def _numbers(value: str, n: int, what: str, *, integer: bool) -> np.ndarray:
    """``n`` numbers from a space-separated line; the count is checked before the line is split (a line declaring
    millions of entries in a small file is refused without building them)."""
    value = value.strip()
    count = 0 if not value else value.count(" ") + 1
    if count != n:
        raise _Bad(f"{what} holds {count} entries, expected {n}")
    if n == 0:
        return np.empty(0, dtype=np.int64 if integer else np.float64)
    try:
        arr = np.array(value.split(" "), dtype=np.float64)
    except ValueError:
        raise _Bad(f"{what} holds something that is not a number") from None
    if integer:
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)) or (
                arr.size and np.abs(arr).max() > 2**53):
            raise _Bad(f"{what} must hold whole numbers")
        return arr.astype(np.int64)
    return arr


def _int(value, what: str, lo: int, hi: int) -> int:
    try:
        v = int(str(value).strip())
    except ValueError:
        raise _Bad(f"{what} must be a whole number, got {str(value)[:40]!r}") from None
    if not lo <= v <= hi:
        raise _Bad(f"{what} = {v} is out of range [{lo}, {hi}]")
    return v


def _split_blocks(text: str) -> tuple[dict, list[str], str]:
    """(header keys, tree blocks, the text after the trees)."""
    end = text.find("\nend of trees")
    if end < 0:
        raise ModelError("not a complete LightGBM model: the file has no 'end of trees' line (truncated?)")
    body, tail = text[:end], text[end + len("\nend of trees"):]
    n_trees = body.count("\nTree=")
    if n_trees > MAX_TREES:  # counted before anything per tree is built
        raise ModelError(f"the LightGBM model has {n_trees:,} trees; at most {MAX_TREES:,} are accepted")
    first = body.find("\nTree=")
    head_text = body if first < 0 else body[:first]
    header = {}
    for line in head_text.splitlines()[1:]:
        line = line.strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep and key not in _HEADER_FLAGS:
            raise _Bad(f"the header line {line[:40]!r} is not key=value")
        if key in header:
            raise _Bad(f"the header names {key!r} twice")
        header[key] = value
    blocks = [] if first < 0 else body[first + 1:].split("\nTree=")
    if blocks:
        blocks[0] = blocks[0][len("Tree="):]
    return header, blocks, tail


def _parse_tree_block(block: str, k: int) -> dict:
    lines = block.strip().splitlines()
    if not lines or lines[0].strip() != str(k):
        raise _Bad(f"tree {k} is numbered {lines[0].strip()[:20]!r}" if lines else f"tree {k} is empty")
    fields = {}
    for line in lines[1:]:
        line = line.rstrip("\r")
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise _Bad(f"tree {k}: the line {line[:40]!r} is not key=value")
        if key in fields:
            raise _Bad(f"tree {k} names {key!r} twice")
        fields[key] = value
    return fields


def _tail_parts(tail: str) -> tuple[list[int] | None, object]:
    """The categorical feature indices of the parameters block (None when not stated) and ``pandas_categorical``."""
    if "\nparameters:" in tail and "\nend of parameters" not in tail:
        raise ModelError("not a complete LightGBM model: its parameters have no 'end of parameters' line (truncated?)")
    cat_idx = None
    m = re.search(r"^\[categorical_feature: ([^\]\n]*)\]$", tail, re.M)
    if m:
        tokens = [t for t in m.group(1).split(",") if t.strip()]
        try:
            cat_idx = sorted({int(t) for t in tokens})
        except ValueError:
            cat_idx = None  # names (name:...): the features' infos say which are categorical
    pandas_cat = None
    pos = tail.rfind("\npandas_categorical:")
    if pos >= 0:
        raw = tail[pos + len("\npandas_categorical:"):].strip()
        try:
            pandas_cat = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            raise _Bad("pandas_categorical is not valid JSON") from None
    return cat_idx, pandas_cat


def parse_text(data: bytes) -> dict:
    """The model's parts from a text model file: ``header`` (dict of str), ``trees`` (one dict of str per tree),
    ``cat_features`` (feature indices named by the parameters, or None), ``pandas_categorical``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ModelError(f"not a valid LightGBM model: the file is not UTF-8 text (byte {exc.start})") from None
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if not text.lstrip().startswith("tree\n"):
        raise ModelError("not a LightGBM text model: it does not start with the line 'tree' (save the model with "
                         "booster.save_model('model.txt'))")
    text = text.lstrip()
    try:
        header, blocks, tail = _split_blocks(text)
        trees = [_parse_tree_block(b, k) for k, b in enumerate(blocks)]
        cat_idx, pandas_cat = _tail_parts(tail)
    except _Bad as exc:
        raise _damaged(str(exc)) from None
    return {"header": header, "trees": trees, "cat_features": cat_idx, "pandas_categorical": pandas_cat}


# ---------------------------------------------------------------------------------------------- the JSON dump
def parse_dump(doc: dict) -> dict:
    """The same parts as :func:`parse_text` from ``booster.dump_model()`` (a JSON document): header values and tree
    fields as the text format writes them."""
    try:
        return _parse_dump(doc)
    except _Bad as exc:
        raise _damaged(str(exc)) from None
    except RecursionError:
        raise ModelError("the LightGBM JSON dump nests its trees too deeply; upload the text model "
                         "(booster.save_model('model.txt'))") from None


def _parse_dump(doc: dict) -> dict:
    def text(v) -> str:
        if isinstance(v, bool):
            return str(int(v))
        if isinstance(v, (int, float, str)):
            return str(v) if not isinstance(v, float) else repr(v)
        raise _Bad(f"a header value has the wrong type ({type(v).__name__})")

    names = doc.get("feature_names")
    infos = doc.get("feature_infos", {})
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _Bad("feature_names must be a list of strings")
    if not isinstance(infos, dict):
        raise _Bad("feature_infos must be an object")
    header = {k: text(doc[k]) for k in ("version", "num_class", "num_tree_per_iteration", "label_index",
                                         "max_feature_idx", "objective") if k in doc}
    if doc.get("average_output"):
        header["average_output"] = ""
    header["feature_names"] = " ".join(names)
    cat_features, info_text = [], []
    for i, n in enumerate(names):
        info = infos.get(n)
        if not isinstance(info, dict):
            info_text.append("none")
            continue
        values = info.get("values") or []
        if not isinstance(values, list):
            raise _Bad(f"feature_infos of {n!r} has the wrong type")
        if values:  # a categorical feature: its category codes
            cat_features.append(i)
            info_text.append(":".join(str(int(v)) for v in values))
        else:
            info_text.append(f"[{text(info.get('min_value', 0))}:{text(info.get('max_value', 0))}]")
    header["feature_infos"] = " ".join(info_text)
    tree_info = doc.get("tree_info")
    if not isinstance(tree_info, list):
        raise _Bad("tree_info must be a list of trees")
    if len(tree_info) > MAX_TREES:
        raise ModelError(f"the LightGBM model has {len(tree_info):,} trees; at most {MAX_TREES:,} are accepted")
    trees = [_dump_tree(t, k) for k, t in enumerate(tree_info)]
    pandas_cat = doc.get("pandas_categorical")
    return {"header": header, "trees": trees, "cat_features": cat_features, "pandas_categorical": pandas_cat}


_MISSING_CODE = {"None": 0, "Zero": 1, "NaN": 2}


def _dump_tree(t, k: int) -> dict:
    """One tree of the JSON dump as the text format's fields (internal nodes numbered by ``split_index``, leaves by
    ``leaf_index``)."""
    if not isinstance(t, dict) or not isinstance(t.get("tree_structure"), dict):
        raise _Bad(f"tree {k} has no tree_structure")
    n_leaves = _int(t.get("num_leaves", 1), f"tree {k}: num_leaves", 1, MAX_LEAVES)
    n_int = n_leaves - 1
    left, right = [None] * n_int, [None] * n_int
    feat, thr, dec = [0] * n_int, ["0"] * n_int, [0] * n_int
    leaf_value = [None] * n_leaves
    cat_sets = []
    stack = [(t["tree_structure"], None, None)]
    seen = 0
    while stack:
        node, parent, side = stack.pop()
        seen += 1
        if seen > 2 * n_leaves:
            raise _Bad(f"tree {k} has more nodes than its {n_leaves} leaves allow")
        if not isinstance(node, dict):
            raise _Bad(f"tree {k}: a node is not an object")
        if "leaf_index" in node or "split_index" not in node:
            idx = _int(node.get("leaf_index", 0), f"tree {k}: leaf_index", 0, n_leaves - 1)
            if leaf_value[idx] is not None:
                raise _Bad(f"tree {k}: leaf {idx} appears twice")
            value = node.get("leaf_value")
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise _Bad(f"tree {k}: leaf {idx} has no number for its value")
            leaf_value[idx] = float(value)
            ref = ~idx
        else:
            idx = _int(node["split_index"], f"tree {k}: split_index", 0, n_int - 1)
            if left[idx] is not None:
                raise _Bad(f"tree {k}: split {idx} appears twice")
            feat[idx] = _int(node.get("split_feature"), f"tree {k}: split_feature", 0, MAX_FEATURES)
            code = _MISSING_CODE.get(node.get("missing_type", "None"))
            if code is None:
                raise _Bad(f"tree {k}: unknown missing_type {str(node.get('missing_type'))[:20]!r}")
            d = code << 2 | (2 if node.get("default_left") else 0)
            if node.get("decision_type") == "==":
                cats = str(node.get("threshold", "")).split("||")
                try:
                    values = [int(c) for c in cats]
                except ValueError:
                    raise _Bad(f"tree {k}: a categorical split lists something that is not a category code") \
                        from None
                if min(values) < 0 or max(values) >= 1 << 20:
                    raise _Bad(f"tree {k}: a categorical split names a category code out of range")
                thr[idx] = str(len(cat_sets))
                cat_sets.append(values)
                d |= 1
            elif node.get("decision_type", "<=") == "<=":
                value = node.get("threshold")
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    raise _Bad(f"tree {k}: split {idx} has no number for its threshold")
                thr[idx] = repr(float(value))
            else:
                raise _Bad(f"tree {k}: unknown decision_type {str(node.get('decision_type'))[:20]!r}")
            dec[idx] = d
            left[idx] = right[idx] = -1  # placeholders until the children are seen
            ref = idx
            stack.append((node.get("right_child"), idx, "right"))
            stack.append((node.get("left_child"), idx, "left"))
        if parent is not None:
            (left if side == "left" else right)[parent] = ref
    if any(v is None for v in leaf_value) or any(v is None for v in left):
        raise _Bad(f"tree {k}: its nodes do not match its {n_leaves} leaves")
    fields = {"num_leaves": str(n_leaves), "num_cat": str(len(cat_sets)),
              "leaf_value": " ".join(repr(v) for v in leaf_value),
              "shrinkage": repr(float(t.get("shrinkage", 1)))}
    if n_int:
        words, bounds = [], [0]
        for values in cat_sets:
            bits = np.zeros(max(values) // 32 + 1, dtype=np.int64)
            for v in values:
                bits[v // 32] |= 1 << (v % 32)
            words.extend(int(b) for b in bits)
            bounds.append(len(words))
        fields.update(split_feature=" ".join(map(str, feat)), threshold=" ".join(thr),
                      decision_type=" ".join(map(str, dec)), left_child=" ".join(map(str, left)),
                      right_child=" ".join(map(str, right)))
        if cat_sets:
            fields.update(cat_boundaries=" ".join(map(str, bounds)), cat_threshold=" ".join(map(str, words)))
    return fields


# ---------------------------------------------------------------------------------------------- checking
def _objective(raw: str) -> tuple[str, dict]:
    tokens = raw.split()
    if not tokens:
        return "", {}
    params = {}
    for tok in tokens[1:]:
        key, sep, value = tok.partition(":")
        if sep:
            params[key] = value
    return tokens[0], params


def _feature_kinds(infos: list[str], cat_idx) -> list[bool]:
    """Which features are categorical: the parameters' categorical_feature list when it has one, else the features
    whose infos are a list of category codes (``-1:2:0:1``) rather than a range (``[0:5]``) or ``none``."""
    by_info = [not (s.startswith("[") or s == "none") for s in infos]
    if cat_idx is None:
        return by_info
    out = [False] * len(infos)
    for i in cat_idx:
        if 0 <= i < len(infos):
            out[i] = True
    return [a or b for a, b in zip(out, by_info)]


def check(parts: dict) -> dict:
    """Check the parsed model; return what the loader needs (the ensemble of checked trees among it)."""
    try:
        return _check(parts)
    except (_Bad, TreeProblem) as exc:
        raise _damaged(str(exc)) from None


def _check(parts: dict) -> dict:
    h = parts["header"]
    version = h.get("version", "")
    if not re.fullmatch(r"v\d{1,3}", version):
        raise _Bad(f"unknown format version {version[:20]!r}")
    if "max_feature_idx" not in h:
        raise _Bad("the header has no max_feature_idx")
    n_features = _int(h["max_feature_idx"], "max_feature_idx", 0, MAX_FEATURES - 1) + 1
    num_class = _int(h.get("num_class", "1"), "num_class", 1, MAX_CLASSES)
    per_iter = _int(h.get("num_tree_per_iteration", "1"), "num_tree_per_iteration", 1, MAX_CLASSES)
    _int(h.get("label_index", "0"), "label_index", 0, 1 << 30)
    name, params = _objective(h.get("objective", ""))
    names = h.get("feature_names", "").split(" ") if h.get("feature_names", "").strip() else []
    infos = h.get("feature_infos", "").split(" ") if h.get("feature_infos", "").strip() else []
    if len(names) != n_features:
        raise _Bad(f"{len(names)} feature names for {n_features} features")
    if infos and len(infos) != n_features:
        raise _Bad(f"{len(infos)} feature infos for {n_features} features")
    if len(set(names)) != len(names):
        raise _Bad("duplicate feature names")
    is_cat = _feature_kinds(infos or ["none"] * n_features, parts["cat_features"])
    if name in _CLASSIFIERS:
        n_classes = 2 if name == "binary" else num_class
        if name != "binary" and num_class < 2:
            raise _Bad(f"objective {name} with num_class = {num_class}")
        if per_iter != (1 if name == "binary" else num_class):
            raise _Bad(f"{per_iter} trees per iteration for objective {name} with {num_class} classes")
        if "num_class" in params and _int(params["num_class"], "the objective's num_class", 1, MAX_CLASSES) != \
                num_class:
            raise _Bad("the objective's num_class differs from the header's")
    elif num_class > 1 or per_iter > 1:
        raise _Bad(f"objective {name or '(none)'} is not a classification objective but num_class = {num_class}")
    else:
        n_classes = None
    trees_in = parts["trees"]
    if len(trees_in) % per_iter:
        raise _Bad(f"{len(trees_in)} trees is not a whole number of iterations of {per_iter} trees")
    trees = [_tree(f, k, n_features, is_cat, k % per_iter) for k, f in enumerate(trees_in)]
    categories = _categories(parts["pandas_categorical"], is_cat, trees)
    sigmoid = 1.0
    if "sigmoid" in params:
        try:
            sigmoid = float(params["sigmoid"])
        except ValueError:
            sigmoid = float("nan")
        if not (math.isfinite(sigmoid) and sigmoid > 0):
            raise _Bad(f"the objective's sigmoid {params['sigmoid'][:20]!r} must be a positive number")
    link = (_CLASSIFIERS.get(name) or ("exp" if name in _LOG_LINK else "identity"))
    ensemble = TreeEnsemble(trees=trees, n_features=n_features, n_groups=per_iter, average="average_output" in h,
                            link=link, scale=1.0, link_scale=sigmoid)
    return {"n_features": n_features, "names": names, "is_cat": is_cat, "objective": name,
            "objective_text": h.get("objective", ""), "classes": None if n_classes is None else list(range(n_classes)),
            "categories": categories, "ensemble": ensemble, "version": version, "per_iter": per_iter,
            "header": h, "n_trees": len(trees)}


def _tree(f: dict, k: int, n_features: int, is_cat: list[bool], group: int) -> TreeArrays:
    unknown = sorted(set(f) - set(_TREE_KEYS) - set(_LINEAR_KEYS))
    if unknown:
        raise _Bad(f"tree {k} has field(s) {unknown[:5]} that this reader does not know (saved by a newer LightGBM?)")
    if "num_leaves" not in f:
        raise _Bad(f"tree {k} has no num_leaves")
    n_leaves = _int(f["num_leaves"], f"tree {k}: num_leaves", 1, MAX_LEAVES)
    if f.get("is_linear", "0").strip() not in ("0", ""):
        raise ModelError("LightGBM linear trees (linear_tree=True) are not supported: re-train the model without "
                         "linear_tree")
    n_int = n_leaves - 1
    sizes = {"i": n_int, "l": n_leaves}
    for key, kind in _TREE_KEYS.items():
        if kind in sizes and key in f and key not in ("threshold",):
            _numbers(f[key], sizes[kind], f"tree {k}: {key}", integer=key in (
                "split_feature", "decision_type", "left_child", "right_child", "leaf_count", "internal_count"))
    leaf_value = _numbers(f.get("leaf_value", ""), n_leaves, f"tree {k}: leaf_value", integer=False)
    shrinkage = f.get("shrinkage", "1").strip() or "1"
    try:
        if not math.isfinite(float(shrinkage)):
            raise ValueError
    except ValueError:
        raise _Bad(f"tree {k}: shrinkage {shrinkage[:20]!r} is not a finite number") from None
    n_cat = _int(f.get("num_cat", "0"), f"tree {k}: num_cat", 0, max(n_int, 0))
    n = n_int + n_leaves
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.full(n, np.nan)
    value = np.zeros(n)
    value[n_int:] = leaf_value
    default_left = np.zeros(n, dtype=bool)
    missing = np.zeros(n, dtype=np.int64)
    categorical = np.zeros(n, dtype=bool)
    left_categories = {}
    if n_int:
        for key in ("split_feature", "threshold", "decision_type", "left_child", "right_child"):
            if key not in f:
                raise _Bad(f"tree {k} has no {key}")
        lc = _numbers(f["left_child"], n_int, f"tree {k}: left_child", integer=True)
        rc = _numbers(f["right_child"], n_int, f"tree {k}: right_child", integer=True)
        sf = _numbers(f["split_feature"], n_int, f"tree {k}: split_feature", integer=True)
        dt = _numbers(f["decision_type"], n_int, f"tree {k}: decision_type", integer=True)
        th = _numbers(f["threshold"], n_int, f"tree {k}: threshold", integer=False)
        if np.any((dt < 0) | (dt > 11) | ((dt >> 2) > 2)):
            raise _Bad(f"tree {k}: unknown decision_type {int(dt[(dt < 0) | (dt > 11) | ((dt >> 2) > 2)][0])}")
        # LightGBM's children: >= 0 an internal node, < 0 the leaf ~c; here leaves follow the internal nodes
        for arr, out in ((lc, left), (rc, right)):
            bad = (arr >= n_int) | (arr < -n_leaves)
            if bad.any():
                raise _Bad(f"tree {k}: a child index ({int(arr[bad][0])}) points outside the tree's {n_int} splits "
                           f"and {n_leaves} leaves")
            out[:n_int] = np.where(arr >= 0, arr, n_int + ~arr)
        feature[:n_int] = sf
        cat = (dt & 1).astype(bool)
        categorical[:n_int] = cat
        default_left[:n_int] = (dt & 2).astype(bool)
        missing[:n_int] = np.select([(dt >> 2) == 0, (dt >> 2) == 1], [MISSING_AS_ZERO, MISSING_ZERO_DEFAULT],
                                    MISSING_NAN_DEFAULT)
        threshold[:n_int] = np.where(cat, np.nan, th)
        if cat.any():
            if int(cat.sum()) != n_cat:
                raise _Bad(f"tree {k}: num_cat = {n_cat} but {int(cat.sum())} splits are categorical")
            for key in ("cat_boundaries", "cat_threshold"):
                if key not in f:
                    raise _Bad(f"tree {k} has categorical splits but no {key}")
            bounds = _numbers(f["cat_boundaries"], n_cat + 1, f"tree {k}: cat_boundaries", integer=True)
            n_words = 0 if not f["cat_threshold"].strip() else f["cat_threshold"].strip().count(" ") + 1
            if bounds[0] != 0 or np.any(np.diff(bounds) < 0) or bounds[-1] != n_words:
                raise _Bad(f"tree {k}: cat_boundaries do not match the {n_words} words of cat_threshold")
            words = _numbers(f["cat_threshold"], n_words, f"tree {k}: cat_threshold", integer=True)
            if words.size and (words.min() < 0 or words.max() >= 2**32):
                raise _Bad(f"tree {k}: cat_threshold holds a word out of range")
            idx = th[cat]
            if np.any(idx != np.round(idx)) or np.any(idx < 0) or np.any(idx >= n_cat):
                bad = idx[(idx != np.round(idx)) | (idx < 0) | (idx >= n_cat)][0]
                raise _Bad(f"tree {k}: a categorical split names category set {float(bad):g}, but the tree has "
                           f"{n_cat}")
            for node, j in zip(np.flatnonzero(cat).tolist(), idx.astype(np.int64).tolist()):
                seg = words[bounds[j]:bounds[j + 1]]
                bits = [w * 32 + b for w, word in enumerate(seg.tolist()) for b in range(32) if word >> b & 1]
                left_categories[node] = frozenset(bits)
                if not is_cat[int(sf[node])]:
                    raise _Bad(f"tree {k}: a split treats feature {int(sf[node])} as categorical, but the file "
                               "describes it as numeric")
        elif n_cat:
            raise _Bad(f"tree {k}: num_cat = {n_cat} but no split is categorical")
    t = TreeArrays(left=left, right=right, feature=feature, threshold=threshold, value=value,
                   default_left=default_left, missing=missing, categorical=categorical,
                   left_categories=left_categories, group=group)
    try:
        check_tree(t, n_features)
    except TreeProblem as exc:
        raise _Bad(f"tree {k}: {exc}") from None
    return t


def _categories(pandas_cat, is_cat: list[bool], trees: list[TreeArrays]) -> list:
    """Per feature: the category list of ``pandas_categorical`` (in code order) or None."""
    out = [None] * len(is_cat)
    if pandas_cat is None or pandas_cat == []:  # [] : trained on a frame without pandas categories
        return out
    if not isinstance(pandas_cat, list) or not all(isinstance(c, list) for c in pandas_cat):
        raise _Bad("pandas_categorical must be a list of category lists")
    cat_features = [i for i, c in enumerate(is_cat) if c]
    if len(pandas_cat) != len(cat_features):
        raise _Bad(f"pandas_categorical holds {len(pandas_cat)} category lists for {len(cat_features)} categorical "
                   "features")
    for i, values in zip(cat_features, pandas_cat):
        if not all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
            raise _Bad(f"the categories of feature {i} must be text or numbers")
        out[i] = list(values)
    return out


# ---------------------------------------------------------------------------------------------- writing
def to_text(info: dict) -> str:
    """The text model LightGBM reads, written from the checked trees (only the fields prediction uses)."""
    h = info["header"]
    lines = ["tree", f"version={info['version']}", f"num_class={h.get('num_class', '1').strip()}",
             f"num_tree_per_iteration={info['per_iter']}", f"label_index={h.get('label_index', '0').strip()}",
             f"max_feature_idx={info['n_features'] - 1}"]
    if info["objective_text"].strip():
        lines.append(f"objective={info['objective_text'].strip()}")
    if info["ensemble"].average:
        lines.append("average_output")
    lines.append("feature_names=" + " ".join(info["names"]))
    lines.append("feature_infos=" + " ".join(["none"] * info["n_features"]))  # ranges and codes: not used to predict
    lines.append("")
    for k, t in enumerate(info["ensemble"].trees):
        n_int = int((t.left >= 0).sum())
        n_leaves = t.n_nodes - n_int
        lines += [f"Tree={k}", f"num_leaves={n_leaves}"]
        leaf_values = " ".join(repr(float(v)) for v in t.value[n_int:])
        if n_int:
            def ref(c):
                return c if c < n_int else ~(c - n_int)
            cat_nodes = np.flatnonzero(t.categorical[:n_int]).tolist()
            words, bounds, thr = [], [0], []
            cat_of = {}
            for node in cat_nodes:
                cats = sorted(t.left_categories.get(node, ()))
                bits = np.zeros((max(cats) // 32 + 1) if cats else 1, dtype=np.int64)
                for v in cats:
                    bits[v // 32] |= 1 << (v % 32)
                cat_of[node] = len(bounds) - 1
                words.extend(int(b) for b in bits)
                bounds.append(len(words))
            for node in range(n_int):
                thr.append(str(cat_of[node]) if node in cat_of else repr(float(t.threshold[node])))
            dec = [(int(t.categorical[i]) | (2 if t.default_left[i] else 0)
                    | ({MISSING_AS_ZERO: 0, MISSING_ZERO_DEFAULT: 1, MISSING_NAN_DEFAULT: 2}[int(t.missing[i])] << 2))
                   for i in range(n_int)]
            lines += [f"num_cat={len(cat_nodes)}",
                      "split_feature=" + " ".join(str(int(v)) for v in t.feature[:n_int]),
                      "threshold=" + " ".join(thr),
                      "decision_type=" + " ".join(map(str, dec)),
                      "left_child=" + " ".join(str(ref(int(c))) for c in t.left[:n_int]),
                      "right_child=" + " ".join(str(ref(int(c))) for c in t.right[:n_int]),
                      "leaf_value=" + leaf_values]
            if cat_nodes:
                lines += ["cat_boundaries=" + " ".join(map(str, bounds)), "cat_threshold=" + " ".join(map(str, words))]
        else:
            lines += ["num_cat=0", "leaf_value=" + leaf_values]
        lines += ["is_linear=0", f"shrinkage={info['shrinkages'][k]}", ""]
    lines += ["end of trees", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- the model
class LightGBMModel(LoadedModel):
    kind = "lightgbm"

    def __init__(self, booster, info: dict, fmt: str):
        self._booster = booster
        self._info = info
        self.trees = info["ensemble"]
        nf = info["n_features"]
        positional = info["names"] == [f"Column_{i}" for i in range(nf)]  # trained on an array: no real names
        label = info["names"]
        kinds = {label[i]: CATEGORICAL if c else NUMERIC for i, c in enumerate(info["is_cat"])}
        categories = {label[i]: list(c) for i, c in enumerate(info["categories"]) if c is not None}
        warnings = []
        if info["objective"] in _RANKING:
            warnings.append(f"a ranking model ({info['objective']}): its scores are explained as a regression")
        elif not info["objective"]:
            warnings.append("the file names no objective (a custom one?): its raw scores are explained as a "
                            "regression")
        no_names = [label[i] for i, c in enumerate(info["is_cat"]) if c and info["categories"][i] is None]
        if no_names:
            warnings.append(f"categorical feature(s) {no_names} have no stored category names (trained on integer "
                            "codes): give them as the same integer codes")
        task = REGRESSION if info["classes"] is None else CLASSIFICATION
        n_cat = sum(info["is_cat"])
        what = ("binary classifier" if info["classes"] is not None and len(info["classes"]) == 2 else
                f"{len(info['classes'])}-class classifier" if info["classes"] is not None else "regressor")
        desc = (f"LightGBM {what} ({info['objective'] or 'no objective'}), {info['n_trees']} trees, {nf} feature(s)"
                + (f" ({n_cat} categorical)" if n_cat else "")
                + (", no feature names (columns matched by position)" if positional else "")
                + f" [{fmt}]")
        super().__init__(task=task, feature_names=None if positional else label, n_features=nf,
                         classes=info["classes"], categories=categories, feature_kinds=kinds, description=desc,
                         warnings=warnings)
        if task == CLASSIFICATION:
            self.predict_proba = self._proba
        self._label = label
        self._code_maps = [None if c is None else code_map(c) for c in info["categories"]]

    def _matrix(self, X: pd.DataFrame) -> np.ndarray:
        arr = np.empty((len(X), self.n_features), dtype=np.float64)
        for j, cat in enumerate(self._info["is_cat"]):
            s = X.iloc[:, j]
            name = self._label[j] if self.feature_names else str(X.columns[j])
            if not cat:
                arr[:, j] = numeric_column(s, name)
            elif self._code_maps[j] is None:
                arr[:, j] = integer_codes(s, name)
            else:
                arr[:, j] = codes(s, self._code_maps[j], name, self.categories.get(self._label[j], []))
        return arr

    def _scores(self, X: pd.DataFrame) -> np.ndarray:
        threads = threads_given()
        kw = {"num_threads": threads} if threads else {}
        return np.asarray(self._booster.predict(self._matrix(X), **kw), dtype=np.float64)

    def _proba(self, X) -> np.ndarray:
        """Class probabilities (columns in the order of ``classes``), as LightGBM's ``predict_proba`` gives them."""
        X = self.select(as_frame(X))
        out = self._scores(X)
        if out.ndim == 1:
            return np.column_stack([1.0 - out, out])
        return out

    def _predict(self, X: pd.DataFrame):
        out = self._scores(X)
        if self.task == REGRESSION:
            return out.reshape(len(X))
        idx = (out > 0.5).astype(np.int64) if out.ndim == 1 else out.argmax(axis=1)
        return np.asarray(self.classes)[idx]


def load(data: bytes, fmt: str = "text") -> LightGBMModel:
    """Read a LightGBM text model (``fmt="text"``) or JSON dump (``fmt="json"``) into a :class:`LightGBMModel`."""
    parts = parse_dump(_json(data)) if fmt == "json" else parse_text(data)
    info = check(parts)
    info["shrinkages"] = [repr(float(f.get("shrinkage", "1").strip() or "1")) for f in parts["trees"]]
    try:
        import lightgbm as lgb
    except ImportError:
        raise ModelError("LightGBM is not installed on this server: LightGBM models cannot be loaded here (the "
                         "operator can add it with pip install 'tcrex[lightgbm]')") from None
    text = to_text(info)
    try:
        booster = lgb.Booster(model_str=text)
        trial = booster.predict(np.full((1, info["n_features"]), np.nan))
    except Exception as exc:  # noqa: BLE001 - LightGBMError and friends: every one is the file's fault here
        raise ModelError(f"LightGBM could not load the model: {short_error(exc)}") from None
    if booster.num_feature() != info["n_features"]:  # pragma: no cover - defensive
        raise ModelError("LightGBM read a different feature count than the file declares")
    if not np.all(np.isfinite(np.asarray(trial, dtype=np.float64))):
        raise ModelError("the LightGBM model predicts a non-number (NaN or infinite) for a row of missing values: "
                         "its leaf values are damaged")
    return LightGBMModel(booster, info, "text" if fmt != "json" else "JSON dump")


def _json(data: bytes) -> dict:
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ModelError(f"not a valid LightGBM JSON dump: the file is not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise ModelError("the LightGBM JSON dump nests its trees too deeply; upload the text model "
                         "(booster.save_model('model.txt'))") from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"not a valid LightGBM JSON dump: {exc.msg} at line {exc.lineno}, column {exc.colno}") \
            from None
    if not isinstance(doc, dict) or doc.get("name") != "tree" or "tree_info" not in doc:
        raise ModelError("not a LightGBM JSON dump: the document has no 'tree_info' (save it with "
                         "booster.dump_model(), or upload the text model from booster.save_model('model.txt'))")
    return doc
