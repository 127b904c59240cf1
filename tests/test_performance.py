"""tcrex.performance (the Model panel's numbers) and its figures in tcrex.figures: checked against
scikit-learn's own metrics on small data with known answers."""
import numpy as np
import pytest
from sklearn import metrics as skm

from tcrex.errors import ParameterError
from tcrex import figures as F
from tcrex.performance import ModelPerformance, model_performance, score, score_name

NAMES = {1: "approved", 0: "rejected"}


@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 600)
    score = np.clip(0.35 * y + 0.65 * rng.random(600), 0, 1)  # informative, not perfect
    pred = (score > 0.5).astype(int)
    return y, pred, score


def test_binary_metrics_match_sklearn_and_use_class_names(binary):
    y, pred, score = binary
    perf = model_performance(y, pred, task="classification", scores=np.column_stack([1 - score, score]),
                             classes=[0, 1], positive=1, class_names=NAMES, rows="600 test rows", holdout=True)
    assert perf.metrics["accuracy"] == pytest.approx(skm.accuracy_score(y, pred))
    assert perf.metrics["balanced accuracy"] == pytest.approx(skm.balanced_accuracy_score(y, pred))
    assert list(perf.confusion.index) == ["rejected", "approved"] == list(perf.confusion.columns)
    assert perf.confusion.to_numpy().tolist() == skm.confusion_matrix(y, pred).tolist()
    prec, rec, _, sup = skm.precision_recall_fscore_support(y, pred)
    assert perf.per_class["precision"].tolist() == pytest.approx(prec.tolist())
    assert perf.per_class["recall"].tolist() == pytest.approx(rec.tolist())
    assert perf.per_class["rows"].tolist() == sup.tolist()
    assert perf.positive == 1 and perf.positive_name == "approved"
    assert perf.roc["auc"] == pytest.approx(skm.roc_auc_score(y, score))
    assert perf.pr["average_precision"] == pytest.approx(skm.average_precision_score(y, score))
    assert perf.pr["base_rate"] == pytest.approx(y.mean())
    table = perf.table()
    assert list(table.metric) == ["accuracy", "balanced accuracy", "ROC AUC (approved)",
                                  "average precision (approved)"]
    assert "600 test rows" in perf.summary() and "optimistic" not in perf.summary()


def test_the_positive_class_chooses_the_curves(binary):
    y, pred, score = binary
    scores = np.column_stack([1 - score, score])
    for_zero = model_performance(y, pred, task="classification", scores=scores, classes=[0, 1], positive=0)
    assert for_zero.positive == 0
    assert for_zero.roc["auc"] == pytest.approx(skm.roc_auc_score(1 - y, 1 - score))
    assert for_zero.pr["base_rate"] == pytest.approx(1 - y.mean())


def test_training_rows_and_unknown_rows_are_labelled(binary):
    y, pred, _ = binary
    train = model_performance(y, pred, task="classification", rows="the training rows", holdout=False)
    assert "optimistic" in train.summary()
    unknown = model_performance(y, pred, task="classification", rows="an upload", holdout=None)
    assert "may have been trained" in unknown.summary()


def test_labels_of_different_types_are_compared_as_text():
    y = np.array(["1", "0", "1", "1", "0"], dtype=object)
    pred = np.array([1, 0, 0, 1, 0])
    perf = model_performance(y, pred, task="classification")
    assert perf.metrics["accuracy"] == pytest.approx(0.8)
    assert len(perf.classes) == 2  # "1" and 1 are one class
    assert perf.roc is None and any("no class scores" in n for n in perf.notes)


def test_multiclass_has_a_confusion_matrix_but_no_curves():
    rng = np.random.default_rng(0)
    y = rng.integers(3, 6, 300)
    pred = np.where(rng.random(300) < 0.7, y, rng.integers(3, 6, 300))
    perf = model_performance(y, pred, task="classification", scores=rng.random((300, 3)), classes=[3, 4, 5])
    assert perf.confusion.shape == (3, 3) and perf.roc is None and perf.pr is None
    assert perf.confusion.to_numpy().sum() == 300


def test_a_class_never_predicted_is_noted():
    perf = model_performance([0, 1, 1, 0], [0, 0, 0, 0], task="classification", class_names=NAMES)
    assert any("never predicts approved" in n for n in perf.notes)


def test_regression_metrics_and_residuals():
    rng = np.random.default_rng(1)
    y = rng.normal(10, 3, 400)
    pred = y + rng.normal(0, 1, 400)
    perf = model_performance(y, pred, task="regression", rows="400 rows")
    assert perf.metrics["MAE"] == pytest.approx(skm.mean_absolute_error(y, pred))
    assert perf.metrics["RMSE"] == pytest.approx(np.sqrt(skm.mean_squared_error(y, pred)))
    assert perf.metrics["R²"] == pytest.approx(skm.r2_score(y, pred))
    np.testing.assert_allclose(perf.residual, y - pred)
    np.testing.assert_allclose(perf.predicted, pred)
    assert perf.confusion is None and perf.roc is None


def test_score_is_the_headline_metric_of_model_performance(binary):
    """One owner of a model's one-figure score: accuracy or R², the very number the Model panel's table shows."""
    y, pred, _ = binary
    assert score_name("classification") == "accuracy" and score_name("regression") == "R²"
    assert score(y, pred, "classification") == model_performance(y, pred, task="classification").metrics["accuracy"]
    assert score(y, pred, "classification") == pytest.approx(skm.accuracy_score(y, pred))
    # text labels against numeric outputs of the same classes, three classes: compared as model_performance does
    labels = np.array(["1", "2", "3", "1", "2"], dtype=object)
    assert score(labels, np.array([1, 2, 1, 1, 3]), "classification") == pytest.approx(0.6)
    rng = np.random.default_rng(5)
    t = rng.normal(10, 3, 80)
    p = t + rng.normal(0, 1, 80)
    assert score(t, p, "regression") == pytest.approx(skm.r2_score(t, p))
    assert score(t, p, "regression") == model_performance(t, p, task="regression").metrics["R²"]
    assert score(np.full(5, 2.0), np.arange(5.0), "regression") is None  # labels that do not vary: undefined
    assert score([], [], "classification") is None
    with pytest.raises(ParameterError, match="task must be"):
        score(y, pred, "ranking")
    with pytest.raises(ParameterError, match="same rows"):
        score(y, pred[:-1], "classification")
    with pytest.raises(ParameterError, match="numeric"):
        score(np.array(["a", "b"], dtype=object), np.array([1.0, 2.0]), "regression")


def test_bad_input_is_a_clear_error():
    with pytest.raises(ParameterError, match="same rows"):
        model_performance([1, 2], [1], task="regression")
    with pytest.raises(ParameterError, match="task"):
        model_performance([1], [1], task="ranking")
    with pytest.raises(ParameterError, match="no labelled rows"):
        model_performance([], [], task="classification")
    with pytest.raises(ParameterError, match="numeric"):
        model_performance(["a", "b"], [1.0, 2.0], task="regression")


# ---------------------------------------------------------------------- figures
def test_confusion_matrix_figure_counts_by_class_name(binary):
    y, pred, score = binary
    perf = model_performance(y, pred, task="classification", class_names=NAMES, rows="test split")
    fig = F.confusion_matrix_figure(perf)
    (heat,) = fig.data
    assert list(heat.x) == ["rejected", "approved"] == list(heat.y)
    assert heat.meta["counts"] == skm.confusion_matrix(y, pred).tolist()
    assert "output =" not in fig.to_json()


def test_roc_and_pr_figures_carry_the_areas_and_thin_long_curves():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 20_000)
    score = np.clip(0.3 * y + 0.7 * rng.random(20_000), 0, 1)
    perf = model_performance(y, (score > 0.5).astype(int), task="classification", scores=score, classes=[0, 1],
                             positive=1, class_names=NAMES)
    roc = F.roc_curve_figure(perf)
    (curve,) = [t for t in roc.data if t.meta["kind"] == "roc"]
    assert curve.meta["auc"] == pytest.approx(perf.roc["auc"]) and len(curve.x) <= 1000
    assert (curve.x[0], curve.x[-1]) == (0.0, 1.0)  # end points kept when thinned
    assert "approved" in roc.layout.title.text
    pr = F.pr_curve_figure(perf)
    (curve,) = [t for t in pr.data if t.meta["kind"] == "pr"]
    assert curve.meta["average_precision"] == pytest.approx(perf.pr["average_precision"]) and len(curve.x) <= 1000


def test_residual_plot_samples_deterministically():
    rng = np.random.default_rng(2)
    y = rng.normal(size=9000)
    perf = model_performance(y, y * 0.9, task="regression")
    fig = F.residual_plot(perf, max_points=2000)
    assert fig.layout.meta["n_points"] == 2000 and fig.layout.meta["n_rows"] == 9000
    assert fig.to_json() == F.residual_plot(perf, max_points=2000).to_json()
    assert "random sample of 2,000" in fig.layout.title.subtitle.text


def test_figures_refuse_the_wrong_kind_of_performance(binary):
    y, pred, _ = binary
    clf = model_performance(y, pred, task="classification")
    reg = model_performance(y.astype(float), pred.astype(float), task="regression")
    with pytest.raises(ParameterError, match="regression"):
        F.residual_plot(clf)
    with pytest.raises(ParameterError, match="classification"):
        F.confusion_matrix_figure(reg)
    with pytest.raises(ParameterError, match="ROC"):
        F.roc_curve_figure(clf)  # no scores: no curve
    assert isinstance(clf, ModelPerformance)
