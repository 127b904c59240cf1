"""ONNX models through ONNX Runtime, with the two ways an ONNX file reaches beyond itself refused.

* External data: a tensor may say "my bytes are in file X" (``data_location = EXTERNAL`` or ``external_data``
  entries). On a server that would read files next to the process — refused, whatever the path.
* Custom operator domains: nodes outside ``""`` / ``ai.onnx`` / ``ai.onnx.ml`` need custom kernels (native code)
  or Microsoft contrib ops — refused. No custom-op library is ever registered.

Every message and tensor in the model is walked (graphs, subgraphs of If/Loop/Scan, functions, training info,
attributes), so nothing is missed by looking only at ``graph.initializer``. Only the CPU execution provider is
used.

Resources: operators that loop (``Loop`` without a bounded trip count) or size their outputs from data values (``ConstantOfShape``,
``Expand``, ``Tile``, ``Range``, ``Resize``, ``OneHot``, ``Pad``, ... fed by a computed or a huge shape) are refused
(:func:`size_problems`) unless the operator allows them (``allow_dynamic_onnx=True`` or
``TCREX_ONNX_ALLOW_DYNAMIC=1``); the sandbox's limits apply either way.

Inputs: either one 2-D tensor of all features (float, double or int64; feature names from the model's metadata
``feature_names`` when present, else by position), or one input per column (named like the columns; string inputs
are categorical). Outputs: a tensor named like ``label`` if there is one, else the first tensor output; integer,
string and boolean outputs are class labels, a float output with one column is a regression, a float output with
several columns is a score/probability matrix whose argmax is the class.
"""
from __future__ import annotations

import json
import math
import os
import re

import numpy as np
import pandas as pd

from ..errors import ModelError
from ..vocabulary import CATEGORICAL, CLASSIFICATION, NUMERIC, REGRESSION
from ._base import LoadedModel, UnsafeModelError, numeric_column, short_error, threads_given

ALLOWED_DOMAINS = frozenset({"", "ai.onnx", "ai.onnx.ml"})
_NUMERIC_TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64,
                  "tensor(int32)": np.int32, "tensor(float16)": np.float16, "tensor(bool)": np.bool_}
_LABEL_TYPES = ("tensor(int64)", "tensor(int32)", "tensor(string)", "tensor(bool)", "tensor(int8)",
                "tensor(uint8)")
_CLASSIFIER_OPS = ("LinearClassifier", "TreeEnsembleClassifier", "SVMClassifier")


def _walk(msg):
    """Every protobuf message inside ``msg`` (depth first, iterative)."""
    stack = [msg]
    while stack:
        m = stack.pop()
        yield m
        for field, value in m.ListFields():
            if field.type != field.TYPE_MESSAGE:
                continue
            if hasattr(value, "ListFields"):  # a single message
                stack.append(value)
            else:  # a repeated field of messages
                stack.extend(value)


def audit(model) -> tuple[list[str], list[str], list]:
    """(external-data tensors, custom domains, classifier label lists) found anywhere in the model."""
    import onnx

    external, domains, labels = [], set(), []
    for opset in model.opset_import:
        if opset.domain not in ALLOWED_DOMAINS:
            domains.add(opset.domain)
    for m in _walk(model):
        if isinstance(m, onnx.TensorProto):
            if m.data_location == onnx.TensorProto.EXTERNAL or len(m.external_data):
                where = next((e.value for e in m.external_data if e.key == "location"), "?")
                external.append(f"{m.name or '(unnamed tensor)'} -> {where!r}")
        elif isinstance(m, onnx.NodeProto):
            if m.domain not in ALLOWED_DOMAINS:
                domains.add(f"{m.domain} (operator {m.op_type})")
            if m.op_type in _CLASSIFIER_OPS and m.domain == "ai.onnx.ml":
                for a in m.attribute:
                    if a.name == "classlabels_ints" and len(a.ints):
                        labels.append([int(v) for v in a.ints])
                    elif a.name == "classlabels_strings" and len(a.strings):
                        labels.append([s.decode("utf-8", "replace") for s in a.strings])
        elif isinstance(m, onnx.FunctionProto):
            if m.domain not in ALLOWED_DOMAINS:
                domains.add(f"{m.domain} (function {m.name})")
    return external, sorted(domains), labels


# ---------------------------------------------------------------------------------------------- size policy
#: ``Loop`` runs its body up to a trip count M and while a condition holds: accepted only when M is given and bounded
#: like a shape (a small constant, or a piece of an existing tensor's shape), so the data cannot choose how often it
#: runs. ``Scan`` runs once per slice of an existing tensor (how skl2onnx computes k-nearest-neighbour distances):
#: bounded by the tensors' sizes, like any operator; its body is checked like the rest of the graph.
LOOP_OPS = frozenset({"Loop"})
#: Operators whose output size is the product of an input's *values* (a shape): index of that input.
ABSOLUTE_SHAPE_INPUTS = {"ConstantOfShape": (0,), "MaxUnpool": (2,), "CenterCropPad": (1,), "Col2Im": (1, 2),
                         "Resize": (3,)}
#: Operators whose output is an input's size multiplied by an input's values (repeats, scales, depth, pads).
FACTOR_INPUTS = {"Expand": (1,), "Tile": (1,), "Upsample": (1,), "Resize": (2,), "OneHot": (1,), "Pad": (1,)}
#: Operators whose output size is an attribute.
ABSOLUTE_SHAPE_ATTRS = {"RandomNormal": "shape", "RandomUniform": "shape"}
FACTOR_ATTRS = {"Multinomial": "sample_size"}
#: Largest output a shape made of constants may ask for (elements), and largest multiple of an existing tensor.
MAX_STATIC_ELEMENTS = 1 << 24
MAX_FACTOR = 10_000
ALLOW_DYNAMIC_ENV = "TCREX_ONNX_ALLOW_DYNAMIC"
#: Operators that pass a shape (or part of one) through without making it larger.
_SHAPE_PASS = frozenset({"Gather", "Slice", "Squeeze", "Unsqueeze", "Cast", "Identity", "Abs", "Reshape",
                         "Flatten"})


def dynamic_allowed(allow: bool | None = None) -> bool:
    """The operator switch for ONNX loops and data-sized allocations: the argument, else the environment."""
    if allow is not None:
        return bool(allow)
    return os.environ.get(ALLOW_DYNAMIC_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


class _Graphs:
    """Every name defined in the model (all graphs, subgraphs and functions), its constant value when it is a
    small constant, and the node that produces it."""

    def __init__(self, model):
        import onnx
        from onnx import numpy_helper

        self.defined: dict[str, int] = {}
        self.const: dict[str, np.ndarray | None] = {}
        self.producer: dict[str, object] = {}
        self.nodes: list = []

        def define(name: str):
            if name:
                self.defined[name] = self.defined.get(name, 0) + 1

        def tensor(t) -> np.ndarray | None:
            if t.data_location == onnx.TensorProto.EXTERNAL or math.prod(t.dims) > 64:
                return None  # not a shape: shapes are short vectors
            try:
                return np.asarray(numpy_helper.to_array(t))
            except Exception:  # noqa: BLE001 - a damaged constant is no usable shape
                return None

        for m in _walk(model):
            if isinstance(m, onnx.GraphProto):
                for t in m.initializer:
                    define(t.name)
                    self.const[t.name] = tensor(t)
                for t in m.sparse_initializer:
                    define(t.values.name)
                for v in m.input:
                    define(v.name)
            elif isinstance(m, onnx.FunctionProto):
                for name in m.input:
                    define(name)
            elif isinstance(m, onnx.NodeProto):
                self.nodes.append(m)
                for out in m.output:
                    define(out)
                    self.producer[out] = m
                if m.op_type == "Constant" and m.domain in ("", "ai.onnx") and len(m.output) == 1:
                    self.const[m.output[0]] = self._constant(m, tensor)

    @staticmethod
    def _constant(node, tensor) -> np.ndarray | None:
        for a in node.attribute:
            if a.name == "value":
                return tensor(a.t)
            if a.name in ("value_int", "value_float"):
                return np.asarray(a.i if a.name == "value_int" else a.f)
            if a.name in ("value_ints", "value_floats"):
                vals = a.ints if a.name == "value_ints" else a.floats
                return np.asarray(list(vals)) if len(vals) <= 64 else None
        return None

    def bound(self, name: str, depth: int = 0):
        """(from data, factor): the value is a constant whose elements multiply to ``factor`` (from data False), or
        dimensions of tensors that already exist, times ``factor`` (from data True). None when unbounded/unknown."""
        if depth > 32 or self.defined.get(name, 0) != 1:
            return None
        if name in self.const:
            arr = self.const[name]
            if arr is None or arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)):
                return None
            return False, math.prod(max(1, math.ceil(abs(float(v)))) for v in arr.ravel().tolist())
        node = self.producer.get(name)
        if node is None or node.domain not in ("", "ai.onnx"):
            return None
        if node.op_type in ("Shape", "Size"):
            return True, 1
        if node.op_type in _SHAPE_PASS and node.input:
            return self.bound(node.input[0], depth + 1)
        if node.op_type == "Concat":
            parts = [self.bound(i, depth + 1) for i in node.input]
            if any(p is None for p in parts) or sum(p[0] for p in parts) > 1:
                return None  # two pieces of existing shapes multiply them (N x N)
            return any(p[0] for p in parts), math.prod(p[1] for p in parts)
        return None


def size_problems(model) -> list[str]:
    """Operators that loop or allocate from data values, each with why: ``Loop`` without a bounded trip count, and
    shape-taking operators (``ConstantOfShape``, ``Expand``, ``Tile``, ``Range``, ``Resize``, ``OneHot``, ``Pad``,
    ...) whose shape is not a small constant or a piece of an existing tensor's shape."""
    g = _Graphs(model)
    problems: dict[str, str] = {}

    def refuse(node, why: str):
        problems.setdefault(f"{node.op_type}:{why}", f"{node.op_type} ({why})")

    for node in g.nodes:
        op = node.op_type
        if node.domain not in ("", "ai.onnx"):
            continue
        if op in LOOP_OPS:
            trips = g.bound(node.input[0]) if node.input and node.input[0] else None
            if trips is None or trips[1] > MAX_FACTOR:
                refuse(node, "repeats a subgraph a number of times computed from data, unbounded or too large")
            continue
        for i in ABSOLUTE_SHAPE_INPUTS.get(op, ()):
            if i < len(node.input) and node.input[i]:
                b = g.bound(node.input[i])
                if b is None or b[1] > (MAX_FACTOR if b[0] else MAX_STATIC_ELEMENTS):
                    refuse(node, "output shape computed from data or too large")
        for i in FACTOR_INPUTS.get(op, ()):
            if i < len(node.input) and node.input[i]:
                b = g.bound(node.input[i])
                if b is None or b[1] > MAX_FACTOR:
                    refuse(node, "output size multiplied by values computed from data or too large")
        if op == "Range":
            start, limit, delta = (g.bound(n) if n else None for n in (list(node.input) + ["", "", ""])[:3])
            ok = start is not None and delta is not None and not start[0] and not delta[0] and limit is not None
            if ok:
                d = g.const.get(node.input[2])
                step = abs(float(np.asarray(d).ravel()[0])) if d is not None and np.asarray(d).size == 1 else 0.0
                if limit[0]:
                    ok = step >= 1 and start[1] <= MAX_STATIC_ELEMENTS
                else:
                    ok = step > 0 and (start[1] + limit[1]) / step <= MAX_STATIC_ELEMENTS
            if not ok:
                refuse(node, "length computed from data or too large")
        attr = ABSOLUTE_SHAPE_ATTRS.get(op) or FACTOR_ATTRS.get(op)
        if attr:
            cap = MAX_STATIC_ELEMENTS if op in ABSOLUTE_SHAPE_ATTRS else MAX_FACTOR
            for a in node.attribute:
                if a.name == attr:
                    size = math.prod(abs(v) for v in a.ints) if len(a.ints) else abs(a.i)
                    if size > cap:
                        refuse(node, f"asks for {size:,} elements")
    return sorted(problems.values())


def load(data: bytes, allow_dynamic: bool | None = None) -> "OnnxModel":
    try:
        import onnx
        import onnxruntime as ort
    except ImportError as exc:
        import importlib.util

        if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None:
            raise ModelError("onnx/onnxruntime are not installed on this server; .onnx files cannot be read") \
                from None
        raise ModelError(f"ONNX Runtime could not start in the model sandbox ({short_error(exc, 160)}); the "
                         "sandbox's memory limit is probably too low for it (TCREX_SANDBOX_MEMORY_GB)") from None
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # noqa: BLE001 - protobuf DecodeError and friends
        raise ModelError(f"not a valid ONNX model (truncated or not ONNX?): {short_error(exc)}") from None
    if not model.HasField("graph") or not len(model.graph.node) or not len(model.graph.output):
        raise ModelError("not a valid ONNX model: it has no graph, no nodes or no outputs")
    external, domains, labels = audit(model)
    if external:
        raise UnsafeModelError(
            f"refused: the ONNX model keeps tensor data in external file(s) ({'; '.join(external[:5])}); a server "
            "will not read files named by an upload. Save the model with all tensors inside the .onnx file "
            "(onnx.save_model(model, path, save_as_external_data=False)).")
    if domains:
        raise UnsafeModelError(
            f"refused: the ONNX model uses non-standard operator domain(s) {domains[:5]}; only the standard "
            f"domains {sorted(d or '(default)' for d in ALLOWED_DOMAINS)} can run here (custom operators need "
            "native code). Export without custom or contrib operators.")
    try:
        onnx.checker.check_model(model)
    except Exception as exc:  # noqa: BLE001 - ValidationError
        raise ModelError(f"the ONNX model is not valid: {short_error(exc)}") from None
    problems = tree_feature_problems(model)
    if problems:
        raise ModelError(f"the ONNX model is damaged or was edited by hand: {'; '.join(problems[:3])}"
                         f"{' …' if len(problems) > 3 else ''}. Export the model again from the library it was "
                         "trained with")
    if not dynamic_allowed(allow_dynamic):
        problems = size_problems(model)
        if problems:
            raise ModelError(
                f"refused: the ONNX model uses operator(s) that loop or size their outputs from data: "
                f"{'; '.join(problems[:5])}{' …' if len(problems) > 5 else ''}. A model of a table rarely needs "
                "them; export without them, or an operator can allow them on the server "
                f"({ALLOW_DYNAMIC_ENV}=1), where the sandbox's time and memory limits still apply.")
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    threads = threads_given()  # the sandbox worker's share of the cores
    if threads is not None:
        opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    try:
        session = ort.InferenceSession(data, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own Fail/InvalidGraph/... types
        raise ModelError(f"ONNX Runtime could not load the model: {short_error(exc)}") from None
    meta = {p.key: p.value for p in model.metadata_props}
    return OnnxModel(session, labels[0] if len(labels) == 1 else None, meta, model.producer_name)


_TREE_OPS = ("TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble")


def tree_feature_problems(model) -> list[str]:
    """Tree ensembles (``ai.onnx.ml``) whose splits name a feature index outside their input: ONNX Runtime loads
    them and fails at the first prediction with its own message ("One path in the graph requests feature 1000 but
    input tensor has 3 features", with a C++ signature). The input's width comes from ONNX shape inference; when it
    is not static only negative indices are caught here, and :meth:`OnnxModel._predict` words the runtime's error."""
    import onnx

    nodes = [n for n in model.graph.node if n.domain == "ai.onnx.ml" and n.op_type in _TREE_OPS]
    if not nodes:
        return []
    try:
        graph = onnx.shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001 - inference is best effort; the runtime's check stays
        graph = model.graph
    widths = {}
    for vi in [*graph.input, *graph.value_info, *graph.output]:
        dims = vi.type.tensor_type.shape.dim
        if len(dims) == 2 and dims[1].HasField("dim_value") and dims[1].dim_value > 0:
            widths[vi.name] = int(dims[1].dim_value)
    problems = []
    for node in nodes:
        attrs = {a.name: a for a in node.attribute}
        if "nodes_featureids" not in attrs:
            continue
        ids = list(attrs["nodes_featureids"].ints)
        modes = [m.decode("utf-8", "replace") if isinstance(m, bytes) else str(m)
                 for m in attrs["nodes_modes"].strings] if "nodes_modes" in attrs else []
        if len(modes) == len(ids):  # a leaf's feature id means nothing
            ids = [i for i, m in zip(ids, modes) if m != "LEAF"]
        width = widths.get(node.input[0]) if node.input else None
        bad = [i for i in ids if i < 0 or (width is not None and i >= width)]
        if bad:
            worst = max(bad, key=abs)
            where = f"{node.op_type} {node.name!r}" if node.name else node.op_type
            has = f"its input has {width} feature(s)" if width is not None else "feature indices start at 0"
            problems.append(f"{where} splits on feature index {worst} ({len(bad)} split(s) outside the input), but "
                            f"{has}")
    return problems


_RUNTIME_FEATURE = re.compile(r"requests feature (-?\d+) but input tensor has (\d+) features")


def _static_dim(d):
    return d if isinstance(d, int) and d > 0 else None


class OnnxModel(LoadedModel):
    kind = "onnx"

    def __init__(self, session, class_labels, meta: dict, producer: str):
        self._session = session
        inputs = session.get_inputs()
        outputs = session.get_outputs()
        # ----- inputs
        names_meta = _names_from_meta(meta)
        self._matrix = None
        if len(inputs) == 1 and len(inputs[0].shape) == 2 and (names_meta is not None or
                                                                 _static_dim(inputs[0].shape[1]) != 1):
            inp = inputs[0]
            if inp.type not in _NUMERIC_TYPES:
                raise ModelError(f"the ONNX model's input {inp.name!r} has type {inp.type}; a single matrix input "
                                 "must be numeric (float, double or integer)")
            n = _static_dim(inp.shape[1])
            if names_meta is not None and n is not None and len(names_meta) != n:
                raise ModelError(f"the ONNX model's metadata names {len(names_meta)} features but its input takes {n}")
            self._matrix = (inp.name, _NUMERIC_TYPES[inp.type])
            feature_names = names_meta
            n_features = n if n is not None else (len(names_meta) if names_meta else None)
            kinds = {name: NUMERIC for name in (names_meta or [])}
        else:
            for inp in inputs:
                if len(inp.shape) > 2 or (len(inp.shape) == 2 and _static_dim(inp.shape[1]) not in (1, None)):
                    raise ModelError(f"the ONNX model's input {inp.name!r} has shape {inp.shape}; with several "
                                     "inputs each must hold one column")
                if inp.type not in _NUMERIC_TYPES and inp.type != "tensor(string)":
                    raise ModelError(f"the ONNX model's input {inp.name!r} has unsupported type {inp.type}")
            feature_names = [i.name for i in inputs]
            n_features = len(inputs)
            kinds = {i.name: CATEGORICAL if i.type == "tensor(string)" else NUMERIC for i in inputs}
        self._inputs = inputs
        # ----- output
        tensors = [o for o in outputs if o.type.startswith("tensor(")]
        if not tensors:
            raise ModelError("the ONNX model has no tensor output (only sequences/maps); export it with a label or "
                             "value output")
        out = next((o for o in tensors if "label" in o.name.lower()), tensors[0])
        self._output = out.name
        if out.type in _LABEL_TYPES:
            task = CLASSIFICATION
            self._argmax = False
        elif out.type in ("tensor(float)", "tensor(double)", "tensor(float16)"):
            width = _static_dim(out.shape[-1]) if len(out.shape) == 2 else 1
            if len(out.shape) > 2:
                raise ModelError(f"the ONNX model's output {out.name!r} has shape {out.shape}; expected one value "
                                 "or one score per class for each row")
            self._argmax = width is not None and width > 1
            task = CLASSIFICATION if self._argmax else REGRESSION
        else:
            raise ModelError(f"the ONNX model's output {out.name!r} has unsupported type {out.type}")
        classes = class_labels if task == CLASSIFICATION else None
        if classes is None and task == CLASSIFICATION and out.type == "tensor(bool)":
            classes = [False, True]
        if classes is None and self._argmax:
            classes = list(range(_static_dim(out.shape[-1])))
        what = "classifier" if task == CLASSIFICATION else "regressor"
        desc = (f"ONNX {what} (output {out.name!r}), {n_features if n_features else '?'} input feature(s)"
                + ("" if feature_names else ", no feature names (columns matched by position)")
                + (f", produced by {producer}" if producer else ""))
        super().__init__(task=task, feature_names=feature_names, n_features=n_features, classes=classes,
                         feature_kinds=kinds, description=desc)

    def _predict(self, X: pd.DataFrame):
        if self._matrix is not None:
            name, dtype = self._matrix
            cols = [numeric_column(X.iloc[:, j], str(X.columns[j])) for j in range(X.shape[1])]
            arr = np.column_stack(cols) if cols else np.empty((len(X), 0))
            if np.issubdtype(dtype, np.integer) or dtype == np.bool_:
                if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
                    raise ModelError("this ONNX model takes whole numbers; the data holds fractions or NaN")
            feeds = {name: arr.astype(dtype)}
        else:
            feeds = {}
            for inp in self._inputs:
                s = X[inp.name]
                if inp.type == "tensor(string)":
                    if s.isna().any():
                        raise ModelError(f"column {inp.name!r} has missing values; the ONNX model needs text")
                    col = s.astype(str).to_numpy(dtype=object)
                else:
                    col = numeric_column(s, inp.name).astype(_NUMERIC_TYPES[inp.type])
                feeds[inp.name] = col.reshape(-1, 1) if len(inp.shape) == 2 else col
        try:
            out = self._session.run([self._output], feeds)[0]
        except Exception as exc:  # noqa: BLE001 - onnxruntime's Fail/InvalidArgument/...
            m = _RUNTIME_FEATURE.search(str(exc))
            if m is None:
                raise
            raise ModelError(f"the ONNX model's trees split on feature index {m.group(1)}, but it was given "
                             f"{m.group(2)} feature(s): the model was damaged or edited, or it needs more columns "
                             f"than the data has (at least {int(m.group(1)) + 1})") from None
        out = np.asarray(out)
        if self._argmax:
            idx = out.argmax(axis=1)
            return np.asarray(self.classes, dtype=object)[idx] if self.classes is not None and len(
                self.classes) == out.shape[1] else idx
        if out.ndim == 2 and out.shape[1] == 1:
            out = out[:, 0]
        if out.dtype.kind == "f" and self.task == REGRESSION:
            return out.astype(np.float64)
        return out


def _names_from_meta(meta: dict):
    raw = meta.get("feature_names")
    if raw is None:
        return None
    try:
        names = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        names = [n.strip() for n in raw.split(",")]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ModelError("the ONNX model's metadata 'feature_names' must be a JSON list of strings or a "
                         "comma-separated list")
    if len(set(names)) != len(names):
        raise ModelError("the ONNX model's metadata 'feature_names' has duplicates")
    return names
