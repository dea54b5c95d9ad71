"""Analyses across scores: distribution spread and sweeps, length control, correlations."""
