"""Le Bronnec et al. (2024) at sizes that can show the effects (``configs/pr_scale.yaml``):
P and R per model size with their intervals, the trend against size, and the study's numbers
beside the paper's (``tables``)."""
