"""The gaps frame: one row per (metric, group) with its difference from the reference, its interval and whether
it is significant -- the audit's :meth:`~tcrex.audit.AuditResult.gaps` and the comparison's gaps alike."""
from __future__ import annotations

import numpy as np

GAP_COLUMNS = ["metric", "group", "reference", "value", "reference_value", "difference", "ci_low", "ci_high",
                "significant", "n_group", "n_reference", "small_group"]

GAP_TYPES = {"metric": object, "group": object, "reference": object, "value": float, "reference_value": float,
              "difference": float, "ci_low": float, "ci_high": float, "significant": bool, "n_group": np.int64,
              "n_reference": np.int64, "small_group": bool}


