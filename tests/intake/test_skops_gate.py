"""The .skops gate: a file naming a type outside the libraries of a scikit-learn model, or a forbidden skops
loader, is refused in the app's process before any sandbox worker starts (no import of scikit-learn or skops, no
child process), with the full audit's message; everything the full allow-list accepts passes the gate."""
from __future__ import annotations

import io
import json
import zipfile

import psutil
import pytest

from tcrex.intake import UnsafeModelError, load_model
from tcrex.intake._skops_gate import ALLOWED_LOADERS, ALLOWED_ROOTS, certainly_refused


def _skops(schema: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("schema.json", json.dumps(schema))
    return buf.getvalue()


HOSTILE = {
    "os.system": {"__class__": "system", "__module__": "os", "__loader__": "FunctionNode", "content": {}},
    "builtins via a method": {"__class__": "eval", "__module__": "builtins", "__loader__": "MethodNode",
                              "content": {}},
    "nested in a pipeline": {"__class__": "Pipeline", "__module__": "sklearn.pipeline", "__loader__": "ObjectNode",
                             "content": {"steps": [{"__class__": "Popen", "__module__": "subprocess",
                                                    "__loader__": "ObjectNode", "content": {}}]}},
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_certainly_refused_file_is_refused_before_any_worker_starts(case):
    data = _skops({**HOSTILE[case], "protocol": 2, "_skops_version": "0.10"})
    children = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(UnsafeModelError, match=r"refused: this \.skops file contains type\(s\) outside"):
        load_model(data, "model.skops", sandbox=True)
    assert {p.pid for p in psutil.Process().children(recursive=True)} <= children  # no worker was started


def test_the_gate_passes_everything_the_full_allow_list_accepts():
    from tcrex.intake._sklearn import ALLOWED_FUNCTIONS, ALLOWED_TYPES
    from tcrex.intake._sklearn import ALLOWED_LOADERS as FULL_LOADERS
    assert {name.split(".", 1)[0] for name in ALLOWED_TYPES | ALLOWED_FUNCTIONS} <= ALLOWED_ROOTS
    assert FULL_LOADERS == ALLOWED_LOADERS
    allowed = [{"__class__": n.rsplit(".", 1)[1], "__module__": n.rsplit(".", 1)[0], "__loader__": "ObjectNode"}
               for n in sorted(ALLOWED_TYPES)]
    assert certainly_refused(_skops({"content": allowed})) == []


def test_a_damaged_file_is_left_to_the_sandbox_to_describe():
    assert certainly_refused(b"PK\x03\x04 not really a zip") == []
    assert certainly_refused(b"") == []
