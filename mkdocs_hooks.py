"""MkDocs hook of the documentation site: the docstrings' Sphinx roles (``:func:`x```, which
mkdocstrings leaves as text) are shown as plain code."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|obj|exc):(?=<code>)")


def on_page_content(html: str, **kwargs) -> str:
    return ROLE.sub("", html)
