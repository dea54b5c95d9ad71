"""genmetrics: evaluate open-ended generation of language models as distributions."""

# The only place the version is written: pyproject.toml reads it (tool.setuptools.dynamic).
__version__ = "0.1.0"


class GenmetricsError(ValueError):
    """A user-facing error: bad input, bad config or bad parameters.

    The message always names what is wrong (file, line, config key or parameter).
    """
