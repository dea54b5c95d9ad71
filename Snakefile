from snakemake.utils import min_version

from genmetrics.config import validate_config

min_version("9.0")


# The default config, unless --configfile names another: configs are then used whole, not
# merged into the default one.
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


validate_config(config, workflow.source_path("workflow/schemas/config.schema.yaml"))


report: "workflow/report/workflow.rst"


include: "rules/common.smk"


wildcard_constraints:
    dataset=_names(DATASETS),
    model=_names(MODELS),
    checkpoint=_names(CHECKPOINTS),
    featurizer=_names(FEATURIZERS),
    evaluator=_names(EVALUATORS),
    metric=_names(METRICS),
    seed=r"\d+",
    shard=r"\d+",
    source=source_pattern(),


include: "rules/data.smk"
include: "rules/models.smk"
include: "rules/generate.smk"
include: "rules/features.smk"
include: "rules/metrics.smk"
include: "rules/analysis.smk"
include: "rules/report.smk"


rule all:
    input:
        all_targets(),
