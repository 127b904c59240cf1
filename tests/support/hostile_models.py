"""Hostile model files for the intake tests and the hostile-input corpus (tests/support/hostile_corpus.py), each with
the pattern its refusal must match: .skops schemas edited by hand (``SCHEMA_EDITS``), sizes a .skops file declares
(``SIZE_EDITS``), XGBoost documents edited into inconsistency (``XGB_MUTATIONS``) and UBJSON bombs."""
from __future__ import annotations

import io
import json
import warnings

import numpy as np

from tests.support import builders as b


def first_node(schema, pred):
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if pred(node):
                return node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    raise AssertionError("no such node")


def lr_skops():
    from sklearn.linear_model import LogisticRegression

    X = b.numeric()
    return b.skops_bytes(LogisticRegression().fit(X, X.a > 0))


SCHEMA_EDITS = {
    # a plain object node retargeted at os.system
    "object-os-system": (lambda s: s.update({"__module__": "os", "__class__": "system"}), r"os\.system"),
    # a JSON value turned into a call of builtins.eval
    "function-eval": (lambda s: first_node(s["content"], lambda n: n.get("__loader__") == "JsonNode").update(
        {"__loader__": "FunctionNode", "__module__": "builtins", "__class__": "eval"}), r"function builtins\.eval"),
    "method-node": (lambda s: s.update({"__loader__": "MethodNode"}), r"via skops loader MethodNode"),
    "operator-node": (lambda s: s.update({"__loader__": "OperatorFuncNode"}), "OperatorFuncNode"),
    "type-subprocess": (lambda s: first_node(s["content"], lambda n: n.get("__loader__") == "JsonNode").update(
        {"__loader__": "TypeNode", "__module__": "subprocess", "__class__": "Popen"}), r"subprocess\.Popen"),
    "malformed-node": (lambda s: s.update({"__class__": ["LogisticRegression"]}), "a node without a proper class"),
}


def json_node(value) -> dict:
    return {"__class__": type(value).__name__, "__module__": "builtins", "__loader__": "JsonNode",
            "content": json.dumps(value), "is_json": True}


def tuple_node(*items) -> dict:
    return {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode", "content": list(items)}


def constructed(module: str, cls: str, *args) -> dict:
    """An allow-listed type built by calling its constructor (skops' ConstructorFromReduceNode) with ``args``."""
    return {"__class__": cls, "__module__": module, "__loader__": "ConstructorFromReduceNode",
            "content": tuple_node(*args)}


def with_attribute(node: dict):
    """A schema edit giving the fitted LogisticRegression one more attribute, ``node`` (skops pairs each key of a
    dict with a key type: one more of those too, or the key is dropped)."""
    def edit(schema):
        attrs = schema["content"]
        attrs["content"]["extra_"] = node
        attrs["key_types"]["content"].append(dict(attrs["key_types"]["content"][0]))
    return edit


# sizes a .skops file declares: each is refused before anything is allocated; loaded, each took GBs
SIZE_EDITS = {
    # 2 GB of object pointers (each set to None: touched) from a 1.6 KB file: peaked at ~2 GB before the refusal
    "ndarray-object-250m": (with_attribute(constructed(
        "numpy", "ndarray", tuple_node(json_node(250_000_000)), json_node("O"))),
        r"builds numpy\.ndarray by calling its constructor with a declared size of 2,000,000,000 bytes \(1\.9 GB\), "
        r"beyond the limit of 128 MB \(the memory budget of a [\d.]+ KB file"),
    "ndarray-float-2d": (with_attribute(constructed(
        "numpy", "ndarray", tuple_node(json_node(100_000), json_node(100_000)), json_node("f8"))),
        r"declared size of 80,000,000,000 bytes"),
    "ndarray-shape-not-stated": (with_attribute(constructed(
        "numpy", "ndarray", {"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode", "content": {}})),
        r"builds numpy\.ndarray by calling its constructor with a size the file does not state"),
    "bytearray-10g": (with_attribute(constructed("builtins", "bytearray", json_node(10**10))),
                      r"builds builtins\.bytearray .* declared size of 10,000,000,000 bytes"),
    "sparse-by-constructor": (with_attribute(constructed(
        "scipy.sparse._csr", "csr_matrix", tuple_node(json_node(10**9), json_node(1)))),
        r"builds scipy\.sparse\._csr\.csr_matrix by calling its constructor, which skops never writes"),
}


def skops_duplicate_schema() -> bytes:
    """A .skops archive with two schema.json members: the second names arrays the archive lacks (the
    refusal said "an array node names '….npy', which the archive lacks" instead of saying the archive is
    ambiguous)."""
    import zipfile

    good = lr_skops()
    src = zipfile.ZipFile(io.BytesIO(good))
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name: that is the point
        with zipfile.ZipFile(out, "w") as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info.filename))
            other = json.loads(src.read("schema.json"))
            for node in b.skops_nodes(other, loader="NdArrayNode"):
                if "file" in node:
                    node["file"] = "other-" + node["file"]
            dst.writestr("schema.json", json.dumps(other))
    return out.getvalue()


def skops_big_zeros(mb: int = 300) -> bytes:
    """A real model whose coefficient array is replaced by ``mb`` MB of zeros (a ~300 KB file): under the old
    unpacked-size limit (4 x 200 MB), above the memory budget of its own size."""
    schema, members = b.skops_parts(lr_skops())
    node = [n for n in b.skops_nodes(schema, loader="NdArrayNode") if n.get("type") == "numpy"][0]
    members[node["file"]] = b.npy_bytes(np.zeros((1, mb * 2**20 // 8)))
    return b.zip_bytes({"schema.json": json.dumps(schema), **members})


# ---------------------------------------------------------------------------------------------- XGBoost
def xgb_doc():
    data, _, _ = b.xgb_classifier(n_estimators=3)
    return json.loads(data)


def xgb_tree(d, k=0):
    return d["learner"]["gradient_booster"]["model"]["trees"][k]


# each of these crashes or hangs XGBoost 3.2 itself when loaded unchecked (segfault at predict, or unbounded
# allocation), or is otherwise inconsistent; all must be refused before XGBoost sees them
XGB_MUTATIONS = {
    "child-out-of-range": (lambda d: xgb_tree(d)["left_children"].__setitem__(0, 10**6), "points outside the tree"),
    "child-negative": (lambda d: xgb_tree(d)["right_children"].__setitem__(0, -7), "points outside the tree"),
    "loop-to-root": (lambda d: xgb_tree(d)["left_children"].__setitem__(0, 0), "points outside the tree"),
    "shared-child": (lambda d: xgb_tree(d)["right_children"].__setitem__(0, xgb_tree(d)["left_children"][0]),
                     "child of two nodes"),
    "one-child": (lambda d: xgb_tree(d)["right_children"].__setitem__(0, -1), "exactly one child"),
    "split-feature-out-of-range": (lambda d: xgb_tree(d)["split_indices"].__setitem__(0, 10**6),
                                   "feature index 1000000, but the model has 3 features"),
    "tree-id": (lambda d: xgb_tree(d).__setitem__("id", 77), "tree ids must be their positions"),
    "num-class-huge": (lambda d: d["learner"]["learner_model_param"].__setitem__("num_class", "1000000000"),
                       r"num_class = 1000000000 is out of range"),
    "num-feature-mismatch": (lambda d: d["learner"]["learner_model_param"].__setitem__("num_feature", "2"),
                             "3 feature names for 2 features"),
    "tree-info": (lambda d: d["learner"]["gradient_booster"]["model"].__setitem__("tree_info", [4, 4, 4]),
                  "output group 4"),
    "num-trees": (lambda d: d["learner"]["gradient_booster"]["model"]["gbtree_model_param"].__setitem__(
        "num_trees", "99"), "num_trees does not match"),
    "array-length": (lambda d: xgb_tree(d)["split_conditions"].pop(), "split_conditions has"),
    "num-nodes": (lambda d: xgb_tree(d)["tree_param"].__setitem__("num_nodes", "100000"), "left_children has"),
    "string-for-number": (lambda d: xgb_tree(d)["left_children"].__setitem__(0, "1"), "list of numbers"),
    "category-code": (lambda d: xgb_tree(d).__setitem__("categories", [10**5] * len(xgb_tree(d)["categories"]) or [10**5]),
                      "categor"),
    "cats-offsets": (lambda d: d["learner"]["gradient_booster"]["model"]["cats"]["enc"][2].__setitem__(
        "offsets", [0, 5, 3, 999]), "string offsets are inconsistent"),
    "cats-sorted-idx": (lambda d: d["learner"]["gradient_booster"]["model"]["cats"].__setitem__(
        "sorted_idx", [7, 7, 7]), "sorted_idx"),
    "vector-leaf": (lambda d: xgb_tree(d)["tree_param"].__setitem__("size_leaf_vector", "3"), "multi-output"),
    "multi-target": (lambda d: d["learner"]["learner_model_param"].__setitem__("num_target", "2"), "2 targets"),
    "booster-name": (lambda d: d["learner"]["gradient_booster"].__setitem__("name", "evil"), "unknown booster"),
    "best-iteration": (lambda d: d["learner"]["attributes"].__setitem__("best_iteration", "500"), "best_iteration"),
    "feature-type": (lambda d: d["learner"]["feature_types"].__setitem__(0, "pickle"), "unknown feature type"),
}


def ubj_with_count(count: int) -> bytes:
    import struct

    return b"{L" + struct.pack(">q", 7) + b"learner[$D#L" + struct.pack(">q", count) + b"\0" * 16 + b"}"


def ubj_true_bomb(containers: int = 250, count: int = 1_000_000) -> bytes:
    """``containers`` typed containers of ``count`` ``T`` each (2.9 KB for 250 x 1,000,000): each under the bound
    per container, together 250 million list slots (~1.9 GB) before the budget for the whole file."""
    import struct

    one = b"[$T#l" + struct.pack(">i", count)
    return b"{L" + struct.pack(">q", 7) + b"learner[" + one * containers + b"]}"
