"""FACE-2 (Table 1, Figure 5): valid-cell ratios over model-size pairs, their bootstrap, the
Table 1 layout and the smoothed per-text spectra."""
