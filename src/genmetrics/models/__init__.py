"""Checkpoints: fetching and loading models (GGUF conversion included), the papers' model
presets, and tokens per word (word budgets as token budgets)."""
