"""Array transport from the sandbox worker to the app: a JSON header plus raw numpy bytes, never pickle.

The worker may be running a hostile model, so nothing it sends is unpickled by the app: numeric outputs travel as
``{"dtype": "<f8", "shape": [n]}`` + the raw buffer, label outputs as a JSON list of str/int/float/bool/None.
"""
from __future__ import annotations

import json

import numpy as np

from ..errors import ModelError

#: dtypes the app accepts from the worker (numbers and booleans; labels travel as JSON).
_ALLOWED_KINDS = set("biuf")
MAX_HEADER = 1 << 16


def encode(arr) -> tuple[bytes, bytes]:
    """(header, payload) for one array."""
    arr = np.asarray(arr)
    if arr.dtype.kind in _ALLOWED_KINDS and arr.ndim in (1, 2):
        arr = np.ascontiguousarray(arr)
        head = {"dtype": arr.dtype.str, "shape": list(arr.shape)}
        return json.dumps(head).encode(), arr.tobytes()
    values = [v.item() if isinstance(v, np.generic) else v for v in arr.ravel().tolist()]
    values = [v if isinstance(v, (str, int, float, bool)) or v is None else str(v) for v in values]
    head = {"dtype": "json", "shape": list(arr.shape)}
    return json.dumps(head).encode(), json.dumps(values).encode()


def decode(header: bytes, payload: bytes) -> np.ndarray:
    """The array, after checking that the header is well formed and agrees with the payload's size."""
    if len(header) > MAX_HEADER:
        raise ModelError("the model worker sent a malformed answer")
    try:
        head = json.loads(header)
        dtype, shape = head["dtype"], [int(s) for s in head["shape"]]
    except (ValueError, KeyError, TypeError):
        raise ModelError("the model worker sent a malformed answer") from None
    if len(shape) not in (1, 2) or any(s < 0 for s in shape):
        raise ModelError("the model worker sent a malformed answer")
    n = int(np.prod(shape))
    if dtype == "json":
        try:
            values = json.loads(payload)
        except ValueError:
            raise ModelError("the model worker sent a malformed answer") from None
        if not isinstance(values, list) or len(values) != n:
            raise ModelError("the model worker sent a malformed answer")
        out = np.empty(n, dtype=object)
        out[:] = values
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            out = np.asarray(values)
        return out.reshape(shape)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise ModelError("the model worker sent a malformed answer") from None
    if dt.kind not in _ALLOWED_KINDS or n * dt.itemsize != len(payload):
        raise ModelError("the model worker sent a malformed answer")
    return np.frombuffer(payload, dtype=dt).reshape(shape).copy()
