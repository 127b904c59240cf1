"""Hostile model files, all generated here: each must be refused with a specific message, never executed, and
never let a raw library exception (or a crash) through."""
import io
import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tcrex.errors import ModelError, TCRExError
from tcrex.intake import UnsafeModelError, load_model

from tests.support import builders as b
from tests.support.hostile_models import (SCHEMA_EDITS, SIZE_EDITS, XGB_MUTATIONS, lr_skops, skops_big_zeros,
                                          skops_duplicate_schema, ubj_true_bomb, ubj_with_count, xgb_doc)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_pickle_env(monkeypatch):
    monkeypatch.delenv("TCREX_ALLOW_PICKLE", raising=False)


# ---------------------------------------------------------------------------------------------- pickle / joblib
PICKLE_NAMES = ["model.pkl", "model.pickle", "model.joblib", "model.json", "model.onnx", "model.ubj", "model.skops",
                "model", "model.bin"]


@pytest.mark.parametrize("name", PICKLE_NAMES)
def test_pickle_is_refused_and_never_run(tmp_path, name):
    marker = tmp_path / "pwned"
    data = b.evil_pickle(marker, b.sklearn_pipeline())
    with pytest.raises(UnsafeModelError, match=r"refused: .*pickle/joblib.*runs whatever code.*skops.*ONNX") as ei:
        load_model(data, name)
    assert "TCREX_ALLOW_PICKLE=1" in str(ei.value) and "secrets.toml" in str(ei.value)
    assert not marker.exists()


@pytest.mark.parametrize("compress", [0, 3])
@pytest.mark.parametrize("name", ["model.joblib", "model.pkl", "model"])
def test_joblib_is_refused_and_never_run(tmp_path, name, compress):
    marker = tmp_path / "pwned"
    data = b.evil_joblib(marker, b.sklearn_pipeline(), compress=compress)
    with pytest.raises(UnsafeModelError, match="pickle/joblib"):
        load_model(data, name)
    assert not marker.exists()


@pytest.mark.parametrize("name", ["model.json", "model.onnx", "model.skops"])
def test_compressed_joblib_under_a_model_extension_is_not_loaded(tmp_path, name):
    marker = tmp_path / "pwned"
    data = b.evil_joblib(marker, b.sklearn_pipeline(), compress=3)
    with pytest.raises(ModelError, match="compressed"):
        load_model(data, name, allow_pickle=True)  # even when pickles are allowed, a .json is not unpickled
    assert not marker.exists()


@pytest.mark.parametrize("kind", ["pickle", "joblib"])
def test_opted_in_pickle_does_run_and_load(tmp_path, kind):
    marker = tmp_path / "pwned"
    X, y = b.loans()
    pipe = b.sklearn_pipeline(X, y)
    data = b.evil_pickle(marker, pipe) if kind == "pickle" else b.evil_joblib(marker, pipe)
    model = load_model(data, f"m.{'pkl' if kind == 'pickle' else 'joblib'}", allow_pickle=True)
    assert marker.exists()  # the operator switch really is "run the uploader's code"
    assert np.array_equal(model.predict(X), pipe.predict(X))


def test_env_switch_allows_pickle(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    monkeypatch.setenv("TCREX_ALLOW_PICKLE", "true")
    load_model(b.evil_pickle(marker, b.sklearn_pipeline()), "m.pkl")
    assert marker.exists()


@pytest.mark.parametrize("payload", [b"\x80\x04\x95", b"garbage" * 10, b.garbage(2048)], ids=["trunc", "text", "bin"])
def test_broken_pickle_when_allowed_is_a_model_error(payload):
    with pytest.raises(ModelError, match="the pickle could not be loaded") as ei:
        load_model(payload, "m.pkl", allow_pickle=True)
    assert not isinstance(ei.value, UnsafeModelError)


def test_pickle_of_a_non_model():
    with pytest.raises(ModelError, match="has no predict"):
        load_model(pickle.dumps({"not": "a model"}), "m.pkl", allow_pickle=True)


# ---------------------------------------------------------------------------------------------- skops
def test_skops_function_transformer_with_a_user_function():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X = b.numeric()
    pipe = make_pipeline(FunctionTransformer(np.log1p), LogisticRegression()).fit(X.abs(), X.a > 0)
    with pytest.raises(UnsafeModelError, match=r"allow-list.*function numpy\.log1p \(inside FunctionTransformer\)"):
        load_model(b.skops_bytes(pipe), "m.skops")


def test_skops_function_transformer_calling_os_system():
    from sklearn.preprocessing import FunctionTransformer

    data = b.skops_bytes(FunctionTransformer(os.system))
    with pytest.raises(UnsafeModelError, match=r"(posix|os|nt)\.system \(inside FunctionTransformer\)"):
        load_model(data, "m.skops")


def test_skops_custom_class():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    X = b.numeric()
    pipe = make_pipeline(b.CustomScaler(), LogisticRegression()).fit(X, X.a > 0)
    with pytest.raises(UnsafeModelError, match=r"builders\.CustomScaler"):
        load_model(b.skops_bytes(pipe), "m.skops")


@pytest.mark.parametrize("case", list(SIZE_EDITS))
def test_skops_declared_sizes_are_refused_before_allocating(case):
    edit, pattern = SIZE_EDITS[case]
    data = b.rewrite_skops_schema(lr_skops(), edit)
    assert len(data) < 10_000
    with pytest.raises(ModelError, match=pattern):
        load_model(data, "m.skops", sandbox=False)


def test_skops_arrays_count_against_the_memory_budget_of_the_file():
    data = skops_big_zeros()
    assert len(data) < 2_000_000
    with pytest.raises(ModelError, match=r"arrays would take more than 128 MB once loaded .* the limit is 128 MB "
                                         r"\(the memory budget of a [\d.]+ KB file: the larger of 128 MB and 50 x"):
        load_model(data, "m.skops", sandbox=False)


def test_skops_archive_with_two_schemas_is_ambiguous():
    with pytest.raises(ModelError, match=r"the \.skops archive is ambiguous or damaged: it holds 2 members named "
                                         r"'schema\.json'"):
        load_model(skops_duplicate_schema(), "m.skops", sandbox=False)


def test_a_real_constructor_call_still_loads():
    """skops writes some allow-listed values as constructor calls (complex numbers): those still load."""
    from sklearn.linear_model import LogisticRegression

    X = b.numeric()
    est = LogisticRegression().fit(X, X.a > 0)
    est.extra_ = range(3)  # skops writes it as a constructor call: range(0, 3, 1)

    def as_complex(schema):  # this skops cannot write a complex itself; the same node, for complex(1.0, 2.0)
        node = schema["content"]["content"]["extra_"]
        assert node["__loader__"] == "ConstructorFromReduceNode"
        node["__class__"] = "complex"
        node["content"]["content"] = [{**node["content"]["content"][0], "__class__": "float", "content": v}
                                      for v in ("1.0", "2.0")]

    model = load_model(b.rewrite_skops_schema(b.skops_bytes(est), as_complex), "m.skops", sandbox=False)
    assert model.predict(X).shape == (len(X),)


@pytest.mark.parametrize("case", list(SCHEMA_EDITS))
def test_skops_schema_edited_by_hand(case):
    edit, pattern = SCHEMA_EDITS[case]
    data = b.rewrite_skops_schema(lr_skops(), edit)
    with pytest.raises(UnsafeModelError, match=pattern):
        load_model(data, "m.skops")


def test_skops_deeply_nested_schema():
    def edit(s):
        node = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": []}
        for _ in range(300):
            node = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": [node]}
        s["content"]["content"]["nested"] = node

    with pytest.raises(UnsafeModelError, match="nesting deeper"):
        load_model(b.rewrite_skops_schema(lr_skops(), edit), "m.skops")


def test_skops_zip_bomb_is_refused_before_unpacking():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("schema.json", "{}")
        z.writestr("big.npy", b"\0" * 20_000_000)
    data = buf.getvalue()
    assert len(data) < 100_000
    with pytest.raises(ModelError, match=r"unpacks to 20 MB; the limit is 1 MB \(a zip bomb"):
        load_model(data, "m.skops", max_bytes=250_000)


@pytest.mark.parametrize("case,data,pattern", [
    ("no-schema", "zip-without-schema", "has no schema.json"),
    ("bad-json", "zip-bad-json", "schema.json is not valid JSON"),
    ("not-a-zip", b"definitely not a zip", "not a zip archive"),
    ("garbage", b.garbage(), "not a zip archive"),
])
def test_skops_broken_archives(case, data, pattern):
    if data == "zip-without-schema":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("other.txt", "x")
        data = buf.getvalue()
    elif data == "zip-bad-json":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("schema.json", "{not json")
        data = buf.getvalue()
    with pytest.raises(ModelError, match=pattern):
        load_model(data, "m.skops")


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.99])
def test_skops_truncated(fraction):
    data = b.skops_bytes(b.sklearn_pipeline())
    with pytest.raises(ModelError, match=r"not a valid \.skops file|could not be loaded"):
        load_model(data[:int(len(data) * fraction)], "m.skops")


# ---------------------------------------------------------------------------------------------- ONNX
@pytest.mark.parametrize("location", ["weights.bin", "../../etc/passwd", "/etc/passwd"])
def test_onnx_external_data_is_refused(location):
    data = b.onnx_bytes(b.onnx_external_data(location))
    with pytest.raises(UnsafeModelError, match=rf"external file\(s\) \(W -> '{location}'\)"):
        load_model(data, "m.onnx")


def test_onnx_external_data_hidden_in_a_subgraph():
    with pytest.raises(UnsafeModelError, match=r"hidden -> '\.\./\.\./secrets\.bin'"):
        load_model(b.onnx_bytes(b.onnx_external_in_subgraph()), "m.onnx")


@pytest.mark.parametrize("domain", ["com.evil.ops", "com.microsoft", "ai.onnx.contrib"])
def test_onnx_custom_operator_domain_is_refused(domain):
    with pytest.raises(UnsafeModelError, match=rf"non-standard operator domain\(s\) .*{domain}"):
        load_model(b.onnx_bytes(b.onnx_custom_domain(domain)), "m.onnx")


def test_onnx_custom_function_domain_is_refused():
    with pytest.raises(UnsafeModelError, match=r"my\.funcs"):
        load_model(b.onnx_bytes(b.onnx_custom_function()), "m.onnx")


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.7, 0.95])
def test_onnx_truncated(fraction):
    data = b.onnx_bytes(b.onnx_linear_classifier())
    with pytest.raises(ModelError, match=r"not a valid ONNX model|ONNX model is not valid|ONNX Runtime could not"):
        load_model(data[:int(len(data) * fraction)], "m.onnx")


@pytest.mark.parametrize("seed", range(4))
def test_onnx_garbage(seed):
    with pytest.raises(ModelError, match="ONNX"):
        load_model(b.garbage(seed=seed), "m.onnx")


def test_onnx_with_no_graph():
    import onnx

    with pytest.raises(ModelError, match="no graph"):
        load_model(onnx.ModelProto(ir_version=8).SerializeToString(), "m.onnx")


# ---------------------------------------------------------------------------------------------- XGBoost
@pytest.mark.parametrize("case", list(XGB_MUTATIONS))
def test_xgboost_structure_is_checked(case):
    edit, pattern = XGB_MUTATIONS[case]
    d = xgb_doc()
    edit(d)
    data = json.dumps(d).encode()
    with pytest.raises(ModelError, match=pattern) as ei:
        load_model(data, "m.json")
    assert "damaged or was edited by hand" in str(ei.value)


@pytest.mark.parametrize("case,data,pattern", [
    ("ubj-true-bomb", ubj_true_bomb(), "declares 1,000,000 elements of null/true/false, which take no bytes; the "
                                        "file may hold at most 1,000,000 such elements in all"),
    ("json-no-learner", b'{"hello": 1}', "no 'learner' object"),
    ("json-truncated", None, "looks truncated"),
    ("json-deep", b"{\"learner\": " + b"[" * 100_000 + b"]" * 100_000 + b"}", "nesting is too deep|not valid"),
    ("json-not-utf8", b'{"learner": "\xff\xfe"}', "not UTF-8"),
    ("json-tcrex-rules", b'{"format": "tcrex-rules", "version": 1}', "no 'learner' object"),
    ("ubj-huge-count", ubj_with_count(2**60), "declares 1152921504606846976 elements"),
    ("ubj-bad-marker", b"{L\x00\x00\x00\x00\x00\x00\x00\x01a\x07}", "unknown marker"),
    ("ubj-duplicate-key", b"{i\x01aTi\x01aF}", "duplicate key"),
    ("ubj-deep", b"{i\x01a" + b"[" * 200 + b"]" * 200 + b"}", "nesting deeper than 64"),
    ("ubj-trailing", b"{i\x01aT}junk", "unexpected byte"),
])
def test_xgboost_parse_failures(case, data, pattern):
    if data is None:
        full, _, _ = b.xgb_classifier(n_estimators=3)
        data = full[: len(full) // 2]
    name = "m.ubj" if case.startswith("ubj") else "m.json"
    with pytest.raises(ModelError, match=pattern):
        load_model(data, name)


@pytest.mark.parametrize("fmt", ["json", "ubj"])
@pytest.mark.parametrize("fraction", [0.01, 0.25, 0.5, 0.75, 0.999])
def test_xgboost_truncated(fmt, fraction):
    data, _, _ = b.xgb_classifier(fmt=fmt, n_estimators=3)
    with pytest.raises(ModelError, match="not a valid XGBoost|not an XGBoost"):
        load_model(data[:max(1, int(len(data) * fraction))], f"m.{fmt}")


@pytest.mark.parametrize("name", ["m.json", "m.ubj", "m.skops", "m.onnx", "m"])
@pytest.mark.parametrize("seed", range(3))
def test_binary_garbage_with_model_extensions(name, seed):
    with pytest.raises(ModelError) as ei:
        load_model(b.garbage(seed=seed), name)
    assert not isinstance(ei.value, UnsafeModelError) or "pickle" in str(ei.value)


FUZZ_SCRIPT = r"""
import copy, json, random, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from tcrex.errors import TCRExError
from tcrex.intake import load_model
from tests.support import builders as b
data, _, Xc = b.xgb_classifier(n_estimators=4)
X = Xc.copy(); X["job"] = X["job"].astype(str)
base = json.loads(data)
ubj, _, _ = b.xgb_classifier(n_estimators=4, fmt="ubj")
def leaves(o, path=()):
    if isinstance(o, dict):
        for k, v in o.items(): yield from leaves(v, path + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o): yield from leaves(v, path + (i,))
    else: yield path
paths = list(leaves(base))
values = [0, 1, -1, 2, 3, 5, 7, 8, 15, 16, 31, 33, 64, 255, 256, 65535, 65536, 2**31, -2**31, 1e300, "1", None]
rng = random.Random(int(sys.argv[2]))
refused = loaded = 0
for i in range(int(sys.argv[3])):
    d = copy.deepcopy(base)
    for _ in range(rng.randint(1, 3)):
        p = rng.choice(paths); o = d
        for k in p[:-1]: o = o[k]
        o[p[-1]] = rng.choice(values)
    for raw, name in ((json.dumps(d).encode(), "m.json"), (None, "m.ubj")):
        if raw is None:
            buf = bytearray(ubj)
            for _ in range(rng.randint(1, 4)):
                buf[rng.randrange(len(buf))] = rng.randrange(256)
            raw = bytes(buf)
        try:
            load_model(raw, name).predict(X)
            loaded += 1
        except TCRExError:
            refused += 1
print(loaded, refused)
"""


@pytest.mark.slow  # fuzzes models in workers: `make test`, not `make test-fast`
def test_mutated_xgboost_models_never_crash_the_process(tmp_path):
    """Random mutations of a real model (JSON values, UBJSON bytes), in a child process: a segfault or an escaped
    exception shows up as a non-zero exit code instead of killing the test run."""
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(REPO), "7", "150"], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    loaded, refused = map(int, proc.stdout.split())
    assert loaded + refused == 300 and refused > 0


# ---------------------------------------------------------------------------------------------- limits and oddities
@pytest.mark.parametrize("maker,name", [
    (lambda: b.xgb_classifier()[0], "m.json"), (lambda: b.xgb_classifier(fmt="ubj")[0], "m.ubj"),
    (lambda: b.skops_bytes(b.sklearn_pipeline()), "m.skops"), (lambda: b.onnx_bytes(b.onnx_regressor()), "m.onnx"),
    (lambda: pickle.dumps(b.sklearn_pipeline()), "m.pkl"),
])
def test_size_limit(maker, name):
    data = maker()
    with pytest.raises(ModelError, match=r"MB; the limit for \w+ models is 0 MB"):
        load_model(data, name, max_bytes=len(data) - 1, allow_pickle=True)
    with pytest.raises(ModelError, match="the limit"):
        load_model(data, name, max_bytes={"xgboost": 10, "sklearn": 10, "onnx": 10, "pickle": 10}, allow_pickle=True)


@pytest.mark.parametrize("data,name,pattern", [
    (b"", "m.json", "is empty"),
    (b"binf" + b"\0" * 100, "m.bst", "old binary XGBoost"),
    (b"PK\x03\x04" + b"\0" * 100, "m.pt", r"\.pt models are not supported; export the model to ONNX"),
    (b"\x89HDF\r\n", "m.h5", "not supported"),
    (b"hello world", "m.txt", "not a LightGBM text model"),
    (b"hello world", "m.model3", "cannot tell what kind of model"),
    (b"\x1f\x8b\x08\x00" + b"\0" * 20, "m.json", "gzip-compressed"),
    (b"PK\x03\x04" + b"\0" * 100, "m.onnx", "zip archive"),
])
def test_unsupported_or_misnamed_files(data, name, pattern):
    with pytest.raises(ModelError, match=pattern):
        load_model(data, name)


def test_non_bytes_input():
    with pytest.raises(ModelError, match="needs the file's bytes"):
        load_model("a string", "m.json")


def test_every_refusal_is_a_tcrex_error():
    assert issubclass(UnsafeModelError, ModelError) and issubclass(UnsafeModelError, TCRExError)


@pytest.mark.slow  # every hostile input in workers: `make test`, not `make test-fast`
def test_hostile_inputs_leave_no_files_behind(tmp_path, monkeypatch):
    """Loading never writes to disk (uploads stay in memory): run a few loads in an empty working directory."""
    monkeypatch.chdir(tmp_path)
    load_model(b.onnx_bytes(b.onnx_linear_classifier()), "m.onnx")
    load_model(b.skops_bytes(b.sklearn_pipeline()), "m.skops")
    load_model(b.xgb_classifier()[0], "m.json")
    with pytest.raises(UnsafeModelError):
        load_model(b.onnx_bytes(b.onnx_external_data("weights.bin")), "m.onnx")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------- XGBoost's own errors
BASE_SCORES = ["[2E0]", "2", "[-1E0]", "[0E0]", "[1E0]", "nan", "[nan]", "[inf]", "-inf", "1e400", "[]", "[5E-1,5E-1]",
               "abc", "", "[", "5E-1]", 0.5, 2, None, [0.5], {"a": 1}, True]

BASE_SCORE_SCRIPT = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 1024 ** 3, resource.RLIM_INFINITY))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
sys.path.insert(0, sys.argv[1])
from tcrex.errors import TCRExError
from tcrex.intake import load_model
from tests.support import builders as b
values = json.loads(sys.argv[2])
for objective in ("binary", "regression"):
    if objective == "binary":
        data, _, X = b.xgb_classifier(n_estimators=3, categorical=False)
    else:
        data, _ = b.xgb_regressor()
        X = b.numeric()
    for v in values:
        d = json.loads(data)
        d["learner"]["learner_model_param"]["base_score"] = v
        try:
            out = load_model(json.dumps(d).encode(), "m.json", sandbox=False).predict(X)
            result = ["loaded", str(out[:2])]
        except TCRExError as exc:
            result = [type(exc).__name__, str(exc)]
        print(json.dumps([objective, v] + result), flush=True)
"""


@pytest.mark.slow  # models in workers: `make test`, not `make test-fast`
def test_odd_base_scores_are_model_errors_without_server_paths(tmp_path):
    """XGBoost reads base_score lazily and raises its own error (with a source path and a stack trace) at first
    use; every such error must be a ModelError at load, in plain words. Run in a child process: XGBoost is native."""
    script = tmp_path / "base_score.py"
    script.write_text(BASE_SCORE_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(REPO), json.dumps(BASE_SCORES)], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == 2 * len(BASE_SCORES)
    outcomes = {(o, json.dumps(v)): (kind, msg) for o, v, kind, msg in rows}
    assert outcomes[("binary", '"[2E0]"')][0] == "ModelError"  # raised a raw XGBoostError before
    assert outcomes[("binary", '"nan"')][0] == "ModelError"  # predicted NaN for every row before
    for (objective, value), (kind, msg) in outcomes.items():
        assert kind in ("loaded", "ModelError"), (objective, value, kind, msg)
        if kind == "ModelError":
            for leak in ("Stack trace", ".cc:", "[bt]", "site-packages", "libxgboost", "xgboost::"):
                assert leak not in msg, (objective, value, msg)
