"""ONNX models through ONNX Runtime, with the two ways an ONNX file reaches beyond itself refused.

* External data: a tensor may say "my bytes are in file X" (``data_location = EXTERNAL`` or ``external_data``
  entries). On a server that would read files next to the process — refused, whatever the path.
* Custom operator domains: nodes outside ``""`` / ``ai.onnx`` / ``ai.onnx.ml`` need custom kernels (native code)
  or Microsoft contrib ops — refused. No custom-op library is ever registered.

Every message and tensor in the model is walked (graphs, subgraphs of If/Loop/Scan, functions, training info,
attributes), so nothing is missed by looking only at ``graph.initializer``. Only the CPU execution provider is
used.

Inputs: either one 2-D tensor of all features (float, double or int64; feature names from the model's metadata
``feature_names`` when present, else by position), or one input per column (named like the columns; string inputs
are categorical). Outputs: a tensor named like ``label`` if there is one, else the first tensor output; integer,
string and boolean outputs are class labels, a float output with one column is a regression, a float output with
several columns is a score/probability matrix whose argmax is the class.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..errors import ModelError
from ..vocabulary import CATEGORICAL, CLASSIFICATION, NUMERIC, REGRESSION
from ._base import LoadedModel, UnsafeModelError, numeric_column, short_error

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


def load(data: bytes) -> "OnnxModel":
    try:
        import onnx
        import onnxruntime as ort
    except ImportError:  # pragma: no cover - requirements
        raise ModelError("onnx/onnxruntime are not installed on this server; .onnx files cannot be read") from None
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
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    try:
        session = ort.InferenceSession(data, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own Fail/InvalidGraph/... types
        raise ModelError(f"ONNX Runtime could not load the model: {short_error(exc)}") from None
    meta = {p.key: p.value for p in model.metadata_props}
    return OnnxModel(session, labels[0] if len(labels) == 1 else None, meta, model.producer_name)


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
        out = self._session.run([self._output], feeds)[0]
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
