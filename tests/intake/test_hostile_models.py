"""Hostile model files, all generated here: each must be refused with a specific message, never executed, and
never let a raw library exception (or a crash) through."""
import io
import json
import os
import pickle
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tcrex.errors import ModelError, TCRExError
from tcrex.intake import UnsafeModelError, load_model

from . import builders as b

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_pickle_env(monkeypatch):
    monkeypatch.delenv("TCREX_ALLOW_PICKLE", raising=False)


# ---------------------------------------------------------------------------------------------- pickle / joblib
PICKLE_NAMES = ["model.pkl", "model.pickle", "model.joblib", "model.json", "model.onnx", "model.ubj", "model.skops",
                "model", "model.bin"]


@pytest.mark.parametrize("name", PICKLE_NAMES)
def test_pickle_is_refused_and_never_run(tmp_path, name):
    marker = tmp_path / "pwned"
    data = b.evil_pickle(marker, b.sklearn_pipeline())
    with pytest.raises(UnsafeModelError, match=r"refused: .*pickle/joblib.*runs whatever code.*skops.*ONNX") as ei:
        load_model(data, name)
    assert "TCREX_ALLOW_PICKLE=1" in str(ei.value) and "secrets.toml" in str(ei.value)
    assert not marker.exists()


@pytest.mark.parametrize("compress", [0, 3])
@pytest.mark.parametrize("name", ["model.joblib", "model.pkl", "model"])
def test_joblib_is_refused_and_never_run(tmp_path, name, compress):
    marker = tmp_path / "pwned"
    data = b.evil_joblib(marker, b.sklearn_pipeline(), compress=compress)
    with pytest.raises(UnsafeModelError, match="pickle/joblib"):
        load_model(data, name)
    assert not marker.exists()


@pytest.mark.parametrize("name", ["model.json", "model.onnx", "model.skops"])
def test_compressed_joblib_under_a_model_extension_is_not_loaded(tmp_path, name):
    marker = tmp_path / "pwned"
    data = b.evil_joblib(marker, b.sklearn_pipeline(), compress=3)
    with pytest.raises(ModelError, match="compressed"):
        load_model(data, name, allow_pickle=True)  # even when pickles are allowed, a .json is not unpickled
    assert not marker.exists()


@pytest.mark.parametrize("kind", ["pickle", "joblib"])
def test_opted_in_pickle_does_run_and_load(tmp_path, kind):
    marker = tmp_path / "pwned"
    X, y = b.loans()
    pipe = b.sklearn_pipeline(X, y)
    data = b.evil_pickle(marker, pipe) if kind == "pickle" else b.evil_joblib(marker, pipe)
    model = load_model(data, f"m.{'pkl' if kind == 'pickle' else 'joblib'}", allow_pickle=True)
    assert marker.exists()  # the operator switch really is "run the uploader's code"
    assert np.array_equal(model.predict(X), pipe.predict(X))


def test_env_switch_allows_pickle(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    monkeypatch.setenv("TCREX_ALLOW_PICKLE", "true")
    load_model(b.evil_pickle(marker, b.sklearn_pipeline()), "m.pkl")
    assert marker.exists()


@pytest.mark.parametrize("payload", [b"\x80\x04\x95", b"garbage" * 10, b.garbage(2048)], ids=["trunc", "text", "bin"])
def test_broken_pickle_when_allowed_is_a_model_error(payload):
    with pytest.raises(ModelError, match="the pickle could not be loaded") as ei:
        load_model(payload, "m.pkl", allow_pickle=True)
    assert not isinstance(ei.value, UnsafeModelError)


def test_pickle_of_a_non_model():
    with pytest.raises(ModelError, match="has no predict"):
        load_model(pickle.dumps({"not": "a model"}), "m.pkl", allow_pickle=True)


# ---------------------------------------------------------------------------------------------- skops
def test_skops_function_transformer_with_a_user_function():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X = b.numeric()
    pipe = make_pipeline(FunctionTransformer(np.log1p), LogisticRegression()).fit(X.abs(), X.a > 0)
    with pytest.raises(UnsafeModelError, match=r"allow-list.*function numpy\.log1p \(inside FunctionTransformer\)"):
        load_model(b.skops_bytes(pipe), "m.skops")


def test_skops_function_transformer_calling_os_system():
    from sklearn.preprocessing import FunctionTransformer

    data = b.skops_bytes(FunctionTransformer(os.system))
    with pytest.raises(UnsafeModelError, match=r"(posix|os|nt)\.system \(inside FunctionTransformer\)"):
        load_model(data, "m.skops")


def test_skops_custom_class():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    X = b.numeric()
    pipe = make_pipeline(b.CustomScaler(), LogisticRegression()).fit(X, X.a > 0)
    with pytest.raises(UnsafeModelError, match=r"builders\.CustomScaler"):
        load_model(b.skops_bytes(pipe), "m.skops")


def _first(schema, pred):
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


def _lr_skops():
    from sklearn.linear_model import LogisticRegression

    X = b.numeric()
    return b.skops_bytes(LogisticRegression().fit(X, X.a > 0))


SCHEMA_EDITS = {
    # a plain object node retargeted at os.system
    "object-os-system": (lambda s: s.update({"__module__": "os", "__class__": "system"}), r"os\.system"),
    # a JSON value turned into a call of builtins.eval
    "function-eval": (lambda s: _first(s["content"], lambda n: n.get("__loader__") == "JsonNode").update(
        {"__loader__": "FunctionNode", "__module__": "builtins", "__class__": "eval"}), r"function builtins\.eval"),
    "method-node": (lambda s: s.update({"__loader__": "MethodNode"}), r"via skops loader MethodNode"),
    "operator-node": (lambda s: s.update({"__loader__": "OperatorFuncNode"}), "OperatorFuncNode"),
    "type-subprocess": (lambda s: _first(s["content"], lambda n: n.get("__loader__") == "JsonNode").update(
        {"__loader__": "TypeNode", "__module__": "subprocess", "__class__": "Popen"}), r"subprocess\.Popen"),
    "malformed-node": (lambda s: s.update({"__class__": ["LogisticRegression"]}), "a node without a proper class"),
}


def _json_node(value) -> dict:
    return {"__class__": type(value).__name__, "__module__": "builtins", "__loader__": "JsonNode",
            "content": json.dumps(value), "is_json": True}


def _tuple_node(*items) -> dict:
    return {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode", "content": list(items)}


def _constructed(module: str, cls: str, *args) -> dict:
    """An allow-listed type built by calling its constructor (skops' ConstructorFromReduceNode) with ``args``."""
    return {"__class__": cls, "__module__": module, "__loader__": "ConstructorFromReduceNode",
            "content": _tuple_node(*args)}


def _with_attribute(node: dict):
    """A schema edit giving the fitted LogisticRegression one more attribute, ``node`` (skops pairs each key of a
    dict with a key type: one more of those too, or the key is dropped)."""
    def edit(schema):
        attrs = schema["content"]
        attrs["content"]["extra_"] = node
        attrs["key_types"]["content"].append(dict(attrs["key_types"]["content"][0]))
    return edit


# sizes a .skops file declares (issue 29): each is refused before anything is allocated; loaded, each took GBs
SIZE_EDITS = {
    # 2 GB of object pointers (each set to None: touched) from a 1.6 KB file: peaked at ~2 GB before the refusal
    "ndarray-object-250m": (_with_attribute(_constructed(
        "numpy", "ndarray", _tuple_node(_json_node(250_000_000)), _json_node("O"))),
        r"builds numpy\.ndarray by calling its constructor with a declared size of 2,000,000,000 bytes \(1\.9 GB\), "
        r"beyond the limit of 128 MB \(the memory budget of a [\d.]+ KB file"),
    "ndarray-float-2d": (_with_attribute(_constructed(
        "numpy", "ndarray", _tuple_node(_json_node(100_000), _json_node(100_000)), _json_node("f8"))),
        r"declared size of 80,000,000,000 bytes"),
    "ndarray-shape-not-stated": (_with_attribute(_constructed(
        "numpy", "ndarray", {"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode", "content": {}})),
        r"builds numpy\.ndarray by calling its constructor with a size the file does not state"),
    "bytearray-10g": (_with_attribute(_constructed("builtins", "bytearray", _json_node(10**10))),
                      r"builds builtins\.bytearray .* declared size of 10,000,000,000 bytes"),
    "sparse-by-constructor": (_with_attribute(_constructed(
        "scipy.sparse._csr", "csr_matrix", _tuple_node(_json_node(10**9), _json_node(1)))),
        r"builds scipy\.sparse\._csr\.csr_matrix by calling its constructor, which skops never writes"),
}


def _skops_duplicate_schema() -> bytes:
    """A .skops archive with two schema.json members: the second names arrays the archive lacks (issue 29: the
    refusal said "an array node names '….npy', which the archive lacks" instead of saying the archive is
    ambiguous)."""
    import zipfile

    good = _lr_skops()
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


def _skops_big_zeros(mb: int = 300) -> bytes:
    """A real model whose coefficient array is replaced by ``mb`` MB of zeros (a ~300 KB file): under the old
    unpacked-size limit (4 x 200 MB), above the memory budget of its own size."""
    schema, members = b.skops_parts(_lr_skops())
    node = [n for n in b.skops_nodes(schema, loader="NdArrayNode") if n.get("type") == "numpy"][0]
    members[node["file"]] = b.npy_bytes(np.zeros((1, mb * 2**20 // 8)))
    return b.zip_bytes({"schema.json": json.dumps(schema), **members})


@pytest.mark.parametrize("case", list(SIZE_EDITS))
def test_skops_declared_sizes_are_refused_before_allocating(case):
    edit, pattern = SIZE_EDITS[case]
    data = b.rewrite_skops_schema(_lr_skops(), edit)
    assert len(data) < 10_000
    with pytest.raises(ModelError, match=pattern):
        load_model(data, "m.skops", sandbox=False)


def test_skops_arrays_count_against_the_memory_budget_of_the_file():
    data = _skops_big_zeros()
    assert len(data) < 2_000_000
    with pytest.raises(ModelError, match=r"arrays would take more than 128 MB once loaded .* the limit is 128 MB "
                                         r"\(the memory budget of a [\d.]+ KB file: the larger of 128 MB and 50 x"):
        load_model(data, "m.skops", sandbox=False)


def test_skops_archive_with_two_schemas_is_ambiguous():
    with pytest.raises(ModelError, match=r"the \.skops archive is ambiguous or damaged: it holds 2 members named "
                                         r"'schema\.json'"):
        load_model(_skops_duplicate_schema(), "m.skops", sandbox=False)


def test_a_real_constructor_call_still_loads():
    """skops writes some allow-listed values as constructor calls (complex numbers): those still load."""
    from sklearn.linear_model import LogisticRegression

    X = b.numeric()
    est = LogisticRegression().fit(X, X.a > 0)
    est.extra_ = range(3)  # skops writes it as a constructor call: range(0, 3, 1)

    def as_complex(schema):  # this skops cannot write a complex itself; the same node, for complex(1.0, 2.0)
        node = schema["content"]["content"]["extra_"]
        assert node["__loader__"] == "ConstructorFromReduceNode"
        node["__class__"] = "complex"
        node["content"]["content"] = [{**node["content"]["content"][0], "__class__": "float", "content": v}
                                      for v in ("1.0", "2.0")]

    model = load_model(b.rewrite_skops_schema(b.skops_bytes(est), as_complex), "m.skops", sandbox=False)
    assert model.predict(X).shape == (len(X),)


@pytest.mark.parametrize("case", list(SCHEMA_EDITS))
def test_skops_schema_edited_by_hand(case):
    edit, pattern = SCHEMA_EDITS[case]
    data = b.rewrite_skops_schema(_lr_skops(), edit)
    with pytest.raises(UnsafeModelError, match=pattern):
        load_model(data, "m.skops")


def test_skops_deeply_nested_schema():
    def edit(s):
        node = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": []}
        for _ in range(300):
            node = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": [node]}
        s["content"]["content"]["nested"] = node

    with pytest.raises(UnsafeModelError, match="nesting deeper"):
        load_model(b.rewrite_skops_schema(_lr_skops(), edit), "m.skops")


def test_skops_zip_bomb_is_refused_before_unpacking():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("schema.json", "{}")
        z.writestr("big.npy", b"\0" * 20_000_000)
    data = buf.getvalue()
    assert len(data) < 100_000
    with pytest.raises(ModelError, match=r"unpacks to 20 MB; the limit is 1 MB \(a zip bomb"):
        load_model(data, "m.skops", max_bytes=250_000)


@pytest.mark.parametrize("case,data,pattern", [
    ("no-schema", "zip-without-schema", "has no schema.json"),
    ("bad-json", "zip-bad-json", "schema.json is not valid JSON"),
    ("not-a-zip", b"definitely not a zip", "not a zip archive"),
    ("garbage", b.garbage(), "not a zip archive"),
])
def test_skops_broken_archives(case, data, pattern):
    if data == "zip-without-schema":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("other.txt", "x")
        data = buf.getvalue()
    elif data == "zip-bad-json":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("schema.json", "{not json")
        data = buf.getvalue()
    with pytest.raises(ModelError, match=pattern):
        load_model(data, "m.skops")


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.99])
def test_skops_truncated(fraction):
    data = b.skops_bytes(b.sklearn_pipeline())
    with pytest.raises(ModelError, match=r"not a valid \.skops file|could not be loaded"):
        load_model(data[:int(len(data) * fraction)], "m.skops")


# ---------------------------------------------------------------------------------------------- ONNX
@pytest.mark.parametrize("location", ["weights.bin", "../../etc/passwd", "/etc/passwd"])
def test_onnx_external_data_is_refused(location):
    data = b.onnx_bytes(b.onnx_external_data(location))
    with pytest.raises(UnsafeModelError, match=rf"external file\(s\) \(W -> '{location}'\)"):
        load_model(data, "m.onnx")


def test_onnx_external_data_hidden_in_a_subgraph():
    with pytest.raises(UnsafeModelError, match=r"hidden -> '\.\./\.\./secrets\.bin'"):
        load_model(b.onnx_bytes(b.onnx_external_in_subgraph()), "m.onnx")


@pytest.mark.parametrize("domain", ["com.evil.ops", "com.microsoft", "ai.onnx.contrib"])
def test_onnx_custom_operator_domain_is_refused(domain):
    with pytest.raises(UnsafeModelError, match=rf"non-standard operator domain\(s\) .*{domain}"):
        load_model(b.onnx_bytes(b.onnx_custom_domain(domain)), "m.onnx")


def test_onnx_custom_function_domain_is_refused():
    with pytest.raises(UnsafeModelError, match=r"my\.funcs"):
        load_model(b.onnx_bytes(b.onnx_custom_function()), "m.onnx")


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.7, 0.95])
def test_onnx_truncated(fraction):
    data = b.onnx_bytes(b.onnx_linear_classifier())
    with pytest.raises(ModelError, match=r"not a valid ONNX model|ONNX model is not valid|ONNX Runtime could not"):
        load_model(data[:int(len(data) * fraction)], "m.onnx")


@pytest.mark.parametrize("seed", range(4))
def test_onnx_garbage(seed):
    with pytest.raises(ModelError, match="ONNX"):
        load_model(b.garbage(seed=seed), "m.onnx")


def test_onnx_with_no_graph():
    import onnx

    with pytest.raises(ModelError, match="no graph"):
        load_model(onnx.ModelProto(ir_version=8).SerializeToString(), "m.onnx")


# ---------------------------------------------------------------------------------------------- XGBoost
def _xgb_doc():
    data, _, _ = b.xgb_classifier(n_estimators=3)
    return json.loads(data)


def _tree(d, k=0):
    return d["learner"]["gradient_booster"]["model"]["trees"][k]


# each of these crashes or hangs XGBoost 3.2 itself when loaded unchecked (segfault at predict, or unbounded
# allocation), or is otherwise inconsistent; all must be refused before XGBoost sees them
XGB_MUTATIONS = {
    "child-out-of-range": (lambda d: _tree(d)["left_children"].__setitem__(0, 10**6), "points outside the tree"),
    "child-negative": (lambda d: _tree(d)["right_children"].__setitem__(0, -7), "points outside the tree"),
    "loop-to-root": (lambda d: _tree(d)["left_children"].__setitem__(0, 0), "points outside the tree"),
    "shared-child": (lambda d: _tree(d)["right_children"].__setitem__(0, _tree(d)["left_children"][0]),
                     "child of two nodes"),
    "one-child": (lambda d: _tree(d)["right_children"].__setitem__(0, -1), "exactly one child"),
    "split-feature-out-of-range": (lambda d: _tree(d)["split_indices"].__setitem__(0, 10**6),
                                   "feature index 1000000, but the model has 3 features"),
    "tree-id": (lambda d: _tree(d).__setitem__("id", 77), "tree ids must be their positions"),
    "num-class-huge": (lambda d: d["learner"]["learner_model_param"].__setitem__("num_class", "1000000000"),
                       r"num_class = 1000000000 is out of range"),
    "num-feature-mismatch": (lambda d: d["learner"]["learner_model_param"].__setitem__("num_feature", "2"),
                             "3 feature names for 2 features"),
    "tree-info": (lambda d: d["learner"]["gradient_booster"]["model"].__setitem__("tree_info", [4, 4, 4]),
                  "output group 4"),
    "num-trees": (lambda d: d["learner"]["gradient_booster"]["model"]["gbtree_model_param"].__setitem__(
        "num_trees", "99"), "num_trees does not match"),
    "array-length": (lambda d: _tree(d)["split_conditions"].pop(), "split_conditions has"),
    "num-nodes": (lambda d: _tree(d)["tree_param"].__setitem__("num_nodes", "100000"), "left_children has"),
    "string-for-number": (lambda d: _tree(d)["left_children"].__setitem__(0, "1"), "list of numbers"),
    "category-code": (lambda d: _tree(d).__setitem__("categories", [10**5] * len(_tree(d)["categories"]) or [10**5]),
                      "categor"),
    "cats-offsets": (lambda d: d["learner"]["gradient_booster"]["model"]["cats"]["enc"][2].__setitem__(
        "offsets", [0, 5, 3, 999]), "string offsets are inconsistent"),
    "cats-sorted-idx": (lambda d: d["learner"]["gradient_booster"]["model"]["cats"].__setitem__(
        "sorted_idx", [7, 7, 7]), "sorted_idx"),
    "vector-leaf": (lambda d: _tree(d)["tree_param"].__setitem__("size_leaf_vector", "3"), "multi-output"),
    "multi-target": (lambda d: d["learner"]["learner_model_param"].__setitem__("num_target", "2"), "2 targets"),
    "booster-name": (lambda d: d["learner"]["gradient_booster"].__setitem__("name", "evil"), "unknown booster"),
    "best-iteration": (lambda d: d["learner"]["attributes"].__setitem__("best_iteration", "500"), "best_iteration"),
    "feature-type": (lambda d: d["learner"]["feature_types"].__setitem__(0, "pickle"), "unknown feature type"),
}


@pytest.mark.parametrize("case", list(XGB_MUTATIONS))
def test_xgboost_structure_is_checked(case):
    edit, pattern = XGB_MUTATIONS[case]
    d = _xgb_doc()
    edit(d)
    data = json.dumps(d).encode()
    with pytest.raises(ModelError, match=pattern) as ei:
        load_model(data, "m.json")
    assert "damaged or was edited by hand" in str(ei.value)


def _ubj_with_count(count: int) -> bytes:
    import struct

    return b"{L" + struct.pack(">q", 7) + b"learner[$D#L" + struct.pack(">q", count) + b"\0" * 16 + b"}"


def _ubj_true_bomb(containers: int = 250, count: int = 1_000_000) -> bytes:
    """``containers`` typed containers of ``count`` ``T`` each (2.9 KB for 250 x 1,000,000): each under the bound
    per container, together 250 million list slots (~1.9 GB) before the budget for the whole file (issue 29)."""
    import struct

    one = b"[$T#l" + struct.pack(">i", count)
    return b"{L" + struct.pack(">q", 7) + b"learner[" + one * containers + b"]}"


@pytest.mark.parametrize("case,data,pattern", [
    ("ubj-true-bomb", _ubj_true_bomb(), "declares 1,000,000 elements of null/true/false, which take no bytes; the "
                                        "file may hold at most 1,000,000 such elements in all"),
    ("json-no-learner", b'{"hello": 1}', "no 'learner' object"),
    ("json-truncated", None, "looks truncated"),
    ("json-deep", b"{\"learner\": " + b"[" * 100_000 + b"]" * 100_000 + b"}", "nesting is too deep|not valid"),
    ("json-not-utf8", b'{"learner": "\xff\xfe"}', "not UTF-8"),
    ("json-tcrex-rules", b'{"format": "tcrex-rules", "version": 1}', "no 'learner' object"),
    ("ubj-huge-count", _ubj_with_count(2**60), "declares 1152921504606846976 elements"),
    ("ubj-bad-marker", b"{L\x00\x00\x00\x00\x00\x00\x00\x01a\x07}", "unknown marker"),
    ("ubj-duplicate-key", b"{i\x01aTi\x01aF}", "duplicate key"),
    ("ubj-deep", b"{i\x01a" + b"[" * 200 + b"]" * 200 + b"}", "nesting deeper than 64"),
    ("ubj-trailing", b"{i\x01aT}junk", "unexpected byte"),
])
def test_xgboost_parse_failures(case, data, pattern):
    if data is None:
        full, _, _ = b.xgb_classifier(n_estimators=3)
        data = full[: len(full) // 2]
    name = "m.ubj" if case.startswith("ubj") else "m.json"
    with pytest.raises(ModelError, match=pattern):
        load_model(data, name)


@pytest.mark.parametrize("fmt", ["json", "ubj"])
@pytest.mark.parametrize("fraction", [0.01, 0.25, 0.5, 0.75, 0.999])
def test_xgboost_truncated(fmt, fraction):
    data, _, _ = b.xgb_classifier(fmt=fmt, n_estimators=3)
    with pytest.raises(ModelError, match="not a valid XGBoost|not an XGBoost"):
        load_model(data[:max(1, int(len(data) * fraction))], f"m.{fmt}")


@pytest.mark.parametrize("name", ["m.json", "m.ubj", "m.skops", "m.onnx", "m"])
@pytest.mark.parametrize("seed", range(3))
def test_binary_garbage_with_model_extensions(name, seed):
    with pytest.raises(ModelError) as ei:
        load_model(b.garbage(seed=seed), name)
    assert not isinstance(ei.value, UnsafeModelError) or "pickle" in str(ei.value)


FUZZ_SCRIPT = r"""
import copy, json, random, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from tcrex.errors import TCRExError
from tcrex.intake import load_model
from tests.intake import builders as b
data, _, Xc = b.xgb_classifier(n_estimators=4)
X = Xc.copy(); X["job"] = X["job"].astype(str)
base = json.loads(data)
ubj, _, _ = b.xgb_classifier(n_estimators=4, fmt="ubj")
def leaves(o, path=()):
    if isinstance(o, dict):
        for k, v in o.items(): yield from leaves(v, path + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o): yield from leaves(v, path + (i,))
    else: yield path
paths = list(leaves(base))
values = [0, 1, -1, 2, 3, 5, 7, 8, 15, 16, 31, 33, 64, 255, 256, 65535, 65536, 2**31, -2**31, 1e300, "1", None]
rng = random.Random(int(sys.argv[2]))
refused = loaded = 0
for i in range(int(sys.argv[3])):
    d = copy.deepcopy(base)
    for _ in range(rng.randint(1, 3)):
        p = rng.choice(paths); o = d
        for k in p[:-1]: o = o[k]
        o[p[-1]] = rng.choice(values)
    for raw, name in ((json.dumps(d).encode(), "m.json"), (None, "m.ubj")):
        if raw is None:
            buf = bytearray(ubj)
            for _ in range(rng.randint(1, 4)):
                buf[rng.randrange(len(buf))] = rng.randrange(256)
            raw = bytes(buf)
        try:
            load_model(raw, name).predict(X)
            loaded += 1
        except TCRExError:
            refused += 1
print(loaded, refused)
"""


@pytest.mark.slow  # fuzzes models in workers: `make test`, not `make test-fast`
def test_mutated_xgboost_models_never_crash_the_process(tmp_path):
    """Random mutations of a real model (JSON values, UBJSON bytes), in a child process: a segfault or an escaped
    exception shows up as a non-zero exit code instead of killing the test run."""
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(REPO), "7", "150"], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded, refused = map(int, proc.stdout.split())
    assert loaded + refused == 300 and refused > 0


# ---------------------------------------------------------------------------------------------- limits and oddities
@pytest.mark.parametrize("maker,name", [
    (lambda: b.xgb_classifier()[0], "m.json"), (lambda: b.xgb_classifier(fmt="ubj")[0], "m.ubj"),
    (lambda: b.skops_bytes(b.sklearn_pipeline()), "m.skops"), (lambda: b.onnx_bytes(b.onnx_regressor()), "m.onnx"),
    (lambda: pickle.dumps(b.sklearn_pipeline()), "m.pkl"),
])
def test_size_limit(maker, name):
    data = maker()
    with pytest.raises(ModelError, match=r"MB; the limit for \w+ models is 0 MB"):
        load_model(data, name, max_bytes=len(data) - 1, allow_pickle=True)
    with pytest.raises(ModelError, match="the limit"):
        load_model(data, name, max_bytes={"xgboost": 10, "sklearn": 10, "onnx": 10, "pickle": 10}, allow_pickle=True)


@pytest.mark.parametrize("data,name,pattern", [
    (b"", "m.json", "is empty"),
    (b"binf" + b"\0" * 100, "m.bst", "old binary XGBoost"),
    (b"PK\x03\x04" + b"\0" * 100, "m.pt", r"\.pt models are not supported; export the model to ONNX"),
    (b"\x89HDF\r\n", "m.h5", "not supported"),
    (b"hello world", "m.txt", "cannot tell what kind of model"),
    (b"\x1f\x8b\x08\x00" + b"\0" * 20, "m.json", "gzip-compressed"),
    (b"PK\x03\x04" + b"\0" * 100, "m.onnx", "zip archive"),
])
def test_unsupported_or_misnamed_files(data, name, pattern):
    with pytest.raises(ModelError, match=pattern):
        load_model(data, name)


def test_non_bytes_input():
    with pytest.raises(ModelError, match="needs the file's bytes"):
        load_model("a string", "m.json")


def test_every_refusal_is_a_tcrex_error():
    assert issubclass(UnsafeModelError, ModelError) and issubclass(UnsafeModelError, TCRExError)


@pytest.mark.slow  # every hostile input in workers: `make test`, not `make test-fast`
def test_hostile_inputs_leave_no_files_behind(tmp_path, monkeypatch):
    """Loading never writes to disk (uploads stay in memory): run a few loads in an empty working directory."""
    monkeypatch.chdir(tmp_path)
    load_model(b.onnx_bytes(b.onnx_linear_classifier()), "m.onnx")
    load_model(b.skops_bytes(b.sklearn_pipeline()), "m.skops")
    load_model(b.xgb_classifier()[0], "m.json")
    with pytest.raises(UnsafeModelError):
        load_model(b.onnx_bytes(b.onnx_external_data("weights.bin")), "m.onnx")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------- XGBoost's own errors
BASE_SCORES = ["[2E0]", "2", "[-1E0]", "[0E0]", "[1E0]", "nan", "[nan]", "[inf]", "-inf", "1e400", "[]", "[5E-1,5E-1]",
               "abc", "", "[", "5E-1]", 0.5, 2, None, [0.5], {"a": 1}, True]

BASE_SCORE_SCRIPT = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 1024 ** 3, resource.RLIM_INFINITY))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
sys.path.insert(0, sys.argv[1])
from tcrex.errors import TCRExError
from tcrex.intake import load_model
from tests.intake import builders as b
values = json.loads(sys.argv[2])
for objective in ("binary", "regression"):
    if objective == "binary":
        data, _, X = b.xgb_classifier(n_estimators=3, categorical=False)
    else:
        data, _ = b.xgb_regressor()
        X = b.numeric()
    for v in values:
        d = json.loads(data)
        d["learner"]["learner_model_param"]["base_score"] = v
        try:
            out = load_model(json.dumps(d).encode(), "m.json", sandbox=False).predict(X)
            result = ["loaded", str(out[:2])]
        except TCRExError as exc:
            result = [type(exc).__name__, str(exc)]
        print(json.dumps([objective, v] + result), flush=True)
"""


@pytest.mark.slow  # models in workers: `make test`, not `make test-fast`
def test_odd_base_scores_are_model_errors_without_server_paths(tmp_path):
    """XGBoost reads base_score lazily and raises its own error (with a source path and a stack trace) at first
    use; every such error must be a ModelError at load, in plain words. Run in a child process: XGBoost is native."""
    script = tmp_path / "base_score.py"
    script.write_text(BASE_SCORE_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(REPO), json.dumps(BASE_SCORES)], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 2 * len(BASE_SCORES)
    outcomes = {(o, json.dumps(v)): (kind, msg) for o, v, kind, msg in rows}
    assert outcomes[("binary", '"[2E0]"')][0] == "ModelError"  # raised a raw XGBoostError before
    assert outcomes[("binary", '"nan"')][0] == "ModelError"  # predicted NaN for every row before
    for (objective, value), (kind, msg) in outcomes.items():
        assert kind in ("loaded", "ModelError"), (objective, value, kind, msg)
        if kind == "ModelError":
            for leak in ("Stack trace", ".cc:", "[bt]", "site-packages", "libxgboost", "xgboost::"):
                assert leak not in msg, (objective, value, msg)
