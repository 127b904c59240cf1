"""Recourse: counterfactual points, the search for advice the model confirms, verification, effectiveness."""
