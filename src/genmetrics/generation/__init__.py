"""Generation: the transformers and vLLM backends of a generate job, and its resumable progress log."""
