"""The run plan: a workflow config, checked and resolved once, as typed objects.

One module per idea:

==============  ==================================================================
module          what it holds
==============  ==================================================================
``load``        :func:`load_plan`: the config validated (schema defaults filled),
                names cross-checked, every entry's params checked by its metric
``objects``     the typed model of a run: datasets, checkpoints, models,
                featurizers/evaluators, metric entries
``variants``    a few-shot dataset's ``n`` sweep: one dataset ``<name>-n<k>`` per n,
                and the plan's datasets a config name means
``core``        :class:`Plan`: the objects plus the queries below, one part each
``inputs``      the files a job reads where they depend on the config
``jobs``        each job's params (settings and code digests)
``resources``   cluster resources of the GPU rules
``targets``     the target lists of ``all``, ``omniinput``, ``agreement``
==============  ==================================================================

Rules only wire: result paths come from :mod:`genmetrics.paths`; per-job inputs, params and
target lists from the plan. A per-model job's params depend only on that model (and on
settings that concern it), never on the model list; params are dicts with sorted keys, so
reordering config.yaml triggers no rerun.
"""

from genmetrics.params import canonical
from genmetrics.plan.core import Plan
from genmetrics.plan.load import load_plan
from genmetrics.plan.objects import names_pattern, split_part

__all__ = ["Plan", "canonical", "load_plan", "names_pattern", "split_part"]
