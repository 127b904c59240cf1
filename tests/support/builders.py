"""Models, tables and hostile files for the intake tests — all generated here, nothing downloaded."""
from __future__ import annotations

import io
import json
import pathlib
import pickle
import zipfile

import numpy as np
import pandas as pd


# ---------------------------------------------------------------------------------------------- data
def loans(n=400, seed=0):
    """Numeric and categorical features with a rule-like target (x > t and a category)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "age": rng.integers(18, 70, n),
        "income": np.round(rng.gamma(3, 15, n), 1),
        "job": rng.choice(["clerk", "manager", "nurse"], n),
    })
    y = (((X.income > 40) & (X.job != "clerk")) | (X.age > 60)).astype(int).to_numpy()
    return X, y


def numeric(n=400, seed=0, k=3):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, k)), columns=["a", "b", "c"][:k])
    return X


# ---------------------------------------------------------------------------------------------- XGBoost
def xgb_classifier(X=None, y=None, *, categorical=True, fmt="json", n_estimators=20):
    import xgboost as xgb

    if X is None:
        X, y = loans()
    Xc = X.copy()
    if categorical:
        for c in Xc.columns:
            if Xc[c].dtype == object or pd.api.types.is_string_dtype(Xc[c]):
                Xc[c] = Xc[c].astype("category")
    else:
        Xc = Xc.select_dtypes("number")
    m = xgb.XGBClassifier(n_estimators=n_estimators, max_depth=3, enable_categorical=categorical,
                          tree_method="hist").fit(Xc, y)
    return bytes(m.get_booster().save_raw(fmt)), m, Xc


def xgb_regressor(X=None, *, fmt="json"):
    import xgboost as xgb

    X = numeric() if X is None else X
    y = 2 * X["a"] - X["b"] + 0.1 * X["c"]
    m = xgb.XGBRegressor(n_estimators=15, max_depth=3).fit(X, y)
    return bytes(m.get_booster().save_raw(fmt)), m


# ---------------------------------------------------------------------------------------------- LightGBM, CatBoost
TASKS = ("binary", "multiclass", "regression")
#: the text columns of :func:`tree_table`
TREE_TABLE_CATEGORIES = ["sex", "education", "marital_status"]


def tree_table(n=1200, seed=0):
    """A table shaped unlike the loans sample: the generated credit-card table (text-coded categories, status codes
    -2/-1/0 beside delays, amounts, three months of history) with missing bills, and a target per task."""
    from tcrex.datasets import make_credit_card

    X = make_credit_card(n, months=3, random_state=seed)
    y_binary = X.pop("default").to_numpy()
    X = X.astype({c: object for c in TREE_TABLE_CATEGORIES}).astype({"bill_2": float})
    X.loc[X.index % 9 == 0, "bill_2"] = np.nan
    edu = X.education.map({v: i for i, v in enumerate(sorted(X.education.unique()))}).to_numpy()
    y_multi = (np.digitize(X.age, [35, 50]) + edu) % 3
    y_reg = X.credit_limit / 1000 + 5.0 * (X.sex == "c1") - 0.001 * X.bill_2.fillna(0)
    return X, {"binary": y_binary, "multiclass": y_multi, "regression": y_reg.to_numpy()}


def _tree_inputs(categorical: bool, X=None, seed=0):
    X_, ys = tree_table(seed=seed) if X is None else (X, None)
    if not categorical:
        X_ = X_.drop(columns=TREE_TABLE_CATEGORIES)
    return X_, ys


def lgb_model(task="binary", *, categorical=True, fmt="text", n_estimators=30, X=None, y=None, **params):
    """A LightGBM model trained here (pandas categories when ``categorical``): (file bytes, the model, its X)."""
    import lightgbm as lgb

    X_, ys = _tree_inputs(categorical, X)
    y = ys[task] if y is None else y
    Xc = X_.astype({c: "category" for c in X_.columns if not pd.api.types.is_numeric_dtype(X_[c])})
    cls = lgb.LGBMRegressor if task == "regression" else lgb.LGBMClassifier
    m = cls(n_estimators=n_estimators, num_leaves=15, min_child_samples=10, verbose=-1, **params).fit(Xc, y)
    if fmt == "json":
        data = json.dumps(m.booster_.dump_model()).encode()
    else:
        data = m.booster_.model_to_string().encode()
    return data, m, Xc


def cb_model(task="binary", *, categorical=True, fmt="cbm", n_estimators=30, X=None, y=None, cat_features=None,
             **params):
    """A CatBoost model trained here (text categories as ``cat_features`` when ``categorical``): (file bytes, the
    model, its X). ``fmt="json"`` saves it with the training pool (so the JSON lists the categories)."""
    import tempfile

    import catboost as cb

    X_, ys = _tree_inputs(categorical, X)
    y = ys[task] if y is None else y
    cats = ([c for c in X_.columns if not pd.api.types.is_numeric_dtype(X_[c])] if cat_features is None
            else list(cat_features))
    cls = cb.CatBoostRegressor if task == "regression" else cb.CatBoostClassifier
    kw = {"loss_function": "MultiClass"} if task == "multiclass" else {}
    m = cls(iterations=n_estimators, depth=4, verbose=0, allow_writing_files=False, thread_count=1,
            cat_features=cats or None, **kw, **params).fit(X_, y)
    with tempfile.TemporaryDirectory(prefix="tcrex-cb-") as d:
        path = pathlib.Path(d) / f"m.{fmt}"
        if fmt == "json":
            m.save_model(str(path), format="json", pool=cb.Pool(X_, cat_features=cats or None))
        else:
            m.save_model(str(path))
        data = path.read_bytes()
    return data, m, X_


def cb_reference(data: bytes, fmt: str, task: str):
    """CatBoost's own reading of a saved file (the reference a JSON model is compared with: CatBoost's JSON export
    rounds leaf values, so the JSON model predicts as CatBoost loading that JSON does, not as the trained one)."""
    import tempfile

    import catboost as cb

    cls = cb.CatBoostRegressor if task == "regression" else cb.CatBoostClassifier
    with tempfile.TemporaryDirectory(prefix="tcrex-cb-") as d:
        path = pathlib.Path(d) / f"m.{fmt}"
        path.write_bytes(data)
        return cls().load_model(str(path), format="json" if fmt == "json" else "cbm")


# ---------------------------------------------------------------------------------------------- scikit-learn
def sklearn_pipeline(X=None, y=None):
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    if X is None:
        X, y = loans()
    pre = ColumnTransformer([
        ("num", Pipeline([("impute", SimpleImputer()), ("scale", StandardScaler())]), ["age", "income"]),
        ("cat", OneHotEncoder(handle_unknown="ignore"), ["job"]),
    ])
    return Pipeline([("pre", pre), ("clf", LogisticRegression(max_iter=500))]).fit(X, y)


def skops_bytes(obj) -> bytes:
    import skops.io as sio

    return sio.dumps(obj)


def rewrite_skops_schema(data: bytes, edit) -> bytes:
    """The same .skops archive with ``edit(schema_dict)`` applied to schema.json."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            raw = src.read(info.filename)
            if info.filename == "schema.json":
                schema = json.loads(raw)
                edit(schema)
                raw = json.dumps(schema).encode()
            dst.writestr(info.filename, raw)
    return out.getvalue()


class CustomScaler:  # a class the server has never heard of
    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return X


# ---------------------------------------------------------------------------------------------- ONNX
def onnx_linear_classifier(W=None, b=None, *, names=("a", "b", "c"), argmax=True):
    """X (N, 3) float -> MatMul + Add -> ArgMax (labels 0/1), or Greater on a score column (labels bool)."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    if argmax:
        W = np.array([[1.0, -1.0], [0.5, -0.5], [-0.2, 0.2]], dtype=np.float32) if W is None else W
        b = np.array([0.1, -0.1], dtype=np.float32) if b is None else b
        nodes = [h.make_node("MatMul", ["X", "W"], ["Z0"]), h.make_node("Add", ["Z0", "B"], ["Z"]),
                 h.make_node("ArgMax", ["Z"], ["label"], axis=1, keepdims=0)]
        out = h.make_tensor_value_info("label", T.INT64, [None])
    else:
        W = np.array([[1.0], [0.5], [-0.2]], dtype=np.float32) if W is None else W
        b = np.array([0.0], dtype=np.float32) if b is None else b
        zero = nh.from_array(np.array([0.0], dtype=np.float32), "zero")
        nodes = [h.make_node("MatMul", ["X", "W"], ["Z0"]), h.make_node("Add", ["Z0", "B"], ["Z"]),
                 h.make_node("Greater", ["Z", "zero"], ["label"])]
        out = h.make_tensor_value_info("label", T.BOOL, [None, 1])
    inits = [nh.from_array(W, "W"), nh.from_array(b, "B")] + ([] if argmax else [zero])
    graph = h.make_graph(nodes, "linear", [h.make_tensor_value_info("X", T.FLOAT, [None, W.shape[0]])], [out], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="tcrex-tests")
    model.ir_version = 8
    if names is not None:
        h.set_model_props(model, {"feature_names": json.dumps(list(names))})
    onnx.checker.check_model(model)
    return model


def onnx_regressor():
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    W = np.array([[2.0], [-1.0], [0.1]], dtype=np.float32)
    graph = h.make_graph([h.make_node("MatMul", ["X", "W"], ["y"])], "reg",
                         [h.make_tensor_value_info("X", T.FLOAT, [None, 3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [None, 1])], [nh.from_array(W, "W")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def onnx_per_column_classifier():
    """Inputs age (float) and job (string), one column each; ai.onnx.ml LabelEncoder + LinearClassifier with
    string class labels."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    nodes = [
        h.make_node("LabelEncoder", ["job"], ["jobf"], domain="ai.onnx.ml", keys_strings=["clerk", "manager", "nurse"],
                    values_floats=[0.0, 1.0, 2.0], default_float=-1.0),
        h.make_node("Concat", ["age", "jobf"], ["X"], axis=1),
        h.make_node("LinearClassifier", ["X"], ["label", "prob"], domain="ai.onnx.ml",
                    coefficients=[-0.1, -1.0, 0.1, 1.0], intercepts=[4.0, -4.0], classlabels_strings=["no", "yes"]),
    ]
    graph = h.make_graph(nodes, "percol", [h.make_tensor_value_info("age", T.FLOAT, [None, 1]),
                                           h.make_tensor_value_info("job", T.STRING, [None, 1])],
                         [h.make_tensor_value_info("label", T.STRING, [None]),
                          h.make_tensor_value_info("prob", T.FLOAT, [None, 2])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def onnx_tree_model(feature=1000, width=3, name="trees") -> bytes:
    """A one-split tree ensemble (ai.onnx.ml) over an (N, ``width``) input splitting on ``feature``; ``width``
    None leaves the input's width dynamic (known only when it runs)."""
    from onnx import TensorProto as T
    from onnx import helper as h

    node = h.make_node("TreeEnsembleRegressor", ["X"], ["y"], domain="ai.onnx.ml", name=name,
                       n_targets=1, nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2],
                       nodes_featureids=[feature, 0, 0], nodes_values=[0.5, 0.0, 0.0],
                       nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_truenodeids=[1, 0, 0],
                       nodes_falsenodeids=[2, 0, 0], target_treeids=[0, 0], target_nodeids=[1, 2],
                       target_ids=[0, 0], target_weights=[1.0, 2.0])
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("X", T.FLOAT, [None, width])],
                         [h.make_tensor_value_info("y", T.FLOAT, [None, 1])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)],
                         producer_name="tcrex-tests")
    model.ir_version = 8
    return model.SerializeToString()


def onnx_bytes(model) -> bytes:
    return model.SerializeToString()


def onnx_external_data(location="weights.bin"):
    """The linear classifier with its weight tensor pointing at an external file."""
    from onnx import TensorProto as T

    model = onnx_linear_classifier()
    t = model.graph.initializer[0]
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = T.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "24")):
        e = t.external_data.add()
        e.key, e.value = key, value
    return model


def onnx_external_in_subgraph():
    """External data hidden in a Constant node inside the 'then' branch of an If node."""
    from onnx import TensorProto as T
    from onnx import helper as h

    const = h.make_tensor("hidden", T.FLOAT, [1], [0.0])
    const.ClearField("float_data")
    const.data_location = T.EXTERNAL
    e = const.external_data.add()
    e.key, e.value = "location", "../../secrets.bin"
    then = h.make_graph([h.make_node("Constant", [], ["c"], value=const)], "then", [],
                        [h.make_tensor_value_info("c", T.FLOAT, [1])])
    other = h.make_graph([h.make_node("Constant", [], ["d"], value=h.make_tensor("z", T.FLOAT, [1], [1.0]))],
                         "else", [], [h.make_tensor_value_info("d", T.FLOAT, [1])])
    model = onnx_linear_classifier()
    cond = h.make_tensor("cond", T.BOOL, [], [True])
    model.graph.initializer.append(cond)
    model.graph.node.append(h.make_node("If", ["cond"], ["branch"], then_branch=then, else_branch=other))
    model.graph.output.append(h.make_tensor_value_info("branch", T.FLOAT, [1]))
    return model


def onnx_custom_domain(domain="com.evil.ops", op="Exfiltrate"):
    from onnx import TensorProto as T
    from onnx import helper as h

    graph = h.make_graph([h.make_node(op, ["X"], ["y"], domain=domain)], "custom",
                         [h.make_tensor_value_info("X", T.FLOAT, [None, 3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [None, 1])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(domain, 1)])
    model.ir_version = 8
    return model


def onnx_custom_function():
    """A model-local function in a custom domain, called from the graph."""
    from onnx import TensorProto as T
    from onnx import helper as h

    fn = h.make_function("my.funcs", "Twice", ["x"], ["y"], [h.make_node("Add", ["x", "x"], ["y"])],
                         [h.make_opsetid("", 17)])
    graph = h.make_graph([h.make_node("Twice", ["X"], ["y"], domain="my.funcs")], "fn",
                         [h.make_tensor_value_info("X", T.FLOAT, [None, 3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [None, 3])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("my.funcs", 1)],
                         functions=[fn])
    model.ir_version = 8
    return model


# ---------------------------------------------------------------------------------------------- pickles
class _Touch:
    """Pickles to a call of pathlib.Path.touch(marker): loading it creates the marker file."""

    def __init__(self, marker):
        self.marker = pathlib.Path(marker)

    def __reduce__(self):
        return pathlib.Path.touch, (self.marker,)


class _Payload:
    """Pickles to operator.getitem((touch(marker), model), 1): loading runs touch, then yields a working model.

    Only standard-library callables are referenced, so loading needs no test code to be importable."""

    def __init__(self, marker, model):
        self.marker, self.model = marker, model

    def __reduce__(self):
        import operator

        return operator.getitem, ((_Touch(self.marker), self.model), 1)


def evil_pickle(marker, model) -> bytes:
    return pickle.dumps(_Payload(marker, model), protocol=4)


def evil_joblib(marker, model, compress=0) -> bytes:
    import joblib

    buf = io.BytesIO()
    joblib.dump(_Payload(marker, model), buf, compress=compress)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- files
def garbage(n=4096, seed=0) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def parquet_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- skops internals
def skops_parts(data: bytes) -> tuple[dict, dict]:
    """(schema, {member name: bytes}) of a .skops archive."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {n: z.read(n) for n in z.namelist()}
    return json.loads(members.pop("schema.json")), members


def skops_join(schema: dict, members: dict) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("schema.json", json.dumps(schema))
        for name, raw in members.items():
            z.writestr(name, raw)
    return out.getvalue()


def npy_load(raw: bytes) -> np.ndarray:
    return np.load(io.BytesIO(raw), allow_pickle=False)


def npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def skops_nodes(schema, loader=None, cls=None) -> list[dict]:
    """Every schema node (dict) with the given ``__loader__`` and/or ``__class__``, in document order."""
    found, stack = [], [schema]
    while stack:
        node = stack.pop(0)
        if isinstance(node, dict):
            if (loader is None or node.get("__loader__") == loader) and (cls is None or node.get("__class__") == cls) \
                    and (loader or cls):
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def insert_or_delete(data: bytes, rng, pieces, max_edits: int) -> bytes:
    """``data`` after 1 to ``max_edits`` random edits drawn from ``rng`` (a ``random.Random``): an insertion of
    one of ``pieces`` (7 in 10) or the deletion of up to 20 bytes, each at a random place."""
    out = bytearray(data)
    for _ in range(rng.randint(1, max_edits)):
        at = rng.randrange(len(out) + 1)
        if rng.random() < 0.7:
            out[at:at] = rng.choice(pieces)
        else:
            del out[at:at + rng.randint(1, 20)]
    return bytes(out)


def zip_bytes(members: dict) -> bytes:
    """A deflated zip archive holding ``members`` (name -> text or bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, content in members.items():
            z.writestr(name, content)
    return buf.getvalue()
