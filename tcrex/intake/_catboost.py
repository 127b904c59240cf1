"""CatBoost models saved as ``.cbm`` (its binary format) or JSON (``model.save_model("m.json", format="json",
pool=train_pool)``): read and checked in Python before CatBoost parses them.

``.cbm`` is a flatbuffers document (``CBM1``, a 4-byte size, the model core) followed by the tables of target
statistics of categorical features (CTRs). The core is read here with a bounded flatbuffers reader (:class:`_Fb`:
every offset, vector length and string checked against the bytes that hold it) and checked like every tree model:
features and their borders, each split naming an existing binary feature, tree sizes adding up to the splits,
leaf values sized by the trees and the output dimension, non-symmetric trees' steps staying inside their tree, leaf
ids inside the leaf values, and finite borders and leaf values. CatBoost then reads the same bytes (flatbuffers
offsets are absolute: there is nothing to re-serialise). The CTR tables are hash tables whose layout CatBoost
trusts; only their sizes are checked here, so a ``.cbm`` with categorical features relies on the sandbox for them.

JSON is parsed by Python whole (its size bounded by the file's memory budget), checked as above including the CTR
tables (hash map strides and counts), and CatBoost reads JSON re-serialised from the checked document through an
in-memory file (``memfd``: nothing is written to disk). JSON saved with the training pool also names the categories
behind each hash, so the compatibility check can list values the model never saw. It is the safer of the two for
models with categorical features; for numeric models both are checked to the same depth.
"""
from __future__ import annotations

import json
import math
import os
import struct

import numpy as np
import pandas as pd

from .. import MAX_TARGET_CLASSES
from ..errors import ModelError
from ..vocabulary import CATEGORICAL, CLASSIFICATION, NUMERIC, REGRESSION
from ._base import LoadedModel, as_frame, numeric_column, short_error, threads_given
from ..trees import MISSING_NAN_DEFAULT, TreeArrays, TreeEnsemble, TreeProblem, check_tree

MAGIC = b"CBM1"
MAX_FEATURES = 100_000
MAX_CLASSES = MAX_TARGET_CLASSES
MAX_TREES = 100_000
MAX_DEPTH = 16  # CatBoost's own limit for symmetric trees
MAX_NODES = 1 << 26  # binary features, splits, leaf values: each at most this many
_CLASSIFY = ("Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll")
_EXPONENT = ("Poisson", "Tweedie")
_RANKING = ("YetiRank", "YetiRankPairwise", "PairLogit", "PairLogitPairwise", "QueryRMSE", "QuerySoftMax",
            "QueryCrossEntropy", "StochasticFilter", "StochasticRank", "LambdaMart")
_MULTI_OUTPUT = ("MultiRMSE", "MultiLogloss", "MultiCrossEntropy", "RMSEWithUncertainty", "MultiQuantile",
                 "SurvivalAft")
_NAN_TREATMENT = {0: "AsIs", 1: "AsFalse", 2: "AsTrue"}


class _Bad(Exception):
    """Internal: a structural problem, turned into a ModelError by the caller."""


def _damaged(what: str) -> ModelError:
    return ModelError(f"the CatBoost model file is damaged or was edited by hand: {what}")


# ---------------------------------------------------------------------------------------------- flatbuffers
class _Fb:
    """A bounded reader of one flatbuffers buffer ``data[start:end]``: every read is checked against the buffer."""

    def __init__(self, data: bytes, start: int, end: int):
        self.b, self.start, self.end = data, start, end

    def _at(self, pos: int, size: int) -> int:
        if pos < self.start or pos + size > self.end:
            raise _Bad("an offset points outside the model")
        return pos

    def u32(self, p):
        return struct.unpack_from("<I", self.b, self._at(p, 4))[0]

    def i32(self, p):
        return struct.unpack_from("<i", self.b, self._at(p, 4))[0]

    def u16(self, p):
        return struct.unpack_from("<H", self.b, self._at(p, 2))[0]

    def root(self) -> int:
        return self._at(self.start + self.u32(self.start), 4)

    def field(self, table: int, i: int):
        vt = self._at(table - self.i32(table), 4)
        size = self.u16(vt)
        if size < 4 or size % 2:
            raise _Bad("a table's field list is damaged")
        self._at(vt, size)
        if 4 + 2 * i + 2 > size:
            return None
        off = self.u16(vt + 4 + 2 * i)
        return None if off == 0 else self._at(table + off, 1)

    def scalar(self, table: int, i: int, fmt: str, default):
        p = self.field(table, i)
        return default if p is None else struct.unpack_from(fmt, self.b, self._at(p, struct.calcsize(fmt)))[0]

    def table(self, table: int, i: int):
        p = self.field(table, i)
        return None if p is None else self._at(p + self.u32(p), 4)

    def vector(self, table: int, i: int, item: int):
        """(position of the first element, count) or None; the whole vector must lie inside the buffer."""
        p = self.field(table, i)
        if p is None:
            return None
        v = self._at(p + self.u32(p), 4)
        n = self.u32(v)
        if n > MAX_NODES:
            raise _Bad(f"a vector declares {n:,} elements")
        self._at(v + 4, n * item)
        return v + 4, n

    def array(self, table: int, i: int, dtype: str, per: int = 1) -> np.ndarray:
        """A vector of numbers (``per`` numbers per element for a vector of structs of one type)."""
        dt = np.dtype(dtype)
        r = self.vector(table, i, dt.itemsize * per)
        if r is None:
            return np.empty(0, dtype=dt)
        return np.frombuffer(self.b, dtype=dt, count=r[1] * per, offset=r[0]).copy()

    def tables(self, table: int, i: int) -> list[int]:
        r = self.vector(table, i, 4)
        if r is None:
            return []
        return [self._at(r[0] + 4 * k + self.u32(r[0] + 4 * k), 4) for k in range(r[1])]

    def string_offsets(self, table: int, i: int) -> list[int]:
        """The positions of a vector of strings' elements (each read with ``string(pos, None)``)."""
        r = self.vector(table, i, 4)
        return [] if r is None else [r[0] + 4 * k for k in range(r[1])]

    def string(self, table: int, i: int | None) -> str | None:
        """Field ``i`` of ``table`` as text, or (``i`` None) the string an offset at ``table`` points to."""
        if i is None:
            v = self._at(table + self.u32(table), 4)
            n = self.u32(v)
            self._at(v + 4, n)
            r = (v + 4, n)
        else:
            r = self.vector(table, i, 1)
        if r is None:
            return None
        try:
            return self.b[r[0]:r[0] + r[1]].decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad("a name is not UTF-8 text") from None


# ---------------------------------------------------------------------------------------------- reading .cbm
def parse_cbm(data: bytes) -> dict:
    """The model's parts from a ``.cbm`` file, read with the bounded reader (nothing trusted)."""
    if not data.startswith(MAGIC):
        raise ModelError("not a CatBoost model: a .cbm file starts with 'CBM1' (save the model with "
                         "model.save_model('model.cbm'))")
    if len(data) < 12:
        raise ModelError("not a complete CatBoost model: the file ends after its header (truncated?)")
    size = struct.unpack_from("<I", data, 4)[0]
    if 8 + size > len(data):
        raise ModelError(f"not a complete CatBoost model: it declares a {size:,}-byte model core but holds "
                         f"{len(data) - 8:,} bytes after its header (truncated?)")
    try:
        return _parse_cbm(data, size)
    except _Bad as exc:
        raise _damaged(str(exc)) from None
    except struct.error:
        raise _damaged("an offset points outside the model") from None


def _parse_cbm(data: bytes, size: int) -> dict:
    fb = _Fb(data, 8, 8 + size)
    core = fb.root()
    trees = fb.table(core, 1)
    if trees is None:
        raise _Bad("the model core has no trees")
    floats = []
    for t in fb.tables(trees, 5):
        nan = fb.scalar(t, 5, "<b", 0)
        floats.append({"index": fb.scalar(t, 1, "<i", -1), "flat": fb.scalar(t, 2, "<i", -1),
                       "borders": fb.array(t, 3, "<f4").astype(np.float64), "name": fb.string(t, 4),
                       "nan": _NAN_TREATMENT.get(nan, nan)})
    cats = [{"index": fb.scalar(t, 0, "<i", -1), "flat": fb.scalar(t, 1, "<i", -1), "name": fb.string(t, 2)}
            for t in fb.tables(trees, 4)]
    one_hot = [{"cat": fb.scalar(t, 0, "<i", -1), "values": fb.array(t, 1, "<i4")} for t in fb.tables(trees, 6)]
    ctrs = []
    for t in fb.tables(trees, 7):
        ctr = fb.table(t, 0)
        base = fb.table(ctr, 0) if ctr is not None else None
        comb = fb.table(base, 0) if base is not None else None
        cat_refs = fb.array(comb, 0, "<i4") if comb is not None else np.empty(0, dtype=np.int32)
        ctrs.append({"borders": fb.array(t, 1, "<f4").astype(np.float64), "cats": cat_refs})
    unsupported = [what for i, what in ((12, "text"), (13, "estimated"), (18, "embedding")) if fb.tables(trees, i)]
    steps = fb.array(trees, 10, "<u2", per=2)
    info = {}
    for kv in fb.tables(core, 2):
        key = fb.string(kv, 0)
        if key is not None:
            info[key] = fb.string(kv, 1) or ""
    parts = [fb.string(t, None) for t in fb.string_offsets(core, 3)]
    multi_bias = fb.array(trees, 16, "<f8")
    model = {"dim": fb.scalar(trees, 0, "<i", 1), "splits": fb.array(trees, 1, "<i4").astype(np.int64),
             "sizes": fb.array(trees, 2, "<i4").astype(np.int64), "starts": fb.array(trees, 3, "<i4").astype(np.int64),
             "leaf_values": fb.array(trees, 8, "<f8"), "steps": steps.reshape(-1, 2).astype(np.int64),
             "node_to_leaf": fb.array(trees, 11, "<u4").astype(np.int64), "floats": floats, "cats": cats,
             "one_hot": one_hot, "ctrs": ctrs, "unsupported": unsupported,
             "scale": fb.scalar(trees, 14, "<d", 1.0),
             "bias": multi_bias if multi_bias.size else np.array([fb.scalar(trees, 15, "<d", 0.0)]),
             "info": info, "parts": parts}
    _check_ctr_tables(data, 8 + size, parts, bool(ctrs))
    return model


def _check_ctr_tables(data: bytes, pos: int, parts: list[str], needed: bool) -> None:
    """The CTR tables after the core: a count, then each table's size and bytes, all inside the file."""
    rest = len(data) - pos
    if not needed:
        return
    if "static_provider_v1" not in parts or rest < 4:
        raise _Bad("the model uses target statistics of categories but holds no tables of them")
    count = struct.unpack_from("<I", data, pos)[0]
    if count > MAX_NODES:
        raise _Bad(f"it declares {count:,} tables of category statistics")
    p = pos + 4
    for _ in range(count):
        if p + 4 > len(data):
            raise _Bad("a table of category statistics is cut off (truncated?)")
        n = struct.unpack_from("<I", data, p)[0]
        if p + 4 + n > len(data):
            raise _Bad(f"a table of category statistics declares {n:,} bytes, more than the file holds (truncated?)")
        p += 4 + n


# ---------------------------------------------------------------------------------------------- reading JSON
def parse_json(data: bytes) -> tuple[dict, dict]:
    """(the model's parts, the JSON document) from a CatBoost JSON model."""
    try:
        doc = json.loads(data.decode("utf-8-sig"), object_pairs_hook=_no_duplicate_keys,
                         parse_constant=_no_constants)
    except UnicodeDecodeError as exc:
        raise ModelError(f"not a valid CatBoost JSON model: the file is not UTF-8 text (byte {exc.start})") from None
    except _Bad as exc:
        raise _damaged(str(exc)) from None
    except RecursionError:
        raise ModelError("not a valid CatBoost JSON model: nesting is too deep") from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"not a valid CatBoost JSON model: {exc.msg} at line {exc.lineno}, column {exc.colno}") \
            from None
    if not isinstance(doc, dict) or not isinstance(doc.get("features_info"), dict) or not (
            "oblivious_trees" in doc or "trees" in doc):
        raise ModelError("not a CatBoost JSON model: the document has no 'features_info' and trees (save it with "
                         "model.save_model('model.json', format='json', pool=train_pool))")
    try:
        return _parse_json(doc), doc
    except _Bad as exc:
        raise _damaged(str(exc)) from None
    except RecursionError:
        raise ModelError("the CatBoost JSON model nests its trees too deeply; upload the .cbm file") from None


def _no_duplicate_keys(pairs):
    """CatBoost reads the uploaded bytes themselves (see :func:`load`): refuse what two JSON parsers could read
    differently, a key given twice (Python keeps the last, another parser the first)."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise _Bad(f"the key {k[:40]!r} appears twice in one object")
        out[k] = v
    return out


def _no_constants(name: str):
    raise _Bad(f"the JSON holds {name}, which is not a number")


def _num(v, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _Bad(f"{what} must be a number")
    return float(v)


def _whole(v, what: str, lo: int = 0, hi: int = MAX_NODES) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _Bad(f"{what} must be a whole number in [{lo}, {hi}], got {str(v)[:40]!r}")
    return v


def _list(v, what: str) -> list:
    if not isinstance(v, list):
        raise _Bad(f"{what} must be a list")
    if len(v) > MAX_NODES:
        raise _Bad(f"{what} holds {len(v):,} entries")
    return v


def _floats(v, what: str) -> np.ndarray:
    items = _list(v, what)
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
        raise _Bad(f"{what} must hold numbers")
    return np.asarray(items, dtype=np.float64)


def _parse_json(doc: dict) -> dict:
    fi = doc["features_info"]
    floats = [{"index": _whole(f.get("feature_index"), "float feature_index"),
               "flat": _whole(f.get("flat_feature_index"), "float flat_feature_index"),
               "borders": _floats(f.get("borders", []), "float feature borders"),
               "name": str(f.get("feature_id", "")) or None, "nan": f.get("nan_value_treatment", "AsIs")}
              for f in _dicts(fi.get("float_features") or [], "float_features")]
    cats = [{"index": _whole(f.get("feature_index"), "categorical feature_index"),
             "flat": _whole(f.get("flat_feature_index"), "categorical flat_feature_index"),
             "name": str(f.get("feature_id", "")) or None}
            for f in _dicts(fi.get("categorical_features") or [], "categorical_features")]
    # one-hot splits: the JSON keeps each categorical feature's one-hot values (hashes) in its own record
    one_hot = [{"cat": pos, "values": np.asarray([_whole(v, "one-hot value", 0, 2**32 - 1)
                                                  for v in _list(f["values"], "one-hot values")], dtype=np.int64)}
               for pos, f in enumerate(_dicts(fi.get("categorical_features") or [], "categorical_features"))
               if f.get("values")]
    ctrs = []
    for c in _dicts(fi.get("ctrs") or [], "ctrs"):
        elems = _dicts(c.get("elements", []), "ctr elements")
        refs = [_whole(e.get("cat_feature_index"), "ctr cat_feature_index") for e in elems
                if "cat_feature_index" in e]
        ctrs.append({"borders": _floats(c.get("borders", []), "ctr borders"), "cats": np.asarray(refs, dtype=np.int64),
                     "identifier": c.get("identifier")})
    for key in ("text_features", "embedding_features", "estimated_features"):
        if fi.get(key):
            raise ModelError(f"CatBoost models with {key.split('_')[0]} features are not supported")
    _check_ctr_data(doc.get("ctr_data") or {}, ctrs)
    dim, bias, scale = 1, np.zeros(1), 1.0
    sb = doc.get("scale_and_bias")
    if sb is not None:
        if not (isinstance(sb, list) and len(sb) == 2):
            raise _Bad("scale_and_bias must be [scale, [bias, ...]]")
        scale = _num(sb[0], "scale")
        bias = _floats(sb[1] if isinstance(sb[1], list) else [sb[1]], "bias")
        dim = max(1, len(bias))
    splits, sizes, leaf_values, steps, node_to_leaf = [], [], [], [], []
    n_bin_float = [len(f["borders"]) for f in floats]
    if "oblivious_trees" in doc:
        trees = _dicts(doc["oblivious_trees"], "oblivious_trees")
        if len(trees) > MAX_TREES:
            raise ModelError(f"the CatBoost model has {len(trees):,} trees; at most {MAX_TREES:,} are accepted")
        for k, t in enumerate(trees):
            ss = _dicts(t.get("splits", []), f"tree {k}: splits")
            if len(ss) > MAX_DEPTH:
                raise _Bad(f"tree {k} has depth {len(ss)}; CatBoost's trees are at most {MAX_DEPTH} deep")
            splits.extend(_whole(s.get("split_index"), f"tree {k}: split_index") for s in ss)
            sizes.append(len(ss))
            values = _floats(t.get("leaf_values", []), f"tree {k}: leaf_values")
            if len(values) != (1 << len(ss)) * dim:
                raise _Bad(f"tree {k} has {len(values)} leaf values; its depth {len(ss)} and {dim} output(s) need "
                           f"{(1 << len(ss)) * dim}")
            leaf_values.append(values)
            _check_split_records(ss, k, floats, n_bin_float)
        symmetric = True
    else:
        trees = _list(doc["trees"], "trees")
        if len(trees) > MAX_TREES:
            raise ModelError(f"the CatBoost model has {len(trees):,} trees; at most {MAX_TREES:,} are accepted")
        n_leaves = 0
        for k, t in enumerate(trees):
            nodes, n_leaves = _flatten(t, k, dim, n_leaves, leaf_values)
            start = len(splits)
            sizes.append(len(nodes))
            for split, left, right, leaf in nodes:
                splits.append(split)
                steps.append((left, right))
                node_to_leaf.append(leaf)
            if len(splits) - start != len(nodes):  # pragma: no cover - defensive
                raise _Bad(f"tree {k} is inconsistent")
        symmetric = False
    model = {"dim": dim, "splits": np.asarray(splits, dtype=np.int64), "sizes": np.asarray(sizes, dtype=np.int64),
             "starts": None, "leaf_values": np.concatenate(leaf_values) if leaf_values else np.empty(0),
             "steps": np.asarray(steps, dtype=np.int64).reshape(-1, 2), "node_to_leaf": np.asarray(node_to_leaf,
                                                                                                    dtype=np.int64),
             "floats": floats, "cats": cats, "one_hot": one_hot, "ctrs": ctrs, "unsupported": [],
             "scale": scale, "bias": bias, "info": _json_info(doc.get("model_info", {})), "parts": [],
             "symmetric": symmetric}
    return model


def _dicts(v, what: str) -> list[dict]:
    items = _list(v, what)
    if not all(isinstance(x, dict) for x in items):
        raise _Bad(f"{what} must be a list of objects")
    return items


def _check_split_records(ss: list[dict], k: int, floats: list[dict], n_bin_float: list[int]) -> None:
    """A float split's own record (feature index and border) must name the binary feature its split_index does."""
    for s in ss:
        if s.get("split_type") == "FloatFeature":
            f = _whole(s.get("float_feature_index"), f"tree {k}: float_feature_index")
            if f >= len(floats):
                raise _Bad(f"tree {k}: a split uses float feature {f}, but the model has {len(floats)}")
            border = _num(s.get("border"), f"tree {k}: border")
            if not math.isfinite(border):
                raise _Bad(f"tree {k}: a split border is {border!r}, not a finite number")


def _flatten(tree, k: int, dim: int, n_leaves: int, leaf_values: list) -> tuple[list, int]:
    """A non-symmetric tree of the JSON format as CatBoost's step nodes: (split, left step, right step, leaf id)."""
    nodes = []
    stack = [(tree, None, None)]
    while stack:
        node, parent, side = stack.pop()
        if not isinstance(node, dict):
            raise _Bad(f"tree {k}: a node is not an object")
        if len(nodes) > MAX_NODES:
            raise _Bad(f"tree {k} has too many nodes")
        i = len(nodes)
        if parent is not None:
            split, left, right, leaf = nodes[parent]
            nodes[parent] = (split, i - parent if side == "left" else left, i - parent if side == "right" else right,
                             leaf)
        if "split" in node:
            s = node["split"]
            if not isinstance(s, dict):
                raise _Bad(f"tree {k}: a split is not an object")
            nodes.append((_whole(s.get("split_index"), f"tree {k}: split_index"), 0, 0, -1))
            stack.append((node.get("right"), i, "right"))
            stack.append((node.get("left"), i, "left"))
        else:
            value = node.get("value")
            values = _floats(value if isinstance(value, list) else [value], f"tree {k}: leaf value")
            if len(values) != dim:
                raise _Bad(f"tree {k}: a leaf holds {len(values)} values for {dim} output(s)")
            leaf_values.append(values)
            nodes.append((0, 0, 0, n_leaves))
            n_leaves += 1
    for i, (_, left, right, _leaf) in enumerate(nodes):
        if left > 65535 or right > 65535:
            raise _Bad(f"tree {k} is too large for CatBoost's step nodes")
    return nodes, n_leaves


def _check_ctr_data(ctr_data, ctrs: list[dict]) -> None:
    """JSON CTR tables: a hash map of (hash, counts...) rows whose stride matches its length."""
    if not isinstance(ctr_data, dict):
        raise _Bad("ctr_data must be an object")
    for key, table in ctr_data.items():
        if not isinstance(table, dict):
            raise _Bad("a ctr_data table must be an object")
        stride = _whole(table.get("hash_stride", 0), "ctr_data hash_stride", 1, 1 << 16)
        hashes = _list(table.get("hash_map", []), "ctr_data hash_map")
        if len(hashes) % stride:
            raise _Bad(f"a ctr_data hash_map holds {len(hashes)} entries, not a multiple of its stride {stride}")
        for j, v in enumerate(hashes):
            if j % stride == 0:
                ok = isinstance(v, str) and v.isdigit() and int(v) < 2**64 or isinstance(v, int) and 0 <= v < 2**64
            else:
                ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok:
                raise _Bad(f"a ctr_data hash_map holds {str(v)[:40]!r} where a {'hash' if j % stride == 0 else 'count'}"
                           " belongs")
    needed = {c["identifier"] for c in ctrs if isinstance(c.get("identifier"), str)}
    missing = needed - set(ctr_data)
    if missing:
        raise _Bad("the model uses target statistics of categories whose tables ctr_data lacks")


def _json_info(info) -> dict:
    """model_info as the .cbm's info map: strings (nested values as JSON text)."""
    if not isinstance(info, dict):
        return {}
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in info.items()}


# ---------------------------------------------------------------------------------------------- checking
def check(model: dict) -> dict:
    try:
        return _check(model)
    except (_Bad, TreeProblem) as exc:
        raise _damaged(str(exc)) from None


def _check(m: dict) -> dict:
    if m["unsupported"]:
        raise ModelError(f"CatBoost models with {', '.join(m['unsupported'])} features are not supported")
    floats, cats = m["floats"], m["cats"]
    n_features = len(floats) + len(cats)
    if n_features > MAX_FEATURES:
        raise _Bad(f"{n_features:,} features; at most {MAX_FEATURES:,} are accepted")
    flat = [f["flat"] for f in floats] + [c["flat"] for c in cats]
    if sorted(flat) != list(range(n_features)):
        raise _Bad("the features' positions are not 0, 1, ... once each")
    for pos, f in enumerate(floats):
        if f["index"] != pos:
            raise _Bad(f"float feature {pos} is numbered {f['index']}")
        b = f["borders"]
        if not np.all(np.isfinite(b)) or np.any(np.diff(b) <= 0):
            raise _Bad(f"float feature {pos}'s borders are not increasing finite numbers")
        if f["nan"] not in ("AsIs", "AsFalse", "AsTrue", "Min", "Max"):
            raise _Bad(f"float feature {pos} has an unknown treatment of missing values {str(f['nan'])[:20]!r}")
    for pos, c in enumerate(cats):
        if c["index"] != pos:
            raise _Bad(f"categorical feature {pos} is numbered {c['index']}")
    for h in m["one_hot"]:
        if not 0 <= h["cat"] < len(cats):
            raise _Bad(f"a one-hot feature names categorical feature {h['cat']} of {len(cats)}")
    for c in m["ctrs"]:
        if c["cats"].size and (c["cats"].min() < 0 or c["cats"].max() >= len(cats)):
            raise _Bad(f"a category statistic names categorical feature {int(c['cats'].max())} of {len(cats)}")
        if not np.all(np.isfinite(c["borders"])):
            raise _Bad("a category statistic's borders are not finite numbers")
    # the binary features the splits name: every float border, then every one-hot value, then every CTR border
    kinds = ([("float", i, float(b)) for i, f in enumerate(floats) for b in f["borders"]]
             + [("one_hot", h["cat"], 0.0) for h in m["one_hot"] for _ in h["values"]]
             + [("ctr", j, float(b)) for j, c in enumerate(m["ctrs"]) for b in c["borders"]])
    n_bin = len(kinds)
    splits, sizes, dim = m["splits"], m["sizes"], m["dim"]
    if not 1 <= dim <= MAX_CLASSES:
        raise _Bad(f"the output dimension {dim} is out of range")
    if len(sizes) > MAX_TREES:
        raise ModelError(f"the CatBoost model has {len(sizes):,} trees; at most {MAX_TREES:,} are accepted")
    if sizes.size and sizes.min() < 0:
        raise _Bad("a tree has a negative size")
    if int(sizes.sum()) != len(splits):
        raise _Bad(f"the trees' sizes add up to {int(sizes.sum())} splits, but the model holds {len(splits)}")
    if m["starts"] is not None and m["starts"].size and not np.array_equal(
            m["starts"], np.concatenate([[0], np.cumsum(sizes)[:-1]])):
        raise _Bad("the trees' start offsets do not match their sizes")
    if splits.size and (splits.min() < 0 or splits.max() >= max(n_bin, 0)):
        bad = int(splits[(splits < 0) | (splits >= n_bin)][0])
        raise _Bad(f"a split names binary feature {bad}, but the model has {n_bin}")
    values = m["leaf_values"]
    if not np.all(np.isfinite(values)):
        raise _Bad("a leaf value is not a finite number")
    bias = np.asarray(m["bias"], dtype=np.float64)
    if not (math.isfinite(m["scale"]) and np.all(np.isfinite(bias))):
        raise _Bad("the scale or bias is not a finite number")
    if len(bias) not in (1, dim):
        raise _Bad(f"{len(bias)} bias values for {dim} output(s)")
    symmetric = m.get("symmetric", len(m["steps"]) == 0)
    trees = []
    if symmetric:
        if sizes.size and sizes.max() > MAX_DEPTH:
            raise _Bad(f"a tree has depth {int(sizes.max())}; CatBoost's trees are at most {MAX_DEPTH} deep")
        need = int(((1 << sizes) * dim).sum()) if sizes.size else 0
        if len(values) != need:
            raise _Bad(f"the model holds {len(values)} leaf values; its trees and {dim} output(s) need {need}")
        pos, off = 0, 0
        for depth in sizes.tolist():
            trees.append(_oblivious(splits[pos:pos + depth], values[off:off + (dim << depth)], dim, kinds, floats))
            pos, off = pos + depth, off + (dim << depth)
    else:
        steps, leaf_of = m["steps"], m["node_to_leaf"]
        if len(steps) != len(splits) or len(leaf_of) != len(splits):
            raise _Bad("the non-symmetric trees' step nodes do not match their splits")
        n_leaf_values = len(values) // dim
        if len(values) % dim:
            raise _Bad(f"{len(values)} leaf values for {dim} output(s)")
        pos = 0
        for k, size in enumerate(sizes.tolist()):
            trees.append(_non_symmetric(k, splits[pos:pos + size], steps[pos:pos + size], leaf_of[pos:pos + size],
                                        values, dim, n_leaf_values, kinds, floats))
            pos += size
    flat_trees = [t for group in trees for t in group]
    for k, t in enumerate(flat_trees):
        try:
            check_tree(t, n_features)
        except TreeProblem as exc:
            raise _Bad(f"tree {k // dim}: {exc}") from None
    incomplete = any(kind != "float" for kind, _, _ in (kinds[s] for s in splits.tolist()))
    ensemble = TreeEnsemble(trees=flat_trees, n_features=n_features, n_groups=dim,
                            bias=np.broadcast_to(bias, (dim,)).astype(np.float64), scale=float(m["scale"]),
                            dtype="float32", complete=not incomplete,
                            why_incomplete="splits on target statistics or one-hot codes of categories, which only "
                                           "CatBoost computes" if incomplete else "")
    return {"n_features": n_features, "ensemble": ensemble, "n_trees": len(sizes), "dim": dim,
            "symmetric": symmetric}


def _flat_feature(kind_entry, floats) -> tuple[int, float, bool]:
    kind, i, border = kind_entry
    if kind == "float":
        return floats[i]["flat"], border, floats[i]["nan"] not in ("AsTrue", "Max")
    return -1, np.nan, True  # evaluated by CatBoost only (the TreeEnsemble is marked incomplete)


def _oblivious(splits, values, dim, kinds, floats) -> list[TreeArrays]:
    """A symmetric tree as node arrays (one per output): level l splits on split d-1-l, so the leaf reached is the
    leaf index CatBoost computes (split k's bit is bit k)."""
    depth = len(splits)
    n_int = (1 << depth) - 1
    n = n_int + (1 << depth)
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.full(n, np.nan)
    default_left = np.zeros(n, dtype=bool)
    for node in range(n_int):
        level = int(np.floor(np.log2(node + 1)))
        f, border, dl = _flat_feature(kinds[int(splits[depth - 1 - level])], floats)
        left[node], right[node] = 2 * node + 1, 2 * node + 2
        feature[node], threshold[node], default_left[node] = max(f, 0), border if f >= 0 else 0.0, dl
    out = []
    for g in range(dim):
        value = np.zeros(n)
        value[n_int:] = values.reshape(-1, dim)[:, g]
        out.append(TreeArrays(left=left, right=right, feature=feature, threshold=threshold, value=value,
                              default_left=default_left, missing=np.full(n, MISSING_NAN_DEFAULT),
                              categorical=np.zeros(n, dtype=bool), group=g))
    return out


def _non_symmetric(k, splits, steps, leaf_of, values, dim, n_leaf_values, kinds, floats) -> list[TreeArrays]:
    """A non-symmetric tree as node arrays. CatBoost's step node ``i`` sends a row to ``i + step`` on the side its
    split gives, and stops at ``i`` when that step is 0, reading the leaf ``node_to_leaf[i]``: such a side becomes a
    leaf node of its own here. Steps are positive, so a tree cannot loop; each must stay inside its tree."""
    n = len(splits)
    if n == 0:
        raise _Bad(f"tree {k} has no nodes")
    extra = int((steps == 0).sum(axis=1).clip(max=1)[np.any(steps != 0, axis=1)].sum())
    total = n + extra
    left = np.full(total, -1, dtype=np.int64)
    right = np.full(total, -1, dtype=np.int64)
    feature = np.full(total, -1, dtype=np.int64)
    threshold = np.full(total, np.nan)
    default_left = np.zeros(total, dtype=bool)
    value = np.zeros((total, dim))
    nxt = n

    def leaf_values(i: int) -> np.ndarray:
        leaf = int(leaf_of[i])
        if not 0 <= leaf < n_leaf_values:
            raise _Bad(f"tree {k}: node {i} names leaf {leaf}, but the model has {n_leaf_values} leaf values")
        return values[leaf * dim:(leaf + 1) * dim]

    for i in range(n):
        dl, dr = int(steps[i, 0]), int(steps[i, 1])
        if dl == 0 and dr == 0:
            value[i] = leaf_values(i)
            continue
        if i + dl >= n or i + dr >= n:
            raise _Bad(f"tree {k}: node {i} steps outside the tree's {n} nodes")
        f, border, d = _flat_feature(kinds[int(splits[i])], floats)
        for step, out in ((dl, left), (dr, right)):
            if step:
                out[i] = i + step
            else:
                out[i] = nxt
                value[nxt] = leaf_values(i)
                nxt += 1
        feature[i], threshold[i], default_left[i] = max(f, 0), border if f >= 0 else 0.0, d
    return [TreeArrays(left=left, right=right, feature=feature, threshold=threshold, value=value[:, g].copy(),
                       default_left=default_left, missing=np.full(total, MISSING_NAN_DEFAULT),
                       categorical=np.zeros(total, dtype=bool), group=g) for g in range(dim)]


def _params(info: dict) -> tuple[str, list | None]:
    """(loss function, class names) from the model's info map."""
    loss = ""
    try:
        params = json.loads(info.get("params", "{}") or "{}")
        lf = params.get("loss_function", {}) if isinstance(params, dict) else {}
        loss = lf.get("type", "") if isinstance(lf, dict) else str(lf)
    except (json.JSONDecodeError, RecursionError, AttributeError):
        loss = ""
    classes = None
    try:
        cp = json.loads(info.get("class_params", "{}") or "{}")
        names = cp.get("class_names") if isinstance(cp, dict) else None
        if isinstance(names, list) and names and all(isinstance(c, (int, str)) and not isinstance(c, bool)
                                                     for c in names):
            classes = names
    except (json.JSONDecodeError, RecursionError):
        classes = None
    return str(loss), classes


# ---------------------------------------------------------------------------------------------- the model
class CatBoostModel(LoadedModel):
    kind = "catboost"

    def __init__(self, booster, parts: dict, info: dict, fmt: str):
        self._booster = booster
        self.trees = info["ensemble"]
        loss, classes = _params(parts["info"])
        self._loss = loss
        n_features = info["n_features"]
        names = [None] * n_features
        self._is_cat = [False] * n_features
        for f in parts["floats"]:
            names[f["flat"]] = f["name"]
        for c in parts["cats"]:
            names[c["flat"]] = c["name"]
            self._is_cat[c["flat"]] = True
        positional = any(not n for n in names) or names == [str(i) for i in range(n_features)]
        label = [n or str(i) for i, n in enumerate(names)]
        if len(set(label)) != len(label):
            raise _damaged("duplicate feature names")
        dim = info["dim"]
        task = REGRESSION
        warnings = []
        if loss in _MULTI_OUTPUT:
            raise ModelError(f"the CatBoost model has several outputs per row ({loss}); T-CREx explains one")
        if loss in _CLASSIFY or (not loss and classes):
            task = CLASSIFICATION
            n_classes = 2 if dim == 1 else dim
            if classes is None or len(classes) != n_classes:
                classes = list(range(n_classes))
        elif dim > 1:
            raise ModelError(f"the CatBoost model has {dim} outputs per row ({loss or 'unknown loss'}); T-CREx "
                             "explains one")
        else:
            classes = None
            if loss in _RANKING:
                warnings.append(f"a ranking model ({loss}): its scores are explained as a regression")
            elif not loss:
                warnings.append("the file names no loss function: its raw scores are explained as a regression")
        # CatBoost hashes categories and scores a value it never saw with its prior, so no list of known values is
        # given (the JSON's cat_features_hash lists every categorical feature's values together, not per feature)
        categories = {}
        n_cat = sum(self._is_cat)
        what = ("binary classifier" if classes is not None and len(classes) == 2 else
                f"{len(classes)}-class classifier" if classes is not None else "regressor")
        shape = "symmetric" if info["symmetric"] else "non-symmetric"
        desc = (f"CatBoost {what} ({loss or 'no loss function'}), {info['n_trees']} {shape} trees, "
                f"{n_features} feature(s)" + (f" ({n_cat} categorical)" if n_cat else "")
                + (", no feature names (columns matched by position)" if positional else "") + f" [{fmt}]")
        super().__init__(task=task, feature_names=None if positional else label, n_features=n_features,
                         classes=classes, categories=categories, description=desc, warnings=warnings,
                         feature_kinds={label[i]: CATEGORICAL if c else NUMERIC for i, c in enumerate(self._is_cat)})
        self._label = label
        if task == CLASSIFICATION:
            self.predict_proba = self._proba

    def _pool(self, X: pd.DataFrame):
        from catboost import Pool

        cols = {}
        for j, cat in enumerate(self._is_cat):
            s = X.iloc[:, j]
            name = self._label[j] if self.feature_names else str(X.columns[j])
            cols[self._label[j]] = _category_text(s, name) if cat else numeric_column(s, name)
        frame = pd.DataFrame(cols, index=range(len(X)))
        cat_idx = [j for j, c in enumerate(self._is_cat) if c]
        return Pool(frame, cat_features=cat_idx or None)

    def _run(self, X: pd.DataFrame, prediction_type: str) -> np.ndarray:
        threads = threads_given()
        out = self._booster.predict(self._pool(X), prediction_type=prediction_type,
                                    thread_count=threads if threads else -1)
        return np.asarray(out, dtype=np.float64)

    def _proba(self, X) -> np.ndarray:
        X = self.select(as_frame(X))
        out = self._run(X, "Probability")
        return out.reshape(len(X), -1) if out.ndim == 2 else np.column_stack([1.0 - out, out])

    def _predict(self, X: pd.DataFrame):
        if self.task == REGRESSION:
            return self._run(X, "Exponent" if self._loss in _EXPONENT else "RawFormulaVal").reshape(len(X))
        raw = self._run(X, "RawFormulaVal")
        idx = (raw > 0).astype(np.int64).reshape(len(X)) if raw.ndim == 1 else raw.argmax(axis=1)
        return np.asarray(self.classes, dtype=object if any(isinstance(c, str) for c in self.classes) else None)[idx]


def _category_text(s: pd.Series, name: str) -> np.ndarray:
    """A categorical column as the text CatBoost hashes: whole numbers without a decimal point (``3``, never
    ``3.0``, as CatBoost read an integer column when training); a missing value is refused (CatBoost has none)."""
    if s.isna().any():
        raise ModelError(f"column {name!r} has {int(s.isna().sum())} missing value(s); CatBoost's categorical features "
                         "take a value in every row (fill them with a category such as 'missing', as in training)")
    values = s.astype(object).to_numpy()
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            v = int(v)
        elif isinstance(v, (bool, np.bool_)):
            v = str(bool(v))
        out[i] = str(v.item() if isinstance(v, np.generic) else v)
    return out


def load(data: bytes, fmt: str = "cbm") -> CatBoostModel:
    """Read a CatBoost ``.cbm`` (``fmt="cbm"``) or JSON (``fmt="json"``) model into a :class:`CatBoostModel`."""
    if fmt == "json":
        parts, doc = parse_json(data)
    else:
        parts, doc = parse_cbm(data), None
    info = check(parts)
    try:
        import catboost
    except ImportError:
        raise ModelError("CatBoost is not installed on this server: CatBoost models cannot be loaded here (the "
                         "operator can add it with pip install 'tcrex[catboost]')") from None
    booster = catboost.CatBoost()
    try:
        if doc is None:
            booster.load_model(blob=data)
        else:
            # the checked bytes themselves: CatBoost's JSON reader does not round decimal text to the nearest
            # double, so numbers re-written by Python (shortest form) loaded as other doubles (1.8e-15 apart);
            # what two parsers could read differently (a key twice, NaN/Infinity) was refused by parse_json
            _load_json(booster, data)
        n_features = len(booster.feature_names_ or [])
    except Exception as exc:  # noqa: BLE001 - CatBoostError and friends: every one is the file's fault here
        raise ModelError(f"CatBoost could not load the model: {short_error(exc)}") from None
    if n_features != info["n_features"]:
        raise ModelError(f"CatBoost read {n_features} features where the file declares {info['n_features']}")
    model = CatBoostModel(booster, parts, info, "CBM" if fmt != "json" else "JSON")
    return model


def _load_json(booster, text: bytes) -> None:
    """CatBoost reads JSON models only from a file name: give it an in-memory file (nothing on disk)."""
    fd = os.memfd_create("tcrex-catboost-model", getattr(os, "MFD_CLOEXEC", 0))
    try:
        view = memoryview(text)
        while view:
            view = view[os.write(fd, view):]
        booster.load_model(f"/proc/self/fd/{fd}", format="json")
    finally:
        os.close(fd)
