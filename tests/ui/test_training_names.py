"""In-app training: column names a model library rejects still train, and a library's own error is a
TrainingError with its message, never a raw ValueError."""
import numpy as np
import pandas as pd
import pytest

from tcrex.ui.state.training import ALGORITHMS, TrainingError, train_model

NAMES = ["income [EUR]", "age<30", "score]", "[x]<y"]


def _frame(n=240, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({NAMES[0]: rng.gamma(3, 15, n), NAMES[1]: rng.integers(0, 2, n),
                       NAMES[2]: rng.normal(size=n), NAMES[3]: rng.choice(["a<b", "c]"], n)})
    df["label"] = ((df[NAMES[0]] > 40) | (df[NAMES[3]] == "c]")).astype(int)
    return df


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_names_with_brackets_and_less_than_train_and_predict(algorithm):
    df = _frame()
    m = train_model(df, NAMES, "label", [NAMES[3]], df.index[:180], df.index[180:], algorithm)
    assert m.holdout_score is not None and m.holdout_score > 0.7
    assert m.feature_names == NAMES  # the model's inputs keep the user's names
    assert set(m.library_names.values()) >= {NAMES[0], NAMES[1], NAMES[2]}  # mapped back for display
    assert all(n.startswith("f") for n in m.library_names)
    pred = m.predict(df[NAMES].iloc[::-1].head(20))  # by name, any column order
    assert len(pred) == 20 and set(pred) <= {0, 1}


def test_a_library_value_error_is_a_training_error():
    df = _frame()
    df.loc[3, NAMES[0]] = np.inf  # scikit-learn refuses infinite inputs with a ValueError
    with pytest.raises(TrainingError, match="could not be trained on this data: .*[Ii]nfinity"):
        train_model(df, NAMES[:3], "label", [], df.index[:180], df.index[180:], "linear")
