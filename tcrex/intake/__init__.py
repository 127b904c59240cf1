"""Safe intake of uploaded models and tables, and pre-flight checks (no Streamlit here).

* :func:`load_model` — XGBoost JSON/UBJSON, scikit-learn via skops (fixed allow-list), ONNX (no external data,
  no custom operators); pickle/joblib only when the operator enables it. Returns a :class:`LoadedModel`.
* :func:`check_compatibility` — a model against a table: names, count, types, categories, a trial prediction.
* :func:`read_table` — CSV (encoding and delimiter detected) or Parquet, with findings; :func:`handle_missing`,
  :func:`target_findings`, :func:`non_feature_columns` (id-like and label-like columns) (whether a table has enough rows for rho is the engine's :func:`tcrex.check_rows_for_rho`).
* :func:`validate_params` — every hyperparameter problem at once.
* :func:`read_codebook`, :func:`fit_codebook` — value labels from a CSV or JSON codebook, matched to the features.
* :func:`short_error` — a library's error as one readable line (the CLI prints it).
* :func:`warm_sandbox` — start the model sandbox's fork server ahead of the first upload.

See ``docs/security.md`` for what is accepted, what is refused and why.
"""
from ._base import LoadedModel, ModelFaultError, UnsafeModelError, short_error
from .compat import CompatibilityReport, check_compatibility
from .labels import CodebookReport, fit_codebook, read_codebook
from .data import (LABEL_NAMES, Finding, TableReport, handle_missing, label_column, non_feature_columns, read_table,
                   sentinels_to_missing, special_codes_note, target_findings)
from .models import MAX_MODEL_BYTES, PICKLE_ENV, detect_format, load_model, pickle_allowed
from ._sandbox import SandboxedModel, SandboxLimits, model_threads, sandbox_enabled
from ._sandbox import warm_up as warm_sandbox
from .params import ParamReport, validate_params

__all__ = ["load_model", "detect_format", "pickle_allowed", "LoadedModel", "UnsafeModelError", "ModelFaultError", "MAX_MODEL_BYTES",
           "PICKLE_ENV", "check_compatibility", "CompatibilityReport", "read_table", "TableReport", "Finding",
           "handle_missing", "target_findings", "sentinels_to_missing", "special_codes_note",
           "validate_params", "ParamReport", "SandboxedModel", "SandboxLimits", "sandbox_enabled", "short_error",
           "warm_sandbox", "model_threads", "LABEL_NAMES", "label_column", "non_feature_columns", "read_codebook", "fit_codebook",
           "CodebookReport"]
