"""Features computed from texts: LM embeddings, per-token surprisal, POS tags."""
