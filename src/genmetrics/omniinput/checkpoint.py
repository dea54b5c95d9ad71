"""The Wang–Landau sampler's checkpoint: an ``.npz`` to resume a run from.

Arrays S, H, visited, tokens, z, gradient (gradient proposal), reservoir and its counts (the
walk's state, :meth:`genmetrics.omniinput.sampler._Walk.arrays`), plus a 0-d ``state`` JSON
string with ln f, counters, the settings (with :data:`CHECKPOINT_FORMAT`), the workflow's
``key`` and the RNG state (``bit_generator.state``). Written atomically (no pickle), read back
bounded and without pickle. A checkpoint written under another ``key`` is not resumed; one
written with other settings is an error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.npz import load_npz, save_npz

_log = logging.getLogger("genmetrics")
CHECKPOINT_FORMAT = 1


def read_checkpoint(
    ckpt: Path | None, key: str | None, settings: Mapping[str, Any]
) -> tuple[dict[str, np.ndarray] | None, dict[str, Any]]:
    """(arrays, state) of a checkpoint to resume, or (None, {}) when there is none to resume
    (no file, or one written under another ``key``). A checkpoint whose settings differ from
    ``settings`` raises GenmetricsError."""
    if ckpt is None or not ckpt.exists():
        return None, {}
    arrays = load_npz(ckpt, required=("state",))
    try:
        state = json.loads(str(arrays.pop("state")))
    except json.JSONDecodeError as e:
        raise GenmetricsError(f"{ckpt}: checkpoint 'state' is not JSON ({e.msg})") from None
    if key is not None and state.get("key") != key:
        _log.info("wang_landau: %s was written for other settings; starting afresh", ckpt)
        return None, {}
    for name, value in settings.items():
        if state.get("settings", {}).get(name) != value:
            raise GenmetricsError(
                f"{ckpt}: checkpoint was written with {name}="
                f"{state.get('settings', {}).get(name)!r}, this run has {name}={value!r}; "
                "delete the checkpoint or use the same settings"
            )
    return arrays, state


def write_checkpoint(
    ckpt: Path, arrays: Mapping[str, np.ndarray], state: Mapping[str, Any]
) -> None:
    """Write the walk's ``arrays`` and its ``state`` (as a 0-d JSON string) atomically."""
    save_npz(ckpt, **arrays, state=np.array(json.dumps(state)))
