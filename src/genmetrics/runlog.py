"""Route a workflow script's stdout/stderr (progress bars included) to its Snakemake log file."""

from __future__ import annotations

import contextlib
import logging
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def log_to(path: str | Path | None) -> Iterator[logging.Logger]:
    """Tee stderr and stdout into ``path``; an exception is logged with its traceback, then
    re-raised so the job fails (Snakemake removes that job's outputs)."""
    logger = logging.getLogger("genmetrics")
    logger.setLevel(logging.INFO)
    if path is None:
        yield logger
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        handler = logging.StreamHandler(f)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
        old_err, old_out = sys.stderr, sys.stdout
        sys.stderr = sys.stdout = f
        try:
            yield logger
        except BaseException:
            traceback.print_exc(file=f)
            f.flush()
            old_err.write(f"genmetrics: job failed, see {path}:\n{traceback.format_exc(limit=1)}")
            raise
        finally:
            sys.stderr, sys.stdout = old_err, old_out
            logger.removeHandler(handler)
