"""Hostile scikit-learn models through skops, generated here: damaged tree arrays, object arrays, arrays larger than
their file and arrays referenced many times. scikit-learn's tree code trusts its node arrays (a bad child index is
a segmentation fault, a loop a hang), so every case that reaches native code runs in a child process with a memory
limit (RLIMIT_AS) and a time limit: a crash or a hang fails the test instead of killing the test run."""
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tcrex.errors import ModelError
from tcrex.intake import UnsafeModelError, load_model

from tests.support import builders as b

pytestmark = pytest.mark.slow  # damaged models fuzzed in sandboxed workers: `make test`, not `make test-fast`

REPO = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------------------------------- models
MODELS = {
    "tree": "from sklearn.tree import DecisionTreeClassifier as M; kw = dict(max_depth=4)",
    "tree-regressor": "from sklearn.tree import DecisionTreeRegressor as M; kw = dict(max_depth=4)",
    "forest": "from sklearn.ensemble import RandomForestClassifier as M; kw = dict(n_estimators=3, max_depth=3)",
    "extra-trees": "from sklearn.ensemble import ExtraTreesRegressor as M; kw = dict(n_estimators=3, max_depth=3)",
    "gradient-boosting": "from sklearn.ensemble import GradientBoostingClassifier as M; "
                         "kw = dict(n_estimators=3, max_depth=2)",
    "hist-gb": "from sklearn.ensemble import HistGradientBoostingClassifier as M; kw = dict(max_iter=3)",
    "hist-gb-categorical": "from sklearn.ensemble import HistGradientBoostingClassifier as M; "
                           "kw = dict(max_iter=3, categorical_features='from_dtype')",
}


def _fit(kind: str):
    scope = {}
    exec(MODELS[kind], scope)
    X, y = b.loans()
    if kind == "hist-gb-categorical":
        X = X.assign(job=X.job.astype("category"))
    else:
        X = X.assign(job=(X.job == "manager").astype(float))
    if "regressor" in kind or "extra" in kind:
        y = X.income.to_numpy() + X.age.to_numpy()
    return scope["M"](random_state=0, **scope["kw"]).fit(X, y), X


def _tree_nodes(schema):
    """The schema nodes of every sklearn Tree (TreeNode) and every histogram-GB TreePredictor."""
    return b.skops_nodes(schema, loader="TreeNode") + b.skops_nodes(schema, cls="TreePredictor")


def _nodes_array(schema, members, k=0):
    node = _tree_nodes(schema)[k]
    name = node["content"]["content"]["nodes"]["file"]
    return node, name, b.npy_load(members[name])


def _field(arr, sk, hist):
    return sk if sk in arr.dtype.names else hist


def _internal(arr):
    return np.flatnonzero(arr["is_leaf"] == 0) if "is_leaf" in arr.dtype.names else np.flatnonzero(
        arr["left_child"] != -1)


def _mutate_nodes(edit):
    """A case that edits the node array of the first tree: ``edit(arr)`` changes it in place."""
    def apply(schema, members):
        _, name, arr = _nodes_array(schema, members)
        arr = arr.copy()
        edit(arr)
        members[name] = b.npy_bytes(arr)
    return apply


def _left(arr):
    return _field(arr, "left_child", "left")


def _right(arr):
    return _field(arr, "right_child", "right")


def _feature(arr):
    return _field(arr, "feature", "feature_idx")


def _threshold(arr):
    return _field(arr, "threshold", "num_threshold")


def _numeric_split(arr):
    internal = _internal(arr)
    if "is_categorical" in arr.dtype.names:
        internal = internal[arr["is_categorical"][internal] == 0]
    return internal[0]


def _set_child(arr, which, value_of):
    node = _internal(arr)[-1]  # the deepest split listed last: its children are leaves
    arr[which(arr)][node] = value_of(arr, node)


def _parent_of_deepest(arr):
    node = _internal(arr)[-1]
    left, right = arr[_left(arr)], arr[_right(arr)]
    return int(np.flatnonzero((left == node) | (right == node))[0]) if node else 0


# every case: (edit, words the refusal must contain); each would crash, hang or mis-predict unchecked
TREE_CASES = {
    "child-1e6": (_mutate_nodes(lambda a: _set_child(a, _left, lambda a, n: 10**6)), "points outside the tree"),
    "child-negative": (_mutate_nodes(lambda a: _set_child(a, _right, lambda a, n: 0 if "left" in a.dtype.names
                                                          else -5)), "points outside|reached twice"),
    "self-loop": (_mutate_nodes(lambda a: _set_child(a, _left, lambda a, n: n)), "reached twice|points outside"),
    "loop-to-root": (_mutate_nodes(lambda a: _set_child(a, _right, lambda a, n: 0)), "points outside"),
    "back-to-parent": (_mutate_nodes(lambda a: _set_child(a, _left, lambda a, n: _parent_of_deepest(a))),
                       "reached twice|points outside"),
    "shared-child": (_mutate_nodes(lambda a: _set_child(a, _right, lambda a, n: a[_left(a)][n])), "reached twice"),
    "feature-1e6": (_mutate_nodes(lambda a: a[_feature(a)].__setitem__(_internal(a)[0], 10**6)),
                    "feature index 1000000"),
    "feature-negative": (_mutate_nodes(lambda a: a[_feature(a)].__setitem__(_internal(a)[0], -3)),
                         "feature index -3"),
    "threshold-nan": (_mutate_nodes(lambda a: a[_threshold(a)].__setitem__(_numeric_split(a), np.nan)), "NaN"),
}


def _node_count(schema, members):
    """node_count below the nodes held: prediction would walk nodes the value array does not cover (sklearn clips
    the leaf index: silently wrong outputs). Above them sklearn itself clips node_count to the array."""
    node = b.skops_nodes(schema, loader="TreeNode")[0]
    node["content"]["content"]["node_count"].update({"content": "1", "__id__": 1})


def _n_features(schema, members):
    node = b.skops_nodes(schema, loader="TreeNode")[0]
    node["__reduce__"]["args"]["content"][0].update({"content": "1", "__id__": 2})


SK_ONLY = {
    "node-count-too-small": (_node_count, "points outside the tree's 1 nodes"),
    "tree-n-features": (_n_features, "built for 1 input|the model has 1 input"),
    "one-child": (_mutate_nodes(lambda a: _set_child(a, _right, lambda a, n: -1)), "exactly one child"),
}


def _bitset_idx(schema, members):
    for k, _ in enumerate(_tree_nodes(schema)):  # the first tree with a categorical split
        node, name, arr = _nodes_array(schema, members, k)
        cat = np.flatnonzero((arr["is_categorical"] != 0) & (arr["is_leaf"] == 0))
        if len(cat):
            break
    assert len(cat), "the categorical model has no categorical split"
    arr = arr.copy()
    arr["bitset_idx"][cat[0]] = 10**6
    members[name] = b.npy_bytes(arr)


def _categorical_on_numeric(schema, members):
    node, name, arr = _nodes_array(schema, members)
    arr = arr.copy()
    arr["is_categorical"][_internal(arr)[0]] = 1
    arr["feature_idx"][_internal(arr)[0]] = 2  # the preprocessor puts categorical columns first: 2 is numeric
    members[name] = b.npy_bytes(arr)


def _bitset_width(schema, members):
    node = _tree_nodes(schema)[0]
    name = node["content"]["content"]["raw_left_cat_bitsets"]["file"]
    members[name] = b.npy_bytes(np.zeros((1, 2), dtype=np.uint32))


HIST_ONLY = {
    "bitset-index": (_bitset_idx, "outside its category bitsets"),
    "categorical-split-on-numeric": (_categorical_on_numeric, "not categorical|outside its category bitsets"),
    "bitset-width": (_bitset_width, "raw_left_cat_bitsets must be"),
}


def _cases():
    out = []
    for kind in MODELS:
        for name in TREE_CASES:
            out.append((kind, name))
        if not kind.startswith("hist"):
            out += [(kind, name) for name in SK_ONLY]
        elif kind == "hist-gb-categorical":
            out += [(kind, name) for name in HIST_ONLY]
    return out


CHILD = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 1024 ** 3, resource.RLIM_INFINITY))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
sys.path.insert(0, sys.argv[1])
import pandas as pd
from tcrex.errors import TCRExError
from tcrex.intake import load_model
X = pd.read_pickle(sys.argv[2])
for line in sys.stdin:
    case, path = json.loads(line)
    print(json.dumps(["start", case]), flush=True)
    try:
        model = load_model(open(path, "rb").read(), "m.skops", sandbox=False)
        model.predict(X)
        outcome = ["loaded", ""]
    except TCRExError as exc:
        outcome = [type(exc).__name__, str(exc)]
    print(json.dumps([case] + outcome), flush=True)
"""


def run_guarded(tmp_path, files: dict, X, seconds=120) -> dict:
    """Load and predict every file in a child process (3 GB address space, ``seconds`` in all); return
    {case: (outcome, message)}. A crash, a hang or an escaped exception fails with the case that caused it."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    frame = tmp_path / "X.pkl"
    X.to_pickle(frame)
    lines = []
    for i, (case, data) in enumerate(files.items()):
        path = tmp_path / f"{i}.skops"
        path.write_bytes(data)
        lines.append(json.dumps([case, str(path)]))
    try:
        proc = subprocess.run([sys.executable, str(script), str(REPO), str(frame)], input="\n".join(lines) + "\n",
                              capture_output=True, text=True, timeout=seconds, cwd=tmp_path)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        raise AssertionError(f"hang: {out.strip().splitlines()[-1:]}") from None
    results, last = {}, None
    for line in proc.stdout.splitlines():
        item = json.loads(line)
        if item[0] == "start":
            last = item[1]
        else:
            results[item[0]] = (item[1], item[2])
    assert proc.returncode == 0, f"the child died (code {proc.returncode}) on case {last}: {proc.stderr[-1500:]}"
    return results


@pytest.mark.parametrize("kind", list(MODELS))
def test_damaged_trees_are_refused_before_anything_predicts(tmp_path, kind):
    model, X = _fit(kind)
    clean = b.skops_bytes(model)
    every = {**TREE_CASES, **SK_ONLY, **HIST_ONLY}
    cases = [name for k, name in _cases() if k == kind]
    files = {}
    for name in cases:
        schema, members = b.skops_parts(clean)
        every[name][0](schema, members)
        files[name] = b.skops_join(schema, members)
    files["unchanged"] = b.skops_join(*b.skops_parts(clean))
    results = run_guarded(tmp_path, files, X)
    assert results.pop("unchanged") == ("loaded", "")
    for name in cases:
        outcome, message = results[name]
        assert outcome == "ModelError", (name, outcome, message)
        assert "damaged or was edited by hand" in message, (name, message)
        assert re.search(every[name][1], message), (name, message)


FUZZ_FIELDS = ("left_child", "right_child", "feature", "threshold", "left", "right", "feature_idx", "is_leaf",
               "is_categorical", "bitset_idx", "num_threshold")
FUZZ_VALUES = (0, 1, 2, 3, -1, -2, 7, 255, 10**6, 2**31 - 1, float("nan"), float("inf"))


@pytest.mark.parametrize("kind", ["tree", "gradient-boosting", "hist-gb-categorical"])
def test_randomly_damaged_trees_never_crash_or_hang(tmp_path, kind):
    """Random values in the node arrays of real trees (children, features, thresholds, leaf flags): whatever is
    loaded predicts, everything else is refused — in a child process that must neither crash nor hang."""
    import random

    rng = random.Random(11)
    model, X = _fit(kind)
    clean = b.skops_bytes(model)
    files = {}
    for i in range(40):
        schema, members = b.skops_parts(clean)
        nodes = _tree_nodes(schema)
        name = nodes[rng.randrange(len(nodes))]["content"]["content"]["nodes"]["file"]
        arr = b.npy_load(members[name]).copy()
        for _ in range(rng.randint(1, 3)):
            field = rng.choice([f for f in arr.dtype.names if f in FUZZ_FIELDS])
            try:
                arr[field][rng.randrange(len(arr))] = rng.choice(FUZZ_VALUES)
            except (OverflowError, ValueError):
                pass
        members[name] = b.npy_bytes(arr)
        files[f"case-{i}"] = b.skops_join(schema, members)
    results = run_guarded(tmp_path, files, X)
    assert set(results) == set(files)
    assert sum(o == "ModelError" for o, _ in results.values()) >= 10
    assert all(o in ("loaded", "ModelError") for o, _ in results.values()), results


# ---------------------------------------------------------------------------------------------- neighbours
def _knn(algorithm, **kw):
    from sklearn.neighbors import KNeighborsClassifier

    X = b.numeric()
    return KNeighborsClassifier(algorithm=algorithm, **kw).fit(X, X.a > 0), X


def _tree_state(schema):
    node = (b.skops_nodes(schema, cls="KDTree") + b.skops_nodes(schema, cls="BallTree"))[0]
    return node["content"]["content"]


def _edit_member(index, edit):
    def apply(schema, members):
        name = _tree_state(schema)[index]["file"]
        arr = b.npy_load(members[name]).copy()
        arr = edit(arr)
        members[name] = b.npy_bytes(arr)
    return apply


def _metric_weights(schema, members):
    metric = _tree_state(schema)[11]["content"]["content"]
    members[metric[1]["file"]] = b.npy_bytes(np.ones(1))


KNN_CASES = {
    "index-out-of-range": (_edit_member(1, lambda a: (a.__setitem__(0, 10**6), a)[1]), "not a permutation"),
    "index-repeated": (_edit_member(1, lambda a: (a.__setitem__(0, a[1]), a)[1]), "not a permutation"),
    "leaf-range": (_edit_member(2, lambda a: (a["idx_end"].__setitem__(-1, 10**6), a)[1]), "point range"),
    "leaf-made-inner": (_edit_member(2, lambda a: (a["is_leaf"].__setitem__(-1, 0), a)[1]), "children lie outside"),
    "fewer-nodes": (_edit_member(2, lambda a: a[:1]), "does not match its"),
}


@pytest.mark.parametrize("algorithm", ["kd_tree", "ball_tree"])
def test_damaged_neighbour_trees_are_refused(tmp_path, algorithm):
    kw = {"metric": "minkowski", "p": 3, "metric_params": {"w": np.ones(3)}} if algorithm == "ball_tree" else {}
    model, X = _knn(algorithm, **kw)
    clean = b.skops_bytes(model)
    cases = dict(KNN_CASES, **({"metric-weights": (_metric_weights, "distance weights have 1 entries for 3")}
                               if algorithm == "ball_tree" else {}))
    files = {}
    for name, (edit, _) in cases.items():
        schema, members = b.skops_parts(clean)
        edit(schema, members)
        files[name] = b.skops_join(schema, members)
    files["unchanged"] = clean
    results = run_guarded(tmp_path, files, X)
    assert results.pop("unchanged") == ("loaded", "")
    for name, (_, words) in cases.items():
        outcome, message = results[name]
        assert outcome == "ModelError" and re.search(words, message), (name, outcome, message)


# ---------------------------------------------------------------------------------------------- arrays
def _lr():
    from sklearn.linear_model import LogisticRegression

    X = b.numeric()
    return b.skops_bytes(LogisticRegression().fit(X, X.a > 0))


def _first_array(schema):
    return next(n for n in b.skops_nodes(schema, loader="NdArrayNode") if n.get("type") == "numpy")


def test_object_array_is_refused_with_a_clean_message():
    schema, members = b.skops_parts(_lr())
    node = _first_array(schema)
    # an .npy header that declares Python objects (what np.save writes for dtype=object with allow_pickle=True)
    header = "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"
    raw = b"\x93NUMPY\x01\x00" + len(header.ljust(118) + "\n").to_bytes(2, "little") + \
        (header.ljust(118) + "\n").encode() + b"\0" * 16
    members[node["file"]] = raw
    with pytest.raises(UnsafeModelError, match=r"holds Python objects \(dtype object\)"):
        load_model(b.skops_join(schema, members), "m.skops")


def test_object_array_saved_by_numpy_is_refused():
    import io

    schema, members = b.skops_parts(_lr())
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    members[_first_array(schema)["file"]] = buf.getvalue()
    with pytest.raises(UnsafeModelError, match="holds Python objects"):
        load_model(b.skops_join(schema, members), "m.skops")


@pytest.mark.parametrize("shape", [(10**5, 10**5), (2**40,), (3, 10**9)])
def test_array_declaring_more_than_its_file_holds(shape):
    """A 100,000 x 100,000 header over a few bytes would make numpy allocate 74.5 GiB before reading."""
    schema, members = b.skops_parts(_lr())
    node = _first_array(schema)
    header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}".ljust(118) + "\n"
    members[node["file"]] = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\0" * 64
    data = b.skops_join(schema, members)
    assert len(data) < 10_000
    with pytest.raises(ModelError, match=r"declares shape .* bytes\) but holds 64 bytes"):
        load_model(data, "m.skops")


def test_damaged_array_header():
    schema, members = b.skops_parts(_lr())
    members[_first_array(schema)["file"]] = b"\x93NUMPY\x01\x00\x10\x00{'descr': <f8}  \n"
    with pytest.raises(ModelError, match="unreadable header"):
        load_model(b.skops_join(schema, members), "m.skops")


def test_array_node_naming_a_missing_member():
    schema, members = b.skops_parts(_lr())
    _first_array(schema)["file"] = "../../etc/passwd"
    with pytest.raises(ModelError, match=r"names '\.\./\.\./etc/passwd', which the archive lacks"):
        load_model(b.skops_join(schema, members), "m.skops")


def test_every_reference_to_an_array_counts_against_the_budget():
    """300 nodes naming one 1 MB member: skops reads and allocates it 300 times; the archive holds it once."""
    schema, members = b.skops_parts(_lr())
    big = b.npy_bytes(np.zeros(125_000))  # 1 MB
    members["big.npy"] = big
    refs = [{"__class__": "ndarray", "__module__": "numpy", "__loader__": "NdArrayNode", "type": "numpy",
             "file": "big.npy", "__id__": 10_000 + i} for i in range(300)]
    schema["content"]["content"]["extra"] = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
                                             "content": refs, "__id__": 9_999}
    data = b.skops_join(schema, members)
    assert len(data) < 1_100_000  # one member of 1 MB: the archive-level check (each member once) passes
    with pytest.raises(ModelError, match=r"arrays would take more than 8 MB once loaded \(every reference"):
        load_model(data, "m.skops", max_bytes=2_000_000)
    # the same node repeated under one id is loaded once by skops, and counted once
    for r in refs:
        r["__id__"] = 10_000
    try:
        load_model(b.skops_join(schema, members), "m.skops", max_bytes=2_000_000)
    except ModelError as exc:
        assert "every reference" not in str(exc)


def test_real_models_with_arrays_still_load():
    """Object arrays that skops itself writes (as JSON: the string categories of a OneHotEncoder), sparse
    matrices and every model kind above load and predict as the original."""
    from scipy import sparse
    from sklearn.svm import SVC

    X, y = b.loans()
    pipe = b.sklearn_pipeline(X, y)
    assert (load_model(b.skops_bytes(pipe), "m.skops").predict(X) == pipe.predict(X)).all()
    Xs = sparse.csr_matrix(b.numeric().to_numpy())
    svc = SVC().fit(Xs, b.numeric().a > 0)
    assert sparse.issparse(svc.support_vectors_)
    loaded = load_model(b.skops_bytes(svc), "m.skops")
    assert (loaded.predict(b.numeric()) == svc.predict(Xs)).all()
    for kind in MODELS:
        model, Xk = _fit(kind)
        assert np.allclose(load_model(b.skops_bytes(model), "m.skops").predict(Xk).astype(float),
                           model.predict(Xk).astype(float)), kind


def test_sparse_matrix_declaring_more_than_it_holds():
    import io
    import zipfile

    from scipy import sparse
    from sklearn.svm import SVC

    Xs = sparse.csr_matrix(b.numeric().to_numpy())
    schema, members = b.skops_parts(b.skops_bytes(SVC().fit(Xs, b.numeric().a > 0)))
    node = b.skops_nodes(schema, loader="SparseMatrixNode")[0]
    inner = zipfile.ZipFile(io.BytesIO(members[node["file"]]))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in inner.infolist():
            raw = inner.read(info)
            if info.filename == "data.npy":
                header = "{'descr': '<f8', 'fortran_order': False, 'shape': (10000000000,), }".ljust(118) + "\n"
                raw = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()
            z.writestr(info.filename, raw)
    members[node["file"]] = out.getvalue()
    with pytest.raises(ModelError, match=r"data\.npy'? declares shape \(10000000000,\)"):
        load_model(b.skops_join(schema, members), "m.skops")
