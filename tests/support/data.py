"""Shared test data for the engine tests."""
import numpy as np
import pandas as pd


def figure1():
    """The paper's Figure 1: two blue rules; sparsity beats feasibility where x1 <= 3 and x2 <= 5."""
    g = np.arange(0.25, 10.01, 0.25)
    x1, x2 = np.meshgrid(g, g)
    X = pd.DataFrame({"x1": x1.ravel(), "x2": x2.ravel()})
    blue = ((X.x1 > 3) & (X.x2 > 5)) | ((X.x1 <= 1) & (X.x2 <= 5))
    return X, np.where(blue, "blue", "red")


def mixed(n=600, seed=0):
    """Numeric and categorical features with a known rule-like model."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "age": rng.integers(18, 70, n),
        "income": np.round(rng.gamma(3, 15, n), 1),
        "job": rng.choice(["clerk", "manager", "nurse", "driver", "teacher"], n),
        "owner": rng.choice(["yes", "no"], n),
    })
    y = (((X.income > 40) & (X.job.isin(["manager", "teacher"]))) | ((X.age > 50) & (X.owner == "yes"))).astype(int)
    return X, y.to_numpy()


def diagonal_model(Z):
    """A smooth diagonal boundary: axis-aligned rules fit it only on average, so nearest points often fail."""
    score = Z["income"].astype(float) + 0.8 * Z["age"].astype(float) + np.where(Z["job"].isin(["manager", "teacher"]), 15, 0)
    return (score > 85).astype(int).to_numpy()


def owner_model(Z):
    """Depends on a feature the rules rarely name (owner), so some rows need a change beyond the rules."""
    return (diagonal_model(Z) & (Z["owner"] == "yes").to_numpy()).astype(int)
