"""Fitting: the surrogate and its candidate rules, the targets, the grid, the rules and metarules, the fitted state."""
