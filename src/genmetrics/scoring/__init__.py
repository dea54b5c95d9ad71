"""Scoring: a registered metric on files or on loaded inputs, one workflow score job, length
control, the interval over prompts, and texts given on the command line (featurized on the fly).

Use :func:`genmetrics.scoring.score_files` (the CLI's ``genmetrics score`` calls it)."""

from genmetrics.scoring.from_files import score_files, score_loaded

__all__ = ["score_files", "score_loaded"]
