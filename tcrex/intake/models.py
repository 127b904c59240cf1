"""Model intake: turn the bytes of an uploaded model file into a :class:`LoadedModel`, safely.

>>> model = load_model(data, "model.json")            # doctest: +SKIP
>>> model.task, model.feature_names, model.description  # doctest: +SKIP
>>> TCREx(rho=0.05).fit(X, model)                     # doctest: +SKIP

Accepted (nothing in them runs code on load):

* XGBoost JSON / UBJSON (``.json``, ``.ubj``): parsed and structure-checked in Python before XGBoost sees it.
* scikit-learn through skops (``.skops``): every type in the file must be on a fixed allow-list kept in code.
* ONNX (``.onnx``): run by ONNX Runtime; external tensor data and custom operator domains are refused.
* LightGBM text models (``.txt``, ``booster.save_model``) and JSON dumps (``booster.dump_model``): parsed and
  structure-checked in Python; LightGBM reads a text model written from the checked trees.
* CatBoost ``.cbm`` and JSON (``save_model(..., format="json", pool=...)``): the flatbuffers core or the JSON
  document read and structure-checked in Python before CatBoost reads the same bytes.

Pickle and joblib (``.pkl``, ``.pickle``, ``.joblib``, ...) run arbitrary code when loaded. They are refused with
:class:`UnsafeModelError` unless the operator turns them on: ``allow_pickle=True``, or the environment variable
``TCREX_ALLOW_PICKLE=1`` when ``allow_pickle`` is left at ``None`` (the dashboard also reads
``allow_pickle = true`` from ``.streamlit/secrets.toml`` and passes it here). Content is sniffed, so a pickle
renamed to ``.json`` or ``.onnx`` is still recognised and refused.

Every failure is a :class:`tcrex.errors.ModelError` (or its subclass :class:`UnsafeModelError`) with a message for
people; library exceptions never escape. See ``docs/security.md``.
"""
from __future__ import annotations

import io
import os
from pathlib import PurePath

from ..errors import ModelError
from ..vocabulary import CLASSIFICATION, REGRESSION
from ._base import LoadedModel, UnsafeModelError, short_error
from ._ubjson import looks_like_ubjson

__all__ = ["load_model", "detect_format", "LoadedModel", "UnsafeModelError", "MAX_MODEL_BYTES",
           "pickle_allowed", "PICKLE_ENV", "CLASSIFICATION", "REGRESSION", "UPLOAD_EXTENSIONS", "library_installed",
           "OPTIONAL_LIBRARIES", "missing_libraries"]

MB = 1024 * 1024
#: Largest accepted file per format, in bytes. Change it here or pass ``max_bytes=`` to :func:`load_model`.
MAX_MODEL_BYTES: dict[str, int] = {"xgboost": 200 * MB, "sklearn": 200 * MB, "onnx": 200 * MB, "lightgbm": 200 * MB,
                                   "catboost": 200 * MB, "pickle": 200 * MB}
#: A .skops archive may unpack to at most this many times its limit (zip-bomb guard).
SKOPS_UNPACK_FACTOR = 4
PICKLE_ENV = "TCREX_ALLOW_PICKLE"

_EXT = {".json": "xgboost-json", ".ubj": "xgboost-ubj", ".skops": "sklearn", ".onnx": "onnx", ".txt": "lightgbm-text",
        ".lgb": "lightgbm-text", ".lgbm": "lightgbm-text", ".cbm": "catboost-cbm",
        ".pkl": "pickle", ".pickle": "pickle", ".joblib": "pickle", ".jbl": "pickle", ".dill": "pickle",
        ".cloudpickle": "pickle", ".sav": "pickle", ".pck": "pickle", ".p": "pickle", ".bst": "xgboost-binary",
        ".model": "xgboost-unknown", ".xgb": "xgboost-unknown", ".ort": "onnx-ort", ".zip": "zip", ".h5": "keras",
        ".keras": "keras", ".pt": "torch", ".pth": "torch", ".safetensors": "safetensors"}
_COMPRESSED = {b"\x78\x01": "zlib", b"\x78\x5e": "zlib", b"\x78\x9c": "zlib", b"\x78\xda": "zlib",
               b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz", b"\x5d\x00\x00": "lzma",
               b"\x04\x22\x4d\x18": "lz4"}
_TRUTHY = {"1", "true", "yes", "on"}
#: What the dashboard's upload accepts (every extension a model format above is saved with), and its help text.
UPLOAD_EXTENSIONS = ["json", "ubj", "ubjson", "skops", "onnx", "txt", "cbm"]
#: Formats whose library may be left out of an installation (optional extras), with the pip extra that adds it.
OPTIONAL_LIBRARIES = {"lightgbm": ("lightgbm", "tcrex[lightgbm]"), "catboost": ("catboost", "tcrex[catboost]")}
#: Keys that tell the JSON of one library from another's within the first bytes of the document.
_JSON_MARKERS = ((b'"learner"', "xgboost-json"), (b'"oblivious_trees"', "catboost-json"),
                 (b'"features_info"', "catboost-json"), (b'"ctr_data"', "catboost-json"),
                 (b'"scale_and_bias"', "catboost-json"), (b'"tree_info"', "lightgbm-json"))


def pickle_allowed(allow_pickle: bool | None = None) -> bool:
    """The operator switch: the argument when given, else the ``TCREX_ALLOW_PICKLE`` environment variable."""
    if allow_pickle is not None:
        return bool(allow_pickle)
    return os.environ.get(PICKLE_ENV, "").strip().lower() in _TRUTHY


def _json_format(data: bytes) -> str:
    """Which library's JSON a document is, from the keys in its first 64 KB (XGBoost's when none is seen: its
    loader then says what the document lacks). The first marker in the text wins: a LightGBM dump names
    ``tree_info`` before any tree, CatBoost's JSON ``features_info`` before its trees, XGBoost ``learner`` first."""
    head = bytes(data[:65536])
    found = [(pos, fmt) for marker, fmt in _JSON_MARKERS if (pos := head.find(marker)) >= 0]
    if b'"name"' in head[:200] and b'"tree"' in head[:200] and b'"tree_info"' in head:
        return "lightgbm-json"
    return min(found)[1] if found else "xgboost-json"


def library_installed(fmt: str) -> bool:
    """Whether the library a format needs can be imported here (for the optional LightGBM and CatBoost)."""
    import importlib.util

    family = fmt.split("-")[0]
    if family not in OPTIONAL_LIBRARIES:
        return True
    return importlib.util.find_spec(OPTIONAL_LIBRARIES[family][0]) is not None


def missing_libraries() -> dict[str, str]:
    """The model formats this installation cannot load because their optional library is not installed: format
    name ("LightGBM", "CatBoost") -> the pip extra that adds it."""
    names = {"lightgbm": "LightGBM", "catboost": "CatBoost"}
    return {names[f]: extra for f, (_, extra) in OPTIONAL_LIBRARIES.items() if not library_installed(f)}


def detect_format(data: bytes, filename: str) -> str:
    """``"xgboost-json"``, ``"xgboost-ubj"``, ``"sklearn"``, ``"onnx"``, ``"lightgbm-text"``, ``"lightgbm-json"``,
    ``"catboost-cbm"``, ``"catboost-json"`` or ``"pickle"``, from content first and the file name second; raises
    ModelError for anything else (with what it looks like)."""
    ext = PurePath(filename or "").suffix.lower()
    by_ext = _EXT.get(ext)
    head = bytes(data[:8])
    if (len(data) >= 2 and data[0] == 0x80 and 2 <= data[1] <= 5) or by_ext == "pickle":
        return "pickle"  # pickle protocol 2+ starts with PROTO (0x80) and its version
    compressed = next((name for magic, name in _COMPRESSED.items() if data.startswith(magic)), None)
    if compressed or data.startswith(b"ZF"):  # joblib's compressed containers (ZF: joblib < 0.10)
        if by_ext is None:
            return "pickle"
        raise ModelError(f"{filename!r} is {compressed or 'zfile'}-compressed; upload the uncompressed model file")
    if by_ext in ("keras", "torch", "safetensors"):
        raise ModelError(f"{ext} models are not supported; export the model to ONNX (.onnx)")
    if by_ext == "onnx-ort":
        raise ModelError("ONNX Runtime's .ort format is not accepted; upload the .onnx model")
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        if by_ext in (None, "sklearn", "zip"):
            return "sklearn"
        raise ModelError(f"{filename!r} does not match its extension: the content is a zip archive (a .skops file?)")
    if data.startswith(b"CBM1"):
        return "catboost-cbm"
    if looks_like_ubjson(data):
        return "xgboost-ubj"
    if bytes(data[:64]).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return _json_format(data)
    from ._lightgbm import looks_like_text_model
    if looks_like_text_model(data):
        return "lightgbm-text"
    if by_ext == "lightgbm-text":
        raise ModelError(f"{filename!r} is not a LightGBM text model (it does not start with the lines 'tree' and "
                         "'version=...'); save the model with booster.save_model('model.txt')")
    if by_ext == "catboost-cbm":
        raise ModelError(f"{filename!r} is not a CatBoost model (a .cbm file starts with 'CBM1'); save the model "
                         "with model.save_model('model.cbm')")
    if by_ext in ("xgboost-json", "xgboost-ubj", "sklearn", "onnx"):
        return by_ext
    if by_ext == "xgboost-binary" or (by_ext == "xgboost-unknown" and head[:4] == b"binf"):
        raise ModelError("old binary XGBoost models (.bst/.model) are not supported; load the model in XGBoost "
                         "and save it again as JSON or UBJSON (booster.save_model('model.json'))")
    if head[:1] == b"\x08":  # protobuf field 1 (ir_version): what .onnx files start with
        return "onnx"
    raise ModelError(f"cannot tell what kind of model {filename!r} is; upload XGBoost JSON/UBJSON (.json, .ubj), "
                     "a scikit-learn model saved with skops (.skops), an ONNX model (.onnx), a LightGBM text model "
                     "(.txt) or a CatBoost model (.cbm, or its JSON)")


def _limit(fmt: str, max_bytes) -> int:
    if isinstance(max_bytes, dict):
        return int(max_bytes.get(fmt, MAX_MODEL_BYTES[fmt]))
    if max_bytes is not None:
        return int(max_bytes)
    return MAX_MODEL_BYTES[fmt]


def load_model(data: bytes, filename: str, *, allow_pickle: bool | None = None,
               max_bytes: int | dict | None = None, sandbox=None,
               allow_dynamic_onnx: bool | None = None) -> LoadedModel:
    """Read a model file's bytes into a :class:`LoadedModel` (see the module docstring for what is accepted).

    ``filename`` is only used for its extension and in messages. ``max_bytes`` overrides the size limit (one
    number for every format, or a dict per format name as in :data:`MAX_MODEL_BYTES`).

    ``sandbox``: ``None`` (default) loads and runs the model in a worker process with time and memory limits
    (:class:`SandboxedModel`) unless ``TCREX_SANDBOX=0``; ``True``/a :class:`SandboxLimits` forces it with those
    limits; ``False`` loads in this process (only for trusted files and tests).

    ``allow_dynamic_onnx``: ONNX operators that loop (``Loop``, ``Scan``) or size their outputs from data
    (``ConstantOfShape``, ``Expand``, ``Tile``, ``Range``, ``Resize``, ... fed by computed or huge shapes) are refused
    unless this is true (``None``: the ``TCREX_ONNX_ALLOW_DYNAMIC`` environment variable decides).
    """
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise ModelError(f"load_model needs the file's bytes, got {type(data).__name__}")
    if not data:
        raise ModelError(f"{filename!r} is empty")
    fmt = detect_format(data, filename)
    from ._sandbox import SandboxLimits, SandboxedModel, sandbox_enabled
    if sandbox_enabled(sandbox):
        if fmt == "pickle" and not pickle_allowed(allow_pickle):
            return _load_pickle(data, filename, allow_pickle)  # refused before any process starts
        if fmt == "sklearn":  # a .skops file naming os.system or a forbidden loader: refused before any process
            from ._skops_gate import certainly_refused, refusal_message
            refused = certainly_refused(data)
            if refused:
                raise UnsafeModelError(refusal_message(refused))
        limits = sandbox if isinstance(sandbox, SandboxLimits) else None
        return SandboxedModel(data, filename, limits=limits, loader=load_in_process,
                              options={"allow_pickle": allow_pickle, "max_bytes": max_bytes, "fmt": fmt,
                                       "allow_dynamic_onnx": allow_dynamic_onnx})
    return load_in_process(data, filename, allow_pickle=allow_pickle, max_bytes=max_bytes, fmt=fmt,
                           allow_dynamic_onnx=allow_dynamic_onnx)


def load_in_process(data: bytes, filename: str, *, allow_pickle: bool | None = None,
                    max_bytes: int | dict | None = None, fmt: str | None = None,
                    allow_dynamic_onnx: bool | None = None) -> LoadedModel:
    """Load a model file in this process (what the sandbox's worker runs; ``load_model(sandbox=False)``)."""
    fmt = fmt or detect_format(data, filename)
    family = fmt.split("-")[0]
    limit = _limit(family, max_bytes)
    if len(data) > limit:
        raise ModelError(f"{filename!r} is {len(data) / MB:.1f} MB; the limit for {family} models is "
                         f"{limit / MB:.0f} MB")
    if fmt in ("xgboost-json", "xgboost-ubj"):
        from . import _xgboost
        return _xgboost.load(data, "json" if fmt == "xgboost-json" else "ubj")
    if fmt == "sklearn":
        from . import _sklearn
        return _sklearn.load(data, max_unpacked=limit * SKOPS_UNPACK_FACTOR)
    if fmt == "onnx":
        from . import _onnx
        return _onnx.load(data, allow_dynamic=allow_dynamic_onnx)
    if fmt in ("lightgbm-text", "lightgbm-json"):
        from . import _lightgbm
        return _lightgbm.load(data, "json" if fmt == "lightgbm-json" else "text")
    if fmt in ("catboost-cbm", "catboost-json"):
        from . import _catboost
        return _catboost.load(data, "json" if fmt == "catboost-json" else "cbm")
    return _load_pickle(data, filename, allow_pickle)


def _load_pickle(data: bytes, filename: str, allow_pickle: bool | None) -> LoadedModel:
    if not pickle_allowed(allow_pickle):
        raise UnsafeModelError(
            f"refused: {filename!r} is a pickle/joblib file, and loading one runs whatever code it contains. "
            "Upload the model as XGBoost JSON/UBJSON, scikit-learn via skops (skops.io.dump(model, 'model.skops')) "
            "or ONNX instead. An operator who trusts every uploader can enable pickles on the server "
            f"({PICKLE_ENV}=1, or allow_pickle = true in .streamlit/secrets.toml).")
    try:
        import joblib

        obj = joblib.load(io.BytesIO(data))  # reads plain pickles as well as joblib containers
    except Exception as exc:  # noqa: BLE001 - anything can come out of an unpickler
        raise ModelError(f"the pickle could not be loaded ({type(exc).__name__}: {short_error(exc)})") from None
    if isinstance(obj, LoadedModel):
        return obj
    from ._sklearn import SklearnModel

    model = SklearnModel(obj, kind="pickle")
    model.warnings.insert(0, "loaded from a pickle: the server is configured to trust uploaded code")
    return model
