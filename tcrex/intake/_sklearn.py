"""scikit-learn models through skops, with a fixed allow-list of types kept here (never approved by a user).

skops already refuses types it does not trust, but what it trusts by default is broad (every scikit-learn
estimator, numpy and scipy functions): a ``FunctionTransformer(func=numpy.<anything>)`` passes its audit. So the
file's ``schema.json`` is walked here first and *every* node — object, type, function, container — must name
something in :data:`ALLOWED_TYPES` (or :data:`ALLOWED_FUNCTIONS`) and use a loader in :data:`ALLOWED_LOADERS`.
Only then is ``skops.io.loads`` called, trusting exactly the allow-listed types that skops itself reports
untrusted (``skops.io.get_untrusted_types``). Anything else is refused with its name in the message.

``FunctionTransformer`` is on the list only because ``ColumnTransformer(remainder="passthrough")`` and
``HistGradientBoosting*`` with native categorical features build one internally; it can only hold an allowed
function (none, or ``sklearn.utils.validation.check_array``), so a FunctionTransformer carrying user code is
refused by the same rule.
"""
from __future__ import annotations

import io
import json
import math
import warnings
import zipfile
from collections import Counter

import numpy as np
import pandas as pd

from ..errors import ModelError
from ..vocabulary import CATEGORICAL, CLASSIFICATION, NUMERIC, REGRESSION
from ._base import LoadedModel, UnsafeModelError, budget_words, memory_budget, short_error, threads_given
from ._skops_gate import ALLOWED_LOADERS as _GATE_LOADERS
from ._skops_gate import MAX_SCHEMA_DEPTH, refusal_message

MAX_ZIP_ENTRIES = 100_000


def _qualname(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _public(module: str, names: str) -> list[str]:
    """Qualified names of public scikit-learn classes, resolved where they live in the installed version."""
    import importlib

    mod = importlib.import_module(module)
    out = []
    for n in names.split():
        cls = getattr(mod, n, None)
        if cls is not None:
            out.append(_qualname(cls))
    return out


def _build_allow_list() -> frozenset[str]:
    names: list[str] = []
    names += _public("sklearn.linear_model", "LogisticRegression LogisticRegressionCV LinearRegression Ridge RidgeCV "
                     "RidgeClassifier RidgeClassifierCV Lasso LassoCV ElasticNet ElasticNetCV SGDClassifier "
                     "SGDRegressor HuberRegressor BayesianRidge PoissonRegressor GammaRegressor TweedieRegressor "
                     "Perceptron QuantileRegressor")
    names += _public("sklearn.tree", "DecisionTreeClassifier DecisionTreeRegressor ExtraTreeClassifier "
                     "ExtraTreeRegressor")
    names += _public("sklearn.ensemble", "RandomForestClassifier RandomForestRegressor ExtraTreesClassifier "
                     "ExtraTreesRegressor GradientBoostingClassifier GradientBoostingRegressor "
                     "HistGradientBoostingClassifier HistGradientBoostingRegressor AdaBoostClassifier "
                     "AdaBoostRegressor BaggingClassifier BaggingRegressor")
    names += _public("sklearn.neural_network", "MLPClassifier MLPRegressor")
    names += _public("sklearn.svm", "SVC SVR LinearSVC LinearSVR NuSVC NuSVR")
    names += _public("sklearn.neighbors", "KNeighborsClassifier KNeighborsRegressor KDTree BallTree")
    names += _public("sklearn.naive_bayes", "GaussianNB")
    names += _public("sklearn.dummy", "DummyClassifier DummyRegressor")
    names += _public("sklearn.pipeline", "Pipeline")
    names += _public("sklearn.compose", "ColumnTransformer make_column_selector")
    names += _public("sklearn.preprocessing", "OneHotEncoder OrdinalEncoder StandardScaler MinMaxScaler RobustScaler "
                     "MaxAbsScaler LabelEncoder LabelBinarizer FunctionTransformer")
    names += _public("sklearn.impute", "SimpleImputer MissingIndicator")
    # internal helpers that fitted models of the classes above hold (data only: trees, losses, binning, optimizers)
    internal = {
        "sklearn.tree._tree": "Tree",
        "sklearn.ensemble._hist_gradient_boosting.predictor": "TreePredictor",
        "sklearn.ensemble._hist_gradient_boosting.binning": "_BinMapper",
        "sklearn._loss.loss": "AbsoluteError ExponentialLoss HalfBinomialLoss HalfGammaLoss HalfMultinomialLoss "
                              "HalfPoissonLoss HalfSquaredError HalfTweedieLoss HalfTweedieLossIdentity HuberLoss "
                              "PinballLoss",
        "sklearn._loss._loss": "CyAbsoluteError CyExponentialLoss CyHalfBinomialLoss CyHalfGammaLoss "
                               "CyHalfMultinomialLoss CyHalfPoissonLoss CyHalfSquaredError CyHalfTweedieLoss "
                               "CyHalfTweedieLossIdentity CyHuberLoss CyPinballLoss",
        "sklearn._loss.link": "HalfLogitLink IdentityLink Interval LogitLink LogLink MultinomialLogit",
        "sklearn.neural_network._stochastic_optimizers": "AdamOptimizer SGDOptimizer",
        "sklearn.linear_model._sgd_fast": "Hinge SquaredHinge ModifiedHuber SquaredLoss Huber EpsilonInsensitive "
                                          "SquaredEpsilonInsensitive Log",
        "sklearn.metrics._dist_metrics": "EuclideanDistance64 ManhattanDistance64 ChebyshevDistance64 "
                                         "MinkowskiDistance64 SEuclideanDistance64 EuclideanDistance32 "
                                         "ManhattanDistance32 MinkowskiDistance32",
        "sklearn.preprocessing._encoders": "_BaseEncoder",
    }
    for module, cls_names in internal.items():
        names += [f"{module}.{n}" for n in cls_names.split()]
    names += [f"builtins.{n}" for n in "dict list tuple set frozenset str int float bool bytes bytearray slice "
                                       "NoneType object type complex".split()]
    names += ["numpy.ndarray", "numpy.dtype", "numpy.random.mtrand.RandomState", "numpy.random._generator.Generator",
              "numpy.random._pcg64.PCG64", "numpy.random._mt19937.MT19937"]
    scalar = ("float16 float32 float64 longdouble int8 int16 int32 int64 uint8 uint16 uint32 uint64 intc uintc "
              "bool bool_ str_ bytes_ object_ complex64 complex128 datetime64 timedelta64")
    names += [f"numpy.{n}" for n in scalar.split()]
    names += [f"numpy.dtypes.{n}" for n in ("Float16DType Float32DType Float64DType Int8DType Int16DType Int32DType "
                                            "Int64DType UInt8DType UInt16DType UInt32DType UInt64DType BoolDType "
                                            "StrDType BytesDType ObjectDType").split()]
    import scipy.sparse as sp
    for n in ("csr_matrix csc_matrix coo_matrix csr_array csc_array coo_array").split():
        cls = getattr(sp, n, None)
        if cls is not None:
            names.append(_qualname(cls))
    names += ["functools.partial"]
    return frozenset(names)


#: Every type a .skops file may contain (fully qualified, as skops writes them). Fixed in code.
ALLOWED_TYPES: frozenset[str] = _build_allow_list()
#: Functions a .skops file may reference (FunctionNode / inside functools.partial).
ALLOWED_FUNCTIONS: frozenset[str] = frozenset({"sklearn.utils.validation.check_array"})
#: skops node loaders we accept (the gate's list: one owner, :mod:`._skops_gate`).
ALLOWED_LOADERS = _GATE_LOADERS


def _read_schema(data: bytes, max_unpacked: int, budget: int | None = None) -> dict:
    """The archive's schema.json, after the archive itself and every array it references passed the size checks:
    the archive's unpacked size against ``max_unpacked`` (zip bombs), and what loading it allocates — arrays, every
    reference counted, and arrays its constructor calls declare — against ``budget`` (the file's memory budget)."""
    budget = max_unpacked if budget is None else budget
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ModelError("not a valid .skops file: it is not a zip archive (truncated or not a skops dump?)") from None
    except Exception as exc:  # noqa: BLE001 - damaged central directories raise several types
        raise ModelError(f"not a valid .skops file: {short_error(exc)}") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ZIP_ENTRIES:
            raise ModelError(f"the .skops archive holds {len(infos)} entries; refusing more than {MAX_ZIP_ENTRIES}")
        total = sum(i.file_size for i in infos)
        if total > max_unpacked:
            raise ModelError(f"the .skops archive unpacks to {total / 1e6:.0f} MB; the limit is "
                             f"{max_unpacked / 1e6:.0f} MB (a zip bomb, or a model too large to load here)")
        names = Counter(i.filename for i in infos)
        twice = sorted(n for n, k in names.items() if k > 1)
        if twice:  # a reader takes one of them, which one differs between programs: never guess
            raise ModelError(f"the .skops archive is ambiguous or damaged: it holds {names[twice[0]]} members named "
                             f"{twice[0][:80]!r}{f' (and {len(twice) - 1} more duplicated name(s))' if len(twice) > 1 else ''}; "
                             "a zip archive names each member once, and which copy a reader takes differs between "
                             "programs. Save the model again with skops.io.dump and upload that file")
        if "schema.json" not in names:
            raise ModelError("not a valid .skops file: the archive has no schema.json")
        try:
            raw = zf.read("schema.json")
        except Exception as exc:  # noqa: BLE001 - bad CRC, truncated member, unsupported compression...
            raise ModelError(f"not a valid .skops file: schema.json cannot be read ({short_error(exc)})") from None
        try:
            schema = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise ModelError(f"not a valid .skops file: schema.json is not valid JSON ({short_error(exc)})") \
                from None
        if not isinstance(schema, dict):
            raise ModelError("not a valid .skops file: schema.json is not an object")
        _check_arrays(zf, schema, budget, len(data))
    return schema


# ---------------------------------------------------------------------------------------------- arrays
#: skops loaders that read a member of the archive named by the node's "file".
_FILE_LOADERS = {"NdArrayNode": "npy", "SparseMatrixNode": "npz"}
_NPY_HEAD = 1 << 16  # numpy's own limit on header size is 10,000 bytes


def _schema_objects(schema):
    """Every object node of a skops schema, depth first (the walk the budget checks share); nesting beyond
    ``MAX_SCHEMA_DEPTH`` is passed over here because :func:`audit_schema` refuses it."""
    stack = [(schema, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            continue
        if isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
            continue
        if not isinstance(node, dict):
            continue
        yield node
        stack.extend((v, depth + 1) for k, v in node.items() if k not in ("__class__", "__module__", "__loader__"))


def _array_refs(schema: dict) -> list[tuple[object, str, str]]:
    """(identity, member name, kind) of every node that makes skops read an archive member, in the schema.

    skops loads a node once per distinct ``__id__`` (later nodes with the same id reuse the first); nodes without an
    id are loaded each time they appear. Every such load is one reference."""
    refs, anonymous = {}, 0
    for node in _schema_objects(schema):
        kind = _FILE_LOADERS.get(node.get("__loader__"))
        if kind is not None and (kind == "npz" or node.get("type") == "numpy"):
            member = node.get("file")
            if not isinstance(member, str):
                raise ModelError("not a valid .skops file: an array node names no file")
            ident = node.get("__id__")
            if isinstance(ident, bool) or not isinstance(ident, int):
                anonymous += 1
                ident = ("anonymous", anonymous)
            refs[(ident, member)] = (ident, member, kind)
    return list(refs.values())


def _npy_bytes(head: bytes, size: int, what: str) -> int:
    """The bytes the array in a .npy member of ``size`` bytes declares, after checking its header against them."""
    from numpy.lib import format as npy

    fp = io.BytesIO(head)
    try:
        version = npy.read_magic(fp)
        if version == (1, 0):
            shape, _, dtype = npy.read_array_header_1_0(fp, max_header_size=10_000)
        elif version == (2, 0):
            shape, _, dtype = npy.read_array_header_2_0(fp, max_header_size=10_000)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except Exception as exc:  # noqa: BLE001 - numpy raises ValueError/SyntaxError/... on damaged headers
        raise ModelError(f"the .skops file is damaged: array {what} has an unreadable header "
                         f"({short_error(exc, 120)})") from None
    if dtype.hasobject:
        raise UnsafeModelError(f"refused: array {what} holds Python objects (dtype {dtype}); object arrays would "
                               "need unpickling and cannot be loaded safely. Save the model with skops' own dump, "
                               "which writes object arrays as JSON.")
    declared = math.prod(int(d) for d in shape) * dtype.itemsize
    held = size - fp.tell()
    if declared != held:
        raise ModelError(f"the .skops file is damaged or was edited by hand: array {what} declares shape "
                         f"{tuple(shape)} of {dtype} ({declared:,} bytes) but holds {held:,} bytes")
    return declared


def _member_bytes(zf: zipfile.ZipFile, name: str, kind: str) -> int:
    """The bytes loading member ``name`` allocates for its array(s), from the headers alone."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ModelError(f"not a valid .skops file: an array node names {name[:80]!r}, which the archive lacks") \
            from None
    try:
        with zf.open(info) as f:
            head = f.read(_NPY_HEAD) if kind == "npy" else f.read()
    except Exception as exc:  # noqa: BLE001 - bad CRC, truncated member, unsupported compression...
        raise ModelError(f"not a valid .skops file: {name[:80]!r} cannot be read ({short_error(exc, 120)})") from None
    if kind == "npy":
        return _npy_bytes(head, info.file_size, repr(name[:80]))
    try:  # a scipy sparse matrix: an .npz (itself a zip of .npy members)
        inner = zipfile.ZipFile(io.BytesIO(head))
        members = inner.infolist()
    except Exception:  # noqa: BLE001
        raise ModelError(f"the .skops file is damaged: sparse matrix {name[:80]!r} is not an .npz archive") from None
    if len(members) > 16:
        raise ModelError(f"the .skops file is damaged: sparse matrix {name[:80]!r} holds {len(members)} members")
    total = 0
    with inner:
        for m in members:
            with inner.open(m) as f:
                total += _npy_bytes(f.read(_NPY_HEAD), m.file_size, f"{name[:80]!r}/{m.filename[:40]!r}")
    return total


def _check_arrays(zf: zipfile.ZipFile, schema: dict, budget: int, n_bytes: int) -> None:
    """Read the header of every array member the schema references (never its data) and refuse object arrays,
    sizes the member does not hold, and a total over ``budget`` counting every reference (300 nodes naming one 1 MB
    member make skops read and allocate it 300 times) and every array a constructor call declares
    (:func:`_constructed_bytes`). Nothing is allocated before this passes."""
    sizes: dict[str, int] = {}
    total = _constructed_bytes(schema, budget, n_bytes)
    for _, member, kind in _array_refs(schema):
        if member not in sizes:
            sizes[member] = _member_bytes(zf, member, kind)
        total += sizes[member]
        if total > budget:
            raise ModelError(f"the .skops file's arrays would take more than {_mb(budget)} once loaded (every "
                             f"reference to an array counted); the limit is {budget_words(n_bytes, budget)}")


def _mb(n: int) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


class _NotStatic(Exception):
    """A value in the schema that only loading could compute."""


def _static(node, depth: int = 0):
    """The Python value a schema node stands for, when it is plain JSON (``JsonNode``) or a tuple/list of such;
    never loads anything."""
    if depth > 20 or not isinstance(node, dict):
        raise _NotStatic
    loader = node.get("__loader__")
    if loader == "JsonNode" and isinstance(node.get("content"), str):
        try:
            return json.loads(node["content"])
        except (ValueError, RecursionError):
            raise _NotStatic from None
    if loader in ("TupleNode", "ListNode") and isinstance(node.get("content"), list):
        return tuple(_static(v, depth + 1) for v in node["content"])
    raise _NotStatic


#: Allow-listed types whose constructor allocates what its arguments *say* rather than what they hold:
#: ``numpy.ndarray((250_000_000,), "O")`` is 2 GB of pointers from a 1.6 KB file, ``bytearray(10**10)`` 10 GB of zeros.
#: skops never writes them as constructor calls (arrays are ``NdArrayNode`` members, bytes ``BytesNode``), but the
#: loader it trusts for them (``ConstructorFromReduceNode``) would call them; their size is read from the schema.
_SIZED_CONSTRUCTORS = {"numpy.ndarray", "builtins.bytes", "builtins.bytearray"}
#: Allow-listed types a constructor call would build with sizes taken from its arguments; skops writes them otherwise.
_NO_CONSTRUCTOR = ("scipy.sparse.", "sklearn.tree._tree.Tree")


def _constructor_size(name: str, args) -> int:
    if not isinstance(args, tuple) or not args:
        raise _NotStatic
    if name == "numpy.ndarray":
        shape = args[0]
        shape = (shape,) if isinstance(shape, int) else shape
        if not isinstance(shape, tuple) or not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
            raise _NotStatic
        try:
            dtype = np.dtype(args[1] if len(args) > 1 else float)
        except Exception:  # noqa: BLE001 - any dtype numpy does not understand
            raise _NotStatic from None
        return math.prod(max(d, 0) for d in shape) * max(dtype.itemsize, 1)
    first = args[0]
    if isinstance(first, bool) or not isinstance(first, (int, str, tuple)):
        raise _NotStatic
    return first if isinstance(first, int) else len(first)


def _constructed_bytes(schema: dict, budget: int, n_bytes: int) -> int:
    """Bytes the schema's constructor calls (``ConstructorFromReduceNode``) declare, refused above ``budget``
    before anything is built; a constructor whose size cannot be read from the schema is refused too."""
    total = 0
    for node in _schema_objects(schema):
        if node.get("__loader__") == "ConstructorFromReduceNode":
            name = f"{node.get('__module__')}.{node.get('__class__')}"
            if name.startswith(_NO_CONSTRUCTOR):
                raise ModelError(f"the .skops file is damaged or was edited by hand: it builds {name[:80]} by calling "
                                 "its constructor, which skops never writes for this type")
            if name in _SIZED_CONSTRUCTORS:
                try:
                    size = _constructor_size(name, _static(node.get("content")))
                except _NotStatic:
                    raise ModelError(f"the .skops file is damaged or was edited by hand: it builds {name} by calling "
                                     "its constructor with a size the file does not state") from None
                total += size
                if total > budget:
                    raise ModelError(f"the .skops file builds {name} by calling its constructor with a declared size of "
                                     f"{size:,} bytes ({_mb(size)}), beyond the limit of {budget_words(n_bytes, budget)}"
                                     "; skops never writes arrays this way — the file was damaged or edited by hand")
    return total


def audit_schema(schema: dict) -> list[str]:
    """Every refused item in the schema, as readable strings (empty list: everything is allowed)."""
    refused: dict[str, str] = {}
    stack = [(schema, None, 0)]
    while stack:
        node, owner, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            refused["(nesting)"] = f"nesting deeper than {MAX_SCHEMA_DEPTH} levels"
            continue
        if isinstance(node, list):
            stack.extend((v, owner, depth + 1) for v in node)
            continue
        if not isinstance(node, dict):
            continue
        here = owner
        if "__class__" in node or "__module__" in node or "__loader__" in node:
            cls, mod, loader = node.get("__class__"), node.get("__module__"), node.get("__loader__")
            if not all(isinstance(v, str) for v in (cls, mod, loader)):
                refused["(malformed node)"] = "a node without a proper class, module and loader"
                continue
            name = f"{mod}.{cls}"
            inside = f" (inside {owner})" if owner else ""
            if loader not in ALLOWED_LOADERS:
                refused[name] = f"{name} via skops loader {loader}{inside}"
            elif loader == "FunctionNode":
                if name not in ALLOWED_FUNCTIONS:
                    refused[name] = f"function {name}{inside}"
            elif name not in ALLOWED_TYPES:
                refused[name] = f"{name}{inside}"
            if loader == "ObjectNode":
                here = name.rsplit(".", 1)[-1]
        stack.extend((v, here, depth + 1) for k, v in node.items()
                     if k not in ("__class__", "__module__", "__loader__", "__id__"))
    return sorted(refused.values())


def load(data: bytes, max_unpacked: int) -> "SklearnModel":
    schema = _read_schema(data, max_unpacked, memory_budget(len(data), max_unpacked))
    refused = audit_schema(schema)
    if refused:
        raise UnsafeModelError(refusal_message(refused))
    try:
        import skops.io as sio
    except ImportError:  # pragma: no cover - skops is a requirement
        raise ModelError("skops is not installed on this server; .skops files cannot be read") from None
    try:
        untrusted = sio.get_untrusted_types(data=data)
        outside = [t for t in untrusted if t not in ALLOWED_TYPES and t not in ALLOWED_FUNCTIONS]
        if outside:  # the walk above should have caught these; refuse rather than trust
            raise UnsafeModelError(f"refused: skops reports type(s) outside the allow-list: {outside[:10]}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            obj = sio.loads(data, trusted=untrusted)
    except UnsafeModelError:
        raise
    except MemoryError:
        raise ModelError("the .skops file needs more memory to load than this server allows") from None
    except Exception as exc:  # noqa: BLE001 - skops raises many types on damaged archives
        raise ModelError(f"the .skops file could not be loaded ({type(exc).__name__}: {short_error(exc)})") from None
    from ._sktrees import check_trees

    check_trees(obj)  # before anything predicts: scikit-learn's Cython code trusts the node arrays
    _share_cores(obj)
    notes = sorted({short_error(w.message, 200) for w in caught
                    if "version" in str(w.message).lower() or issubclass(w.category, UserWarning)})
    return SklearnModel(obj, kind="sklearn", notes=notes)


# ---------------------------------------------------------------------------------------------- the model
def _final_step(est):
    from sklearn.pipeline import Pipeline

    while isinstance(est, Pipeline):
        est = est.steps[-1][1]
    return est


def _input_kinds(est, names: list[str] | None) -> tuple[dict, dict]:
    """(feature kind per input name, category levels per input name) from the encoders at the model's entry."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

    kinds, cats = {}, {}

    def encoder_in(t):
        while isinstance(t, Pipeline):
            found = [s for _, s in t.steps if isinstance(s, (OneHotEncoder, OrdinalEncoder))]
            if found:
                return found[0]
            t = t.steps[0][1]
        return t if isinstance(t, (OneHotEncoder, OrdinalEncoder)) else None

    def column_names(cols):
        if names is None:
            return None
        if isinstance(cols, str):
            return [cols]
        if isinstance(cols, slice):
            return names[cols]
        arr = np.asarray(cols)
        if arr.dtype == bool and len(arr) == len(names):
            return [n for n, keep in zip(names, arr) if keep]
        if arr.dtype.kind in "iu":
            return [names[i] for i in arr if 0 <= i < len(names)]
        return [str(c) for c in arr]

    def visit(t, cols):
        enc = encoder_in(t)
        if enc is not None and hasattr(enc, "categories_") and cols is not None:
            for name, levels in zip(cols, enc.categories_):
                kinds[name] = CATEGORICAL
                cats[name] = [v.item() if isinstance(v, np.generic) else v for v in levels if not pd.isna(v)]
        elif cols is not None and t not in ("drop", "passthrough"):
            for name in cols:
                kinds.setdefault(name, NUMERIC if _numeric_transformer(t) else None)

    entry = est
    while isinstance(entry, Pipeline):
        entry = entry.steps[0][1]
    if isinstance(getattr(entry, "_preprocessor", None), ColumnTransformer):  # HistGradientBoosting, categorical
        entry = entry._preprocessor  # noqa: SLF001 - scikit-learn keeps the categorical encoder only here
    if isinstance(entry, ColumnTransformer) and hasattr(entry, "transformers_"):
        for _, t, cols in entry.transformers_:
            visit(t, column_names(cols))
    elif encoder_in(entry) is not None:
        visit(entry, names)
    elif names is not None and not isinstance(entry, ColumnTransformer):
        kinds = {n: NUMERIC for n in names}  # a bare estimator or scaler takes numbers only
    return {k: v for k, v in kinds.items() if v is not None}, cats


def _numeric_transformer(t) -> bool:
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, RobustScaler, StandardScaler

    while isinstance(t, Pipeline):
        if any(isinstance(s, (StandardScaler, MinMaxScaler, RobustScaler, MaxAbsScaler)) for _, s in t.steps):
            return True
        t = t.steps[0][1]
    if isinstance(t, SimpleImputer):
        return t.strategy in ("mean", "median")
    return isinstance(t, (StandardScaler, MinMaxScaler, RobustScaler, MaxAbsScaler))


def _share_cores(obj) -> None:
    """Every ``n_jobs`` of the model (a forest's, a pipeline step's) set to the sandbox worker's share of the cores
    (:func:`._base.threads_given`) instead of what the file says: a forest saved with ``n_jobs=-1`` would take
    every core of the machine in each pool or Dask worker. Left as saved when the sandbox gave no number."""
    threads = threads_given()
    get = getattr(obj, "get_params", None)
    if threads is None or not callable(get):
        return
    try:
        jobs = [k for k in get(deep=True) if k == "n_jobs" or k.endswith("__n_jobs")]
        if jobs:
            obj.set_params(**dict.fromkeys(jobs, threads))
    except Exception:  # noqa: BLE001 - an estimator whose parameters cannot be set keeps its own
        pass


class SklearnModel(LoadedModel):
    """Any object with ``predict`` that looks like a scikit-learn estimator (skops files, and opted-in pickles)."""

    def __init__(self, obj, *, kind: str, notes=()):
        self.kind = kind
        if not callable(getattr(obj, "predict", None)):
            raise ModelError(f"the file holds a {type(obj).__name__}, which has no predict(); upload a fitted model "
                             "(an estimator or a Pipeline ending in one)")
        self._est = obj
        final = _final_step(obj)
        etype = getattr(final, "_estimator_type", None)
        try:
            from sklearn.base import is_classifier, is_regressor
            if is_classifier(obj):
                etype = "classifier"
            elif is_regressor(obj):
                etype = "regressor"
        except Exception:  # noqa: BLE001 - foreign objects in opted-in pickles
            pass
        classes = getattr(obj, "classes_", None)
        if etype == "classifier" or (etype is None and classes is not None):
            task = CLASSIFICATION
            classes = None if classes is None else [c.item() if isinstance(c, np.generic) else c
                                                    for c in np.asarray(classes).ravel()]
        elif etype == "regressor":
            task, classes = REGRESSION, None
        else:
            task, classes = REGRESSION, None
            notes = [*notes, f"could not tell whether {type(final).__name__} is a classifier or a regressor; "
                             "treating its outputs as numbers"]
        names = getattr(obj, "feature_names_in_", None)
        names = None if names is None else [str(n) for n in names]
        n_features = getattr(obj, "n_features_in_", None)
        try:
            kinds, cats = _input_kinds(obj, names)
        except Exception:  # noqa: BLE001 - introspection is best effort
            kinds, cats = {}, {}
        steps = " → ".join(type(s).__name__ for _, s in obj.steps) if hasattr(obj, "steps") else type(obj).__name__
        what = "classifier" if task == CLASSIFICATION else "regressor"
        desc = (f"scikit-learn {what}: {steps}; {n_features if n_features is not None else '?'} input(s)"
                + ("" if names else ", no feature names (columns matched by position)")
                + (" [pickle]" if kind == "pickle" else " [skops]"))
        super().__init__(task=task, feature_names=names, n_features=n_features, classes=classes,
                         categories=cats, feature_kinds=kinds, description=desc, warnings=list(notes))

    def _predict(self, X: pd.DataFrame):
        data = X if self.feature_names is not None else X.to_numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self._est.predict(data)
