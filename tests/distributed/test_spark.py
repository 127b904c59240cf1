"""The Spark recipe of docs/scale.md (mapInPandas with the rules JSON); skipped without pyspark and Java."""
import shutil

import pytest

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("Java is not installed", allow_module_level=True)

from tcrex import TCREx  # noqa: E402
from tcrex.datasets import make_loans  # noqa: E402


def test_map_in_pandas_recipe():
    from pyspark.sql import SparkSession
    X = make_loans(1500, random_state=5)
    X["score"] = X.pop("approved")
    X["id"] = range(len(X))
    feats = X.drop(columns=["score", "id"])
    rules = TCREx(rho=0.05).fit(feats, y_pred=X["score"].to_numpy()).to_json()

    def explain_batches(batches):
        from tcrex.distributed import explain_columns, load_rules
        ex = load_rules(rules)
        for pdf in batches:
            out = explain_columns(ex, pdf, y_pred="score", keep=["id"])
            out["status"] = out["status"].astype(str)
            out["text"] = out["text"].astype(str)
            yield out

    schema = "target long, rule long, metarule long, changes long, status string, text string, id long"
    spark = SparkSession.builder.master("local[1]").getOrCreate()
    try:
        got = spark.createDataFrame(X).mapInPandas(explain_batches, schema).toPandas().sort_values("id")
    finally:
        spark.stop()
    want = TCREx.from_json(rules).explain(feats, y_pred=X["score"].to_numpy())
    assert got["status"].tolist() == want["status"].astype(str).tolist()
    assert got["text"].tolist() == want["text"].astype(str).tolist()
