from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


validate(config, schema="workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/models.smk"
include: "rules/generate.smk"
include: "rules/features.smk"
include: "rules/metrics.smk"
include: "rules/report.smk"


rule all:
    input:
        all_targets(),
