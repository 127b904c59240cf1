"""Hostile LightGBM and CatBoost model files, each rebuilt from its name (no binary fixtures): structural damage of a
real model trained on the loans table, sizes declared far beyond the bytes, repetition, truncation and random bytes.

Each mutation is ``name -> (make, expected)``: ``make()`` gives the file's bytes, ``expected`` a regular expression
the refusal must match (``None``: any clear refusal or a contained fault). Used by ``tests/intake/
test_hostile_tree_formats.py`` and the corpus (``tests/support/hostile_corpus.py``, ``benchmarks/hostile_corpus.py``).
"""
from __future__ import annotations

import functools
import json
import random
import struct

import numpy as np

from tests.support import builders as b


# ---------------------------------------------------------------------------------------------- base models
@functools.lru_cache(maxsize=None)
def lgb_text() -> str:
    """A LightGBM binary classifier on the loans table (``job`` a pandas category), as its text model."""
    import lightgbm as lgb

    X, y = b.loans()
    X = X.assign(job=X.job.astype("category"))
    m = lgb.LGBMClassifier(n_estimators=4, num_leaves=6, min_child_samples=5, verbose=-1).fit(X, y)
    return m.booster_.model_to_string()


@functools.lru_cache(maxsize=None)
def lgb_dump() -> str:
    import lightgbm as lgb

    return json.dumps(lgb.Booster(model_str=lgb_text()).dump_model())


@functools.lru_cache(maxsize=None)
def cb_file(fmt: str = "cbm", grow_policy: str = "SymmetricTree", categorical: bool = True) -> bytes:
    """A CatBoost binary classifier on the loans table (``job`` a categorical feature unless not ``categorical``)."""
    X, y = b.loans()
    if not categorical:
        X = X.drop(columns=["job"])
    data, _, _ = b.cb_model(X=X, y=y, fmt=fmt, n_estimators=4, grow_policy=grow_policy)
    return data


def _tree_field(text: str, key: str, edit, tree: int = 0) -> str:
    """``text`` with the line ``key=...`` of tree ``tree`` replaced by ``edit(list of tokens)`` (tree_sizes dropped,
    so LightGBM itself would read the edited tree too)."""
    head, sep, rest = text.partition(f"Tree={tree}\n")
    block, sep2, after = rest.partition("\n\n")
    lines = block.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(key + "="):
            tokens = line[len(key) + 1:].split(" ")
            lines[i] = f"{key}=" + " ".join(map(str, edit(tokens)))
    head = "\n".join(line for line in head.split("\n") if not line.startswith("tree_sizes="))
    return head + sep + "\n".join(lines) + sep2 + after


def _set(i, v):
    def edit(tokens):
        tokens = list(tokens)
        tokens[i] = v
        return tokens
    return edit


def _header(text: str, key: str, value: str) -> str:
    return "\n".join(f"{key}={value}" if line.startswith(key + "=") else line for line in text.split("\n"))


def _lgb_many_trees(n: int = 1_000_000) -> bytes:
    head = lgb_text().split("\nTree=0")[0]
    head = "\n".join(line for line in head.split("\n") if not line.startswith("tree_sizes="))
    tree = "Tree={}\nnum_leaves=1\nnum_cat=0\nleaf_value=0\nis_linear=0\nshrinkage=1\n\n"
    return (head + "\n\n" + "".join(tree.format(k) for k in range(n)) + "end of trees\n").encode()


def _lgb_cat_tree() -> int:
    """The first tree of the base model with a categorical split."""
    text = lgb_text()
    for k, block in enumerate(text.split("\nTree=")[1:]):
        if "\nnum_cat=0\n" not in block:
            return k
    raise AssertionError("the base model has no categorical split")


def _lgb_cat_edit(key, edit):
    return lambda: _tree_field(lgb_text(), key, edit, tree=_lgb_cat_tree()).encode()


LGB_MUTATIONS = {
    "child-out-of-range": (lambda: _tree_field(lgb_text(), "left_child", _set(0, 200)).encode(),
                           r"child index \(200\) points outside"),
    "leaf-out-of-range": (lambda: _tree_field(lgb_text(), "right_child", _set(0, -40)).encode(),
                          r"child index \(-40\) points outside"),
    "loop-to-root": (lambda: _tree_field(lgb_text(), "right_child", _set(1, 0)).encode(), r"loop|child of two"),
    "loop-two-nodes": (lambda: _tree_field(_tree_field(lgb_text(), "left_child", _set(1, 2)), "left_child",
                                           _set(2, 1)).encode(), r"loop|child of two"),
    "split-feature-out-of-range": (lambda: _tree_field(lgb_text(), "split_feature", _set(0, 9)).encode(),
                                   "feature index 9, but the model has 3 features"),
    "threshold-nan": (lambda: _tree_field(lgb_text(), "threshold", _set(0, "nan")).encode(), "not a finite number"),
    "threshold-inf": (lambda: _tree_field(lgb_text(), "threshold", _set(0, "inf")).encode(), "not a finite number"),
    "leaf-value-nan": (lambda: _tree_field(lgb_text(), "leaf_value", _set(0, "nan")).encode(), "leaf value"),
    "decision-type-unknown": (lambda: _tree_field(lgb_text(), "decision_type", _set(0, 64)).encode(),
                              "unknown decision_type 64"),
    "cat-set-out-of-range": (_lgb_cat_edit("threshold", lambda t: [7] * len(t)), "category set"),
    "cat-boundaries-out-of-range": (_lgb_cat_edit("cat_boundaries", lambda t: [*t[:-1], 2000]),
                                    "cat_boundaries do not match"),
    "num-leaves-huge": (lambda: _tree_field(lgb_text(), "num_leaves", _set(0, 131072)).encode(),
                        "entries, expected 131071"),
    "num-leaves-beyond-lightgbm": (lambda: _tree_field(lgb_text(), "num_leaves", _set(0, 10**9)).encode(),
                                   "out of range"),
    "num-class-huge": (lambda: _header(lgb_text(), "num_class", "2000000000").encode(), "num_class = 2000000000"),
    "max-feature-huge": (lambda: _header(lgb_text(), "max_feature_idx", "2000000000").encode(),
                         "max_feature_idx = 2000000000"),
    "feature-names-short": (lambda: _header(lgb_text(), "feature_names", "age income").encode(),
                            "2 feature names for 3 features"),
    "ten-million-tokens": (lambda: _tree_field(lgb_text(), "leaf_value", lambda t: ["0"] * 10_000_000).encode(),
                           "holds 10000000 entries, expected"),
    "million-trees": (_lgb_many_trees, "1,000,000 trees; at most 100,000"),
    "pandas-categorical-deep": (lambda: (lgb_text().rsplit("pandas_categorical:", 1)[0] + "pandas_categorical:"
                                         + "[" * 100_000 + "]" * 100_000 + "\n").encode(), "not valid JSON"),
    "pandas-categorical-short": (lambda: (lgb_text().rsplit("pandas_categorical:", 1)[0]
                                          + 'pandas_categorical:[]\n').encode(), None),
    "duplicate-key": (lambda: _tree_field(lgb_text(), "shrinkage", lambda t: t).replace(
        "shrinkage=1\n", "shrinkage=1\nshrinkage=2\n", 1).encode(), "twice"),
    "unknown-field": (lambda: lgb_text().replace("is_linear=0", "is_linear=0\nevil_field=1", 1).encode(),
                      "does not know"),
    "linear-tree": (lambda: lgb_text().replace("is_linear=0", "is_linear=1", 1).encode(), "linear trees"),
    "truncated-0.1": (lambda: lgb_text()[:len(lgb_text()) // 10].encode(), "end of trees"),
    "truncated-0.6": (lambda: lgb_text()[:int(len(lgb_text()) * 0.6)].encode(), "end of (trees|parameters)"),
    "wrong-magic": (lambda: ("trie" + lgb_text()[4:]).encode(), "not a LightGBM text model"),
    "not-utf8": (lambda: lgb_text().replace("age", "\xff\xfe", 1).encode("latin-1"), "not UTF-8"),
    "dump-deep": (lambda: ('{"name": "tree", "tree_info": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(),
                  "too deeply|nests"),
    "dump-million-trees": (lambda: json.dumps({**json.loads(lgb_dump()), "tree_info": [{}] * 1_000_000}).encode(),
                           "1,000,000 trees"),
    "dump-leaf-twice": (lambda: _dump_edit(lambda t: t["tree_structure"]["right_child"].update(
        t["tree_structure"]["left_child"] if "leaf_index" in t["tree_structure"]["left_child"] else
        {"leaf_index": 0, "leaf_value": 0.0})), "twice|do not match"),
    "dump-split-feature": (lambda: _dump_edit(lambda t: t["tree_structure"].__setitem__("split_feature", 50)),
                           "feature index 50"),
}


def _dump_edit(edit) -> bytes:
    doc = json.loads(lgb_dump())
    edit(doc["tree_info"][0])
    return json.dumps(doc).encode()


# ---------------------------------------------------------------------------------------------- CatBoost .cbm
def _cbm_vector(data: bytes, field: int, table: str = "trees") -> tuple[int, int]:
    """(position of the first element, element count) of a vector field of the model's trees table."""
    from tcrex.intake._catboost import _Fb

    size = struct.unpack_from("<I", data, 4)[0]
    fb = _Fb(data, 8, 8 + size)
    trees = fb.table(fb.root(), 1)
    r = fb.vector(trees, field, 1)
    assert r is not None, f"the model has no vector field {field}"
    return r


def _cbm_set(field: int, index: int, fmt: str, value, *, model=None):
    def make():
        data = bytearray(cb_file() if model is None else model())
        pos, _ = _cbm_vector(bytes(data), field)
        struct.pack_into(fmt, data, pos + index * struct.calcsize(fmt), value)
        return bytes(data)
    return make


def _cbm_count(field: int, count: int):
    def make():
        data = bytearray(cb_file())
        pos, _ = _cbm_vector(bytes(data), field)
        struct.pack_into("<I", data, pos - 4, count)
        return bytes(data)
    return make


def _cbm_core_size(size: int) -> bytes:
    data = bytearray(cb_file())
    struct.pack_into("<I", data, 4, size)
    return bytes(data)


def _cbm_ctr_damage(seed: int) -> bytes:
    """Random bytes overwritten inside the tables of category statistics (after the core): only CatBoost reads them."""
    data = bytearray(cb_file())
    start = 8 + struct.unpack_from("<I", data, 4)[0] + 8
    rng = random.Random(seed)
    for _ in range(rng.randint(1, 6)):
        data[rng.randrange(start, len(data))] = rng.randrange(256)
    return bytes(data)


def cbm_fuzz(seed: int) -> bytes:
    data = bytearray(cb_file())
    rng = random.Random(seed)
    for _ in range(rng.randint(1, 4)):
        data[rng.randrange(8, len(data))] = rng.randrange(256)
    return bytes(data)


def lgb_text_fuzz(seed: int) -> bytes:
    """A LightGBM text model with a few numbers of its trees replaced by others (indices, huge, negative, NaN)."""
    rng = random.Random(seed)
    lines = lgb_text().split("\n")
    tree_lines = [i for i, line in enumerate(lines) if "=" in line and line.split("=")[0] in (
        "split_feature", "threshold", "decision_type", "left_child", "right_child", "leaf_value", "cat_boundaries",
        "cat_threshold", "num_leaves", "num_cat")]
    values = ["0", "1", "-1", "2", "-2", "7", "31", "65536", "2147483648", "-2147483649", "nan", "inf", "1e308", "x"]
    for _ in range(rng.randint(1, 4)):
        i = rng.choice(tree_lines)
        key, value = lines[i].split("=", 1)
        tokens = value.split(" ")
        tokens[rng.randrange(len(tokens))] = rng.choice(values)
        lines[i] = key + "=" + " ".join(tokens)
    return "\n".join(line for line in lines if not line.startswith("tree_sizes=")).encode()


_NON_SYM = functools.partial(cb_file, "cbm", "Depthwise", False)
CBM_MUTATIONS = {
    "split-out-of-range": (_cbm_set(1, 0, "<i", 10**6), "binary feature 1000000"),
    "split-negative": (_cbm_set(1, 0, "<i", -5), "binary feature -5"),
    "tree-sizes": (_cbm_set(2, 0, "<i", 9), "sizes add up"),
    "tree-depth-huge": (_cbm_set(2, 0, "<i", 2**30), "add up|deep"),
    "start-offsets": (_cbm_set(3, 1, "<i", 0), "start offsets"),
    "leaf-value-nan": (_cbm_set(8, 0, "<d", float("nan")), "leaf value"),
    "leaf-value-inf": (_cbm_set(8, 0, "<d", float("inf")), "leaf value"),
    "border-nan": (lambda: _cbm_border(float("nan")), "borders"),
    "vector-count-huge": (_cbm_count(1, 2**31), "declares|outside"),
    "leaf-values-count": (_cbm_count(8, 3), "leaf values"),
    "core-size-huge": (lambda: _cbm_core_size(2**32 - 1), "declares a 4,294,967,295-byte model core"),
    "core-size-zero": (lambda: _cbm_core_size(0), "outside|no trees|damaged"),
    "wrong-magic": (lambda: b"CBM2" + cb_file()[4:], "cannot tell|CBM1"),
    "truncated-0.1": (lambda: cb_file()[:len(cb_file()) // 10], "truncated"),
    "truncated-0.5": (lambda: cb_file()[:len(cb_file()) // 2], "truncated"),
    "truncated-0.99": (lambda: cb_file()[:int(len(cb_file()) * 0.99)], "truncated"),
    "step-outside-tree": (_cbm_set(10, 0, "<H", 60000, model=_NON_SYM), "steps outside"),
    "step-into-next-tree": (lambda: _cbm_step_next_tree(), "steps outside"),
    "leaf-id-out-of-range": (lambda: _cbm_leaf_id(10**6), "names leaf 1000000"),
}
for _seed in range(4):
    CBM_MUTATIONS[f"ctr-table-damage-{_seed}"] = (functools.partial(_cbm_ctr_damage, _seed), None)


def _cbm_border(value: float) -> bytes:
    from tcrex.intake._catboost import _Fb

    data = bytearray(cb_file())
    size = struct.unpack_from("<I", data, 4)[0]
    fb = _Fb(bytes(data), 8, 8 + size)
    trees = fb.table(fb.root(), 1)
    for t in fb.tables(trees, 5):
        r = fb.vector(t, 3, 4)
        if r is not None and r[1]:
            struct.pack_into("<f", data, r[0], value)
            return bytes(data)
    raise AssertionError("no float feature with borders")


def _cbm_step_next_tree() -> bytes:
    """A step from the last node of the first tree into the second (CatBoost's steps only go forward, so a tree
    cannot loop; a step leaving its tree is the nearest damage)."""
    data = bytearray(_NON_SYM())
    sizes_pos, n = _cbm_vector(bytes(data), 2)
    first = struct.unpack_from("<i", data, sizes_pos)[0]
    steps_pos, _ = _cbm_vector(bytes(data), 10)
    struct.pack_into("<HH", data, steps_pos, first, first)
    return bytes(data)


def _cbm_leaf_id(value: int) -> bytes:
    data = bytearray(_NON_SYM())
    steps_pos, n = _cbm_vector(bytes(data), 10)
    steps = np.frombuffer(bytes(data), dtype="<u2", count=2 * n, offset=steps_pos).reshape(-1, 2)
    leaf = int(np.flatnonzero((steps == 0).any(axis=1))[0])
    pos, _ = _cbm_vector(bytes(data), 11)
    struct.pack_into("<I", data, pos + 4 * leaf, value)
    return bytes(data)


# ---------------------------------------------------------------------------------------------- CatBoost JSON
def _cb_json_edit(edit):
    def make():
        doc = json.loads(cb_file("json"))
        out = edit(doc)
        return out if isinstance(out, bytes) else json.dumps(doc).encode()
    return make


def _first_split(doc):
    return doc["oblivious_trees"][0]["splits"][0]


CB_JSON_MUTATIONS = {
    "split-out-of-range": (_cb_json_edit(lambda d: _first_split(d).__setitem__("split_index", 10**6)),
                           "binary feature 1000000"),
    "float-feature-out-of-range": (_cb_json_edit(lambda d: next(
        s for t in d["oblivious_trees"] for s in t["splits"] if s["split_type"] == "FloatFeature").__setitem__(
        "float_feature_index", 40)), "float feature 40"),
    "leaf-values-short": (_cb_json_edit(lambda d: d["oblivious_trees"][0]["leaf_values"].pop()), "leaf values"),
    "border-inf": (_cb_json_edit(lambda d: json.dumps(d).replace('"borders": [', '"borders": [1e400, ', 1).encode()),
                   "borders"),
    "nan-literal": (_cb_json_edit(lambda d: json.dumps(d).replace('"leaf_values": [', '"leaf_values": [NaN, ', 1)
                                  .encode()), "NaN, which is not a number"),
    "duplicate-key": (_cb_json_edit(lambda d: json.dumps(d).replace('"oblivious_trees":',
                                                                      '"oblivious_trees": [], "oblivious_trees":', 1)
                                    .encode()), "appears twice"),
    "depth-17": (_cb_json_edit(lambda d: d["oblivious_trees"][0].__setitem__(
        "splits", d["oblivious_trees"][0]["splits"] * 17)), "depth"),
    "ctr-stride": (_cb_json_edit(lambda d: next(iter(d["ctr_data"].values())).__setitem__("hash_stride", 7)),
                   "stride|hash_map"),
    "ctr-hash-text": (_cb_json_edit(lambda d: next(iter(d["ctr_data"].values()))["hash_map"].__setitem__(
        0, "evil")), "hash"),
    "ctr-table-missing": (_cb_json_edit(lambda d: d.__setitem__("ctr_data", {})), "lacks"),
    "million-trees": (_cb_json_edit(lambda d: d.__setitem__("oblivious_trees",
                                                            [{"leaf_values": [0], "splits": []}] * 1_000_000)),
                      "1,000,000 trees"),
    "deep": (lambda: b'{"features_info": {}, "trees": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "too deep"),
    "truncated-0.5": (lambda: cb_file("json")[:len(cb_file("json")) // 2], "not a valid CatBoost JSON"),
    "text-features": (_cb_json_edit(lambda d: d["features_info"].__setitem__("text_features", [{"x": 1}])),
                      "text features are not supported"),
}
