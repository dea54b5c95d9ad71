from snakemake.utils import min_version

min_version("9.20")  # as pyproject: Snakemake 9 profiles, `use rule ... with:`


# The default config, unless --configfile names another: configs are then used whole, not
# merged into the default one.
if not workflow.overwrite_configfiles:

    configfile: "config.yaml"


report: "workflow/report/workflow.rst"


# PLAN: the config validated against workflow/schemas/config.schema.yaml (its defaults
# filled), names cross-checked and every metric entry's params checked (genmetrics.plan).
include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/models.smk"
include: "rules/generate.smk"
include: "rules/features.smk"
include: "rules/metrics.smk"
include: "rules/analysis.smk"
include: "rules/report.smk"
include: "rules/omniinput.smk"
include: "rules/agreement.smk"


rule all:
    input:
        TARGETS.all,
