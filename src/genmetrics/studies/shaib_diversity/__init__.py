"""Shaib et al. (2024): the diversity tables (raw and cut, length correlation, rank stability)
and the runtime study (Fig. 3) against the `diversity` package."""
