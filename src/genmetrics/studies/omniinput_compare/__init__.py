"""The OmniInput comparison study: a trained classifier target, AUPR of models over sampler
seeds, and two annotators on the same samples."""
