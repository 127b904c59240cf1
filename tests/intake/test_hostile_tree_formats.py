"""Hostile LightGBM and CatBoost files: every structural damage is refused with its own message before the library
reads the file; what only the library reads (CatBoost's tables of category statistics) and random byte damage end
in a clear refusal or a contained fault of the sandbox, never a crash of the process."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tcrex.errors import ModelError, TCRExError
from tcrex.intake import load_model

from tests.support import builders as b
from tests.support import hostile_trees as ht

pytest.importorskip("lightgbm")
pytest.importorskip("catboost")
REPO = Path(__file__).resolve().parents[2]


def _refused(data: bytes, name: str, expected: str | None):
    """Loaded in this process with the sandbox off: a refusal naming the problem (the checks run before the library
    sees the file), or for ``expected=None`` any refusal or a model that predicts (the damage left a valid model)."""
    X, _ = b.loans()
    try:
        model = load_model(data, name)
        if expected is None:
            model.predict(X)
    except ModelError as exc:
        assert expected is None or re.search(expected, str(exc)), str(exc)
        assert "Traceback" not in str(exc) and ".cpp:" not in str(exc) and ".cc:" not in str(exc)
        return str(exc)
    assert expected is None, f"loaded: {model.description}"
    return None


@pytest.mark.parametrize("case", sorted(ht.LGB_MUTATIONS))
def test_lightgbm_damage_is_refused(case):
    make, expected = ht.LGB_MUTATIONS[case]
    _refused(make(), "dump.json" if case.startswith("dump") else "model.txt", expected)


# damage to bytes only CatBoost reads (expected None) runs in the sandbox (below), never in this process
@pytest.mark.parametrize("case", sorted(k for k, (_, expected) in ht.CBM_MUTATIONS.items() if expected))
def test_catboost_cbm_damage_is_refused(case):
    make, expected = ht.CBM_MUTATIONS[case]
    _refused(make(), "model.cbm", expected)


@pytest.mark.parametrize("case", sorted(ht.CB_JSON_MUTATIONS))
def test_catboost_json_damage_is_refused(case):
    make, expected = ht.CB_JSON_MUTATIONS[case]
    _refused(make(), "model.json", expected)


def test_the_base_models_load():
    """The mutations start from models that load (a refusal is the damage's, not the base model's)."""
    X, _ = b.loans()
    for data, name in ((ht.lgb_text().encode(), "m.txt"), (ht.lgb_dump().encode(), "m.json"),
                       (ht.cb_file(), "m.cbm"), (ht.cb_file("json"), "m.json"), (ht.cb_file("cbm", "Depthwise", False),
                                                                                  "m.cbm")):
        assert len(load_model(data, name).predict(X)) == len(X)


FUZZ = r"""
import sys
sys.path.insert(0, sys.argv[1])
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from tcrex.errors import TCRExError
from tcrex.intake import SandboxLimits, load_model
from tests.support import builders as b
from tests.support import hostile_trees as ht
X, _ = b.loans()
limits = SandboxLimits(memory_gb=1.0, load_seconds=60, predict_seconds=30)
cases = [(ht.CBM_MUTATIONS[f"ctr-table-damage-{s}"][0](), "m.cbm") for s in range(4)]
cases += [(ht.cbm_fuzz(s), "m.cbm") for s in range(int(sys.argv[2]))]
ok = refused = faults = 0
for data, name in cases:
    try:
        m = load_model(data, name, sandbox=limits)
        m.predict(X)
        m.close()
        ok += 1
    except TCRExError as exc:
        refused += 1
        faults += "crashed" in str(exc) or "did not answer" in str(exc) or "stopped" in str(exc)
print(ok, refused, faults)
"""


@pytest.mark.slow  # loads 24 files in sandbox workers: `make test`, not `make test-fast`
def test_unchecked_bytes_stay_in_the_sandbox(tmp_path):
    """Damage CatBoost alone reads (its tables of category statistics) and random byte damage of a .cbm, loaded in
    the sandbox from a child process: each ends as a model, a refusal or a contained worker fault; the process that
    loads them never dies."""
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ)
    proc = subprocess.run([sys.executable, str(script), str(REPO), "20"], capture_output=True, text=True,
                          timeout=900, cwd=REPO, env={**os.environ, "TCREX_SANDBOX": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    ok, refused, _faults = map(int, proc.stdout.split())
    assert ok + refused == 24 and refused > 0


def test_every_refusal_is_a_tcrex_error():
    with pytest.raises(TCRExError):
        load_model(b"tree\nversion=v4\n", "m.txt")
