"""Where a model version comes from: a local file (or fsspec URL), bytes handed over (the dashboard's upload), or an
MLflow model registry (``models:/<name>/<version>``, ``models:/<name>@<alias>``); and loading it through the
intake's sandbox.

Whatever the origin, the model reaches the engine the same way: its file's bytes go to
:func:`tcrex.intake.load_model` (format sniffed from the content, size limits, the sandbox worker; a pickle refused
unless the operator allows it), so an MLflow artifact is no more trusted than an upload. The bytes' SHA-256 is the
version's identity: the same file registered twice is the same model.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
import tempfile
from dataclasses import dataclass, field

from ..errors import InputFileError, ModelError
from ..inputs import read_bounded
from ..intake import MAX_MODEL_BYTES, SandboxLimits, load_model, sandbox_enabled, short_error
from ._errors import MonitorError

#: The prefix of an MLflow model registry URI.
MLFLOW_PREFIX = "models:/"
#: Model files the intake reads, by extension (what an MLflow model directory is searched for when its MLmodel
#: file names none).
_MODEL_EXTENSIONS = (".json", ".ubj", ".skops", ".onnx", ".pkl", ".pickle", ".joblib", ".xgb", ".bst", ".model")


@dataclass(frozen=True)
class ModelSource:
    """A model file's bytes, its file name (the intake reads the format from content and extension) and where it
    came from (``origin``: ``{"kind": "file", "path": ...}``, ``{"kind": "mlflow", "uri": ..., "version": ...}``,
    ``{"kind": "upload", ...}``)."""

    data: bytes = field(repr=False)
    filename: str
    origin: dict

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def origin_text(self) -> str:
        """Where it came from, in a few words ("models:/credit/3 (run 5f2c…)", "/models/v2.json")."""
        o = self.origin
        if o.get("kind") == "mlflow":
            run = f" (MLflow run {str(o['run_id'])[:8]}…)" if o.get("run_id") else ""
            return f"{o.get('uri')} = version {o.get('version')}{run}"
        if o.get("kind") == "file":
            return str(o.get("path"))
        return str(o.get("text") or o.get("kind") or self.filename)


def model_source(model, *, name: str | None = None) -> ModelSource:
    """``model`` as a :class:`ModelSource`: a ModelSource itself, a path or fsspec URL of a model file, or an MLflow
    registry URI (``models:/<name>/<version>``, ``models:/<name>@<alias>``; the ``mlflow`` client of the optional
    extra ``tcrex[mlflow]``, tracking server from ``MLFLOW_TRACKING_URI``). ``name``: the file name to read the
    format from when ``model`` is bytes."""
    if isinstance(model, ModelSource):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        if not name:
            raise MonitorError("a model given as bytes needs its file name (name=...) for its format")
        return ModelSource(bytes(model), str(name), {"kind": "bytes", "text": str(name)})
    if not isinstance(model, (str, os.PathLike)):
        raise MonitorError(f"a model version is a model file (a path, an fsspec URL or models:/NAME/VERSION from an "
                           f"MLflow registry), not a {type(model).__name__}: save the model (XGBoost JSON, skops, "
                           "ONNX) and register the file, so every version is known by its file's SHA-256")
    text = os.fspath(model)
    if text.startswith(MLFLOW_PREFIX):
        return mlflow_source(text)
    data = _model_bytes(text)
    path = text if "://" in text else os.path.abspath(text)
    return ModelSource(data, posixpath.basename(text.replace(os.sep, "/")), {"kind": "file", "path": path})


def _model_bytes(path: str) -> bytes:
    """A model file's bytes: a regular file (or an fsspec URL), read no further than the intake's largest model
    budget + 1 byte, so a device or an endless stream given as a model is refused before memory grows."""
    try:
        return read_bounded(path, max(MAX_MODEL_BYTES.values()), "the model file",
                            limit_hint="the model sandbox refuses larger models anyway")
    except InputFileError as exc:
        raise MonitorError(str(exc)) from None


def load_version(source: ModelSource, *, allow_pickle: bool | None = None, threads: int | None = None):
    """The model of ``source`` loaded by :func:`tcrex.intake.load_model` (its sandbox worker unless
    ``TCREX_SANDBOX=0``; ``threads``: the worker's share of the cores)."""
    sandbox = SandboxLimits(threads=threads) if threads is not None and sandbox_enabled() else None
    try:
        return load_model(source.data, source.filename, allow_pickle=allow_pickle, sandbox=sandbox)
    except ModelError as exc:  # the intake's message says what; add where the file came from
        raise type(exc)(f"{source.origin_text}: {exc}") from None


# ------------------------------------------------------------------------------------------------ MLflow
def _mlflow():
    try:
        import mlflow  # noqa: F401, PLC0415 - the optional extra tcrex[mlflow]
        from mlflow.tracking import MlflowClient  # noqa: PLC0415 - the optional extra
    except ImportError:
        raise MonitorError("a models:/ URI is read from an MLflow model registry, which needs the mlflow client: "
                           "pip install 'tcrex[mlflow]' (and MLFLOW_TRACKING_URI naming the tracking server)") from None
    return MlflowClient


def parse_registry_uri(uri: str) -> tuple[str, str | None, str | None]:
    """``(name, version, alias)`` of ``models:/<name>/<version>`` or ``models:/<name>@<alias>``."""
    rest = uri[len(MLFLOW_PREFIX):].strip("/")
    if "@" in rest and "/" not in rest.split("@", 1)[1]:
        name, alias = rest.rsplit("@", 1)
        if name and alias:
            return name, None, alias
    elif "/" in rest:
        name, version = rest.rsplit("/", 1)
        if name and version.isdigit():
            return name, version, None
    raise MonitorError(f"{uri!r} is not an MLflow registry URI: give models:/NAME/VERSION (a version number) or "
                       "models:/NAME@ALIAS")


def mlflow_source(uri: str) -> ModelSource:
    """The model file of a registered MLflow model version, downloaded from its artifact store.

    The MLflow model directory's ``MLmodel`` file names the model file of its flavour (``xgboost``: ``data``,
    ``sklearn``: ``pickled_model`` or a skops file, ``onnx``: ``data``); without it, the directory's one model file.
    Only that file's bytes are kept and handed to the intake, which decides (by content) whether it is accepted: a
    pickle is refused unless the operator allows it, whatever MLflow's flavour says."""
    client_cls = _mlflow()
    name, version, alias = parse_registry_uri(uri)
    client = client_cls()
    try:
        mv = client.get_model_version_by_alias(name, alias) if alias else client.get_model_version(name, version)
    except Exception as exc:  # noqa: BLE001 - the registry's own error (unknown model, version, alias, server down)
        raise MonitorError(f"{uri}: the MLflow registry at {_tracking_uri()} does not give this model version "
                           f"({_short(exc)})") from None
    import mlflow.artifacts  # noqa: PLC0415 - the optional extra tcrex[mlflow]
    with tempfile.TemporaryDirectory(prefix="tcrex-mlflow-") as tmp:
        try:
            local = mlflow.artifacts.download_artifacts(artifact_uri=f"{MLFLOW_PREFIX}{name}/{mv.version}",
                                                        dst_path=tmp)
        except Exception as exc:  # noqa: BLE001 - the artifact store's own error
            raise MonitorError(f"{uri}: the model's artifacts cannot be downloaded ({_short(exc)})") from None
        path, flavor = _model_file(local, uri)
        data = _model_bytes(path)
        rel = os.path.relpath(path, local)
    origin = {"kind": "mlflow", "uri": uri, "name": name, "version": str(mv.version), "alias": alias,
              "run_id": getattr(mv, "run_id", None), "source": getattr(mv, "source", None), "file": rel,
              "flavor": flavor, "tracking_uri": _tracking_uri()}
    return ModelSource(data, posixpath.basename(rel), origin)


def _tracking_uri() -> str:
    import mlflow  # noqa: PLC0415 - the optional extra tcrex[mlflow]
    return str(mlflow.get_tracking_uri())


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {short_error(exc)}"


def _model_file(local: str, uri: str) -> tuple[str, str | None]:
    """The model file inside a downloaded MLflow model (``local``: a directory, or the file itself)."""
    if os.path.isfile(local):
        return local, None
    mlmodel = os.path.join(local, "MLmodel")
    if os.path.isfile(mlmodel):
        import yaml  # noqa: PLC0415 - mlflow's own dependency; safe_load builds plain data only
        with open(mlmodel, encoding="utf-8") as fh:
            try:
                meta = yaml.safe_load(fh) or {}
            except yaml.YAMLError as exc:
                raise MonitorError(f"{uri}: its MLmodel file cannot be read ({exc})") from None
        flavors = meta.get("flavors") if isinstance(meta, dict) else None
        for flavor, key in (("xgboost", "data"), ("onnx", "data"), ("sklearn", "pickled_model"),
                            ("sklearn", "data")):
            conf = (flavors or {}).get(flavor)
            if isinstance(conf, dict) and isinstance(conf.get(key), str):
                path = os.path.realpath(os.path.join(local, conf[key]))
                if not path.startswith(os.path.realpath(local) + os.sep):
                    raise MonitorError(f"{uri}: its MLmodel file names a model file outside the model's directory")
                if os.path.isfile(path):
                    return path, flavor
        if flavors and "python_function" in flavors and len(flavors) == 1:
            raise MonitorError(f"{uri} is a custom MLflow python_function model (code, usually pickled): it cannot be "
                               "loaded safely; register the model with the xgboost, sklearn (skops) or onnx flavour")
    found = []
    for root, _, files in os.walk(local):
        found += [os.path.join(root, f) for f in files if f.lower().endswith(_MODEL_EXTENSIONS)]
    if len(found) == 1:
        return found[0], None
    names = sorted(os.path.relpath(f, local) for f in found)
    raise MonitorError(f"{uri}: cannot tell which file of the model's artifacts is the model "
                       f"({'none of them is a model file' if not names else ', '.join(names[:8])}); log the model "
                       "with the xgboost, sklearn or onnx flavour, or as one model file")
