"""Safe intake of uploaded models and tables, and pre-flight checks (no Streamlit here).

* :func:`load_model` — XGBoost JSON/UBJSON, LightGBM text/JSON dump, CatBoost .cbm/JSON, scikit-learn via skops
  (fixed allow-list), ONNX (no external data, no custom operators); pickle/joblib only when the operator enables it.
  Returns a :class:`LoadedModel`. :func:`missing_libraries` names the formats whose optional library this
  installation lacks; :data:`UPLOAD_EXTENSIONS` the file extensions an upload accepts.
* :func:`check_compatibility` — a model against a table: names, count, types, categories, a trial prediction.
* :func:`read_table` — CSV (encoding and delimiter detected) or Parquet, with findings; :func:`handle_missing`,
  :func:`target_findings`, :func:`non_feature_columns` (id-like and label-like columns) (whether a table has enough rows for rho is the engine's :func:`tcrex.check_rows_for_rho`).
* :func:`validate_params` — every hyperparameter problem at once.
* :func:`read_codebook`, :func:`fit_codebook` — value labels from a CSV or JSON codebook, matched to the features.
* :func:`short_error` — a library's error as one readable line (the CLI prints it).
* :func:`warm_sandbox` — start the model sandbox's fork server ahead of the first upload.
* :func:`start_model_worker` — start a model sandbox worker program ahead of the model's load (a command's first
  step: it imports its libraries while the command imports the engine).

The names are loaded on first use (PEP 562), as in ``tcrex/__init__.py``: ``from tcrex.intake import
start_model_worker`` loads neither pandas nor numpy.

See ``docs/security.md`` for what is accepted, what is refused and why.
"""
from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING

#: public name -> (the module that defines it, its name there), imported on first access
_LAZY = {
    **dict.fromkeys(("LoadedModel", "ModelFaultError", "UnsafeModelError", "short_error"), "._base"),
    **dict.fromkeys(("CompatibilityReport", "check_compatibility"), ".compat"),
    **dict.fromkeys(("CodebookReport", "fit_codebook", "read_codebook"), ".labels"),
    **dict.fromkeys(("LABEL_NAMES", "Finding", "TableReport", "handle_missing", "label_column", "non_feature_columns",
                     "read_table", "sentinels_to_missing", "special_codes_note", "target_findings"), ".data"),
    **dict.fromkeys(("MAX_MODEL_BYTES", "PICKLE_ENV", "UPLOAD_EXTENSIONS", "detect_format", "load_model",
                     "missing_libraries", "pickle_allowed"), ".models"),
    **dict.fromkeys(("SandboxedModel", "SandboxLimits", "sandbox_enabled"), "._sandbox"),
    **dict.fromkeys(("ParamReport", "validate_params"), ".params"),
    **dict.fromkeys(("model_threads", "start_model_worker"), "._spawn"),
}
#: public names defined under another name in their module
_RENAMED = {"warm_sandbox": ("._sandbox", "warm_up")}

if TYPE_CHECKING:  # the same names for type checkers and for the import graph of tests/test_structure.py
    from ._base import LoadedModel, ModelFaultError, UnsafeModelError, short_error
    from ._sandbox import SandboxedModel, SandboxLimits, sandbox_enabled
    from ._sandbox import warm_up as warm_sandbox
    from ._spawn import model_threads, start_model_worker
    from .compat import CompatibilityReport, check_compatibility
    from .data import (LABEL_NAMES, Finding, TableReport, handle_missing, label_column, non_feature_columns,
                       read_table, sentinels_to_missing, special_codes_note, target_findings)
    from .labels import CodebookReport, fit_codebook, read_codebook
    from .models import (MAX_MODEL_BYTES, PICKLE_ENV, UPLOAD_EXTENSIONS, detect_format, load_model, missing_libraries,
                         pickle_allowed)
    from .params import ParamReport, validate_params

__all__ = ["load_model", "detect_format", "pickle_allowed", "LoadedModel", "UnsafeModelError", "ModelFaultError", "MAX_MODEL_BYTES",
           "PICKLE_ENV", "check_compatibility", "CompatibilityReport", "read_table", "TableReport", "Finding",
           "handle_missing", "target_findings", "sentinels_to_missing", "special_codes_note",
           "validate_params", "ParamReport", "SandboxedModel", "SandboxLimits", "sandbox_enabled", "short_error",
           "warm_sandbox", "model_threads", "LABEL_NAMES", "label_column", "non_feature_columns", "read_codebook",
           "fit_codebook", "CodebookReport", "start_model_worker", "UPLOAD_EXTENSIONS", "missing_libraries"]


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name], name
    elif name in _RENAMED:
        module, attr = _RENAMED[name]
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f".{name}", __name__)  # a submodule (the eager imports made them attributes)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_RENAMED))
