# Analyses across scores: seed/reference spread, P/R sweeps over N and k, length control,
# the diversity study's tables (per source raw and truncated, length, stability),
# FACE-2's scaling check (valid-cell ratio, its Table 1, smoothed spectra per model size).
# The rank agreement of models across featurizers.


rule spread:
    input:
        # candidates (every seed of {model}): the entry's input files; the reference's too, or
        # with references: redraw each draw's (RESULTS.embeddings of references/draw<seed>)
        # and RESULTS.reference_draw_stats (its pool)
        unpack(per_job(PLAN.spread_inputs)),
    output:
        RESULTS.spread,
    log:
        RESULTS.log("spread/{dataset}/{model}/{entry}.log"),
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        settings=per_job(PLAN.spread_settings),
        code=script_code("spread.py"),
    script:
        "../workflow/scripts/spread.py"


rule spread_table:
    input:
        TARGETS.spreads,
    output:
        RESULTS.spread_table,
    log:
        RESULTS.log("spread_table.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        code=script_code("spread_table.py"),
    script:
        "../workflow/scripts/spread_table.py"


rule sweep:
    input:
        # reference and candidate: the entry's input files (RESULTS.embeddings)
        unpack(per_job(PLAN.sweep_inputs)),
    output:
        RESULTS.sweep,
    log:
        RESULTS.log("sweep/{dataset}/{source}/{entry}.log"),
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        settings=per_job(PLAN.sweep_settings),
        code=script_code("sweep.py"),
    script:
        "../workflow/scripts/sweep.py"


rule sweep_figure:
    input:
        TARGETS.sweeps,
    output:
        report(
            RESULTS.sweep_figure,
            caption="../workflow/report/pr_sweep.rst",
            category="Precision and recall",
            labels={
                "figure": "Precision and recall against N and k",
                "shows": "mean over runs at each sample size and neighbourhood",
            },
        ),
    log:
        RESULTS.log("sweep_figure.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("sweep_figure.py"),
    script:
        "../workflow/scripts/sweep_figure.py"


# Optional target (Le Bronnec et al. (2024), Fig. 6/B.1): `snakemake sweeps`.
rule sweeps:
    input:
        RESULTS.sweep_figure,


# Optional target of configs/pr_scale.yaml (`snakemake pr_scale_comparison`): P and R per model
# size with their trend, and the paper's numbers beside ours (Le Bronnec et al. (2024)).
rule pr_scale_comparison:
    input:
        scores=RESULTS.scores,
        correlation=RESULTS.correlation_table,
        # RESULTS.sweep of every swept source
        sweeps=TARGETS.sweeps,
    output:
        sizes=RESULTS.pr_scale_sizes,
        table=RESULTS.pr_scale_side_by_side,
        markdown=RESULTS.pr_scale_markdown,
    log:
        RESULTS.log("pr_scale_comparison.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        code=script_code("pr_scale_comparison.py"),
    script:
        "../workflow/scripts/pr_scale_comparison.py"


rule length_analysis:
    input:
        RESULTS.scores,
    output:
        table=RESULTS.length_table,
        figure=report(
            RESULTS.length_figure,
            caption="../workflow/report/length.rst",
            category="Length control",
        ),
    log:
        RESULTS.log("length_analysis.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("length_analysis.py"),
    script:
        "../workflow/scripts/length_analysis.py"


rule diversity_tables:
    input:
        RESULTS.scores,
    output:
        table=report(
            RESULTS.diversity_table,
            caption="../workflow/report/diversity_tables.rst",
            category="Diversity",
        ),
        length=RESULTS.diversity_length,
        stability=RESULTS.diversity_stability,
        markdown=RESULTS.diversity_markdown,
    log:
        RESULTS.log("diversity_tables.log"),
    conda:
        "../envs/plots.yaml"
    params:
        # analysis.diversity checked: the columns (raw entry, truncated twin), the stability
        settings=PLAN.diversity or {},
        code=script_code("diversity_tables.py"),
    script:
        "../workflow/scripts/diversity_tables.py"


# The paper's numbers beside ours (analysis.diversity.paper; Shaib et al. (2024), Tables 2-7)
rule diversity_side_by_side:
    input:
        scores=RESULTS.scores,
        table=RESULTS.diversity_table,
        length=RESULTS.diversity_length,
        stability=RESULTS.diversity_stability,
        # resources/papers/<analysis.diversity.paper.table>.csv of the checkout
        paper=[
            str(Path(workflow.basedir, p))
            for p in [((PLAN.diversity or {}).get("paper") or {}).get("path")]
            if p
        ],
    output:
        table=RESULTS.diversity_side_by_side,
        markdown=RESULTS.diversity_side_by_side_markdown,
    log:
        RESULTS.log("diversity_side_by_side.log"),
    conda:
        "../envs/plots.yaml"
    params:
        settings=PLAN.diversity or {},
        code=script_code("diversity_side_by_side.py"),
    script:
        "../workflow/scripts/diversity_side_by_side.py"


rule pr_curves:
    input:
        TARGETS.pr_curves_scores,
    output:
        report(
            RESULTS.pr_curves_figure,
            caption="../workflow/report/pr_curves.rst",
            category="Precision and recall",
            labels={
                "figure": "Precision–recall curves (PRD)",
                "shows": "precision against recall over λ, one curve per model and seed",
            },
        ),
    log:
        RESULTS.log("pr_curves.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("pr_curves.py"),
    script:
        "../workflow/scripts/pr_curves.py"


rule scaling:
    input:
        # scores: RESULTS.score of every (entry, model) cell; inputs: their surprisal files
        unpack(per_job(PLAN.scaling_inputs)),
    output:
        table=RESULTS.scaling_table,
        markdown=RESULTS.scaling_markdown,
        cells=RESULTS.scaling_cells,
        # FACE-2's Table 1 layout: rows of the paper, columns per dataset and language
        table1=report(
            RESULTS.scaling_table1,
            caption="../workflow/report/scaling_table1.rst",
            category="Scaling (FACE-2)",
        ),
        table1_markdown=RESULTS.scaling_table1_markdown,
        # FACE-2's Table 2 (best over evaluators, beside the baselines) and the paper's
        # Table 1/2 numbers beside ours (resources/papers/face-scaling.csv)
        table2_markdown=RESULTS.scaling_table2_markdown,
        paper=RESULTS.scaling_paper,
    log:
        RESULTS.log("scaling.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        settings=per_job(PLAN.scaling_settings),
        code=script_code("scaling.py"),
    script:
        "../workflow/scripts/scaling.py"


rule scaling_figure:
    input:
        RESULTS.scaling_table,
    output:
        report(
            RESULTS.scaling_figure,
            caption="../workflow/report/scaling.rst",
            category="Scaling (FACE-2)",
        ),
    log:
        RESULTS.log("scaling_figure.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("scaling_figure.py"),
    script:
        "../workflow/scripts/scaling_figure.py"


rule scaling_spectra:
    input:
        # the spectra entry's surprisal files (RESULTS.surprisal): humans and family models
        per_job(PLAN.scaling_spectra_inputs),
    output:
        report(
            RESULTS.scaling_spectra_figure,
            caption="../workflow/report/scaling_spectra.rst",
            category="Scaling (FACE-2)",
        ),
    log:
        RESULTS.log("scaling_spectra.log"),
    conda:
        "../envs/plots.yaml"
    params:
        settings=per_job(PLAN.scaling_spectra_settings),
        code=script_code("scaling_spectra.py"),
    script:
        "../workflow/scripts/scaling_spectra.py"


rule spectra_figure:
    input:
        TARGETS.spectra_scores,
    output:
        report(
            RESULTS.spectra_figure,
            caption="../workflow/report/spectra.rst",
            category="Surprisal spectra (FACE)",
            labels={
                "figure": "Surprisal spectra (FACE)",
                "shows": "mean spectra, and each text's SO (what the score averages)",
            },
        ),
    log:
        RESULTS.log("spectra_figure.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("spectra_figure.py"),
    script:
        "../workflow/scripts/spectra_figure.py"


# a target only (no work); figures and tables go to the cluster like every other job
localrules:
    sweeps,


# Repeated patterns (Shaib et al. (2024), Tables 1 and 10), made with analysis.patterns only.
rule repeated_patterns:
    input:
        # texts: RESULTS.references and RESULTS.generations of every source of {dataset};
        # pos: their RESULTS.pos (with pos_n); assets: the NLTK data (punkt sentences)
        unpack(per_job(PLAN.patterns_inputs)),
    output:
        table=RESULTS.patterns_table,
        markdown=report(
            RESULTS.patterns_markdown,
            caption="../workflow/report/patterns.rst",
            category="Repeated patterns",
        ),
    log:
        RESULTS.log("repeated_patterns/{dataset}.log"),
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        settings=per_job(PLAN.patterns_settings),
        code=script_code("repeated_patterns.py"),
    script:
        "../workflow/scripts/repeated_patterns.py"


# Instruction sets compared with each other (analysis.instruction_sets; Shaib et al. (2024),
# Tables 9, 12, 13): every score whole and downsampled-then-cut, beside the paper's numbers.
rule instruction_sets:
    input:
        # texts: RESULTS.generations of each set (imported instructions), in the sets' order;
        # assets: the NLTK data where a score reads POS tags
        **PLAN.instruction_sets_inputs(),
    output:
        table=RESULTS.instruction_sets_table,
        markdown=report(
            RESULTS.instruction_sets_markdown,
            caption="../workflow/report/instruction_sets.rst",
            category="Diversity",
        ),
        paper=RESULTS.instruction_sets_paper,
    log:
        RESULTS.log("instruction_sets.log"),
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        # analysis.instruction_sets checked, the dataset's language, the code digest
        settings=PLAN.instruction_sets_settings(),
        code=script_code("instruction_sets.py"),
    script:
        "../workflow/scripts/instruction_sets.py"


# How stable each ranking of models is across featurizers: made when two entries differ only
# in their featurizer (analysis.featurizer_robustness: false turns it off).
rule featurizer_robustness:
    input:
        # RESULTS.score of each such entry for every model and seed (its bootstrap replicates)
        PLAN.robustness_scores(),
    output:
        table=RESULTS.featurizer_robustness_table,
        markdown=RESULTS.featurizer_robustness_markdown,
        figure=report(
            RESULTS.featurizer_robustness_figure,
            caption="../workflow/report/featurizer_robustness.rst",
            category="Featurizer robustness",
        ),
    log:
        RESULTS.log("featurizer_robustness.log"),
    conda:
        "../envs/plots.yaml"
    params:
        # the groups (entries, featurizers, headline values and directions), the code digest
        settings=PLAN.robustness_settings(),
        code=script_code("featurizer_robustness.py"),
    script:
        "../workflow/scripts/featurizer_robustness.py"


# Optional targets of the P/R paper's studies and omniinput-compare (`snakemake
# <study>_side_by_side`, run by each study's make target): the paper's numbers
# (resources/papers/<study>.csv) beside ours (studies.pr_llm.side_by_side).
# Fig. 7 pooled as Le Bronnec et al. (2024) pool it: across the (model, n) runs, raw values,
# seeds averaged, a bootstrap interval over runs (analysis.run_correlation).
rule run_correlation:
    input:
        scores=RESULTS.scores,
    output:
        table=RESULTS.run_correlation,
    log:
        RESULTS.log("run_correlation.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        variants=PLAN.few_shot_variants(),
        n_boot=PLAN.report["bootstrap"],
        seed=PLAN.report["seed"],
        code=script_code("run_correlation.py"),
    script:
        "../workflow/scripts/run_correlation.py"


rule biographies_side_by_side:
    input:
        scores=RESULTS.scores,
        correlation=RESULTS.run_correlation,
    output:
        table=RESULTS.side_by_side.format(study="biographies"),
        markdown=RESULTS.side_by_side_markdown.format(study="biographies"),
    log:
        RESULTS.log("side_by_side/biographies.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        study="biographies",
        variants=PLAN.few_shot_variants(),
        templates=PLAN.model_templates(),
        checkpoints={n: m.checkpoint for n, m in sorted(PLAN.models.items())},
        code=script_code("pr_llm_side_by_side.py"),
    script:
        "../workflow/scripts/pr_llm_side_by_side.py"


rule webtext_side_by_side:
    input:
        scores=RESULTS.scores,
        spread=RESULTS.spread_table,
        # RESULTS.sweep of every swept source
        sweeps=TARGETS.sweeps,
    output:
        table=RESULTS.side_by_side.format(study="webtext"),
        markdown=RESULTS.side_by_side_markdown.format(study="webtext"),
    log:
        RESULTS.log("side_by_side/webtext.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        study="webtext",
        templates=PLAN.model_templates(),
        checkpoints={n: m.checkpoint for n, m in sorted(PLAN.models.items())},
        code=script_code("pr_llm_side_by_side.py"),
    script:
        "../workflow/scripts/pr_llm_side_by_side.py"


rule chat_vs_base_side_by_side:
    input:
        scores=RESULTS.scores,
    output:
        table=RESULTS.side_by_side.format(study="chat-vs-base"),
        markdown=RESULTS.side_by_side_markdown.format(study="chat-vs-base"),
    log:
        RESULTS.log("side_by_side/chat-vs-base.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        study="chat-vs-base",
        templates=PLAN.model_templates(),
        checkpoints={n: m.checkpoint for n, m in sorted(PLAN.models.items())},
        code=script_code("pr_llm_side_by_side.py"),
    script:
        "../workflow/scripts/pr_llm_side_by_side.py"


rule creative_side_by_side:
    input:
        scores=RESULTS.scores,
    output:
        table=RESULTS.side_by_side.format(study="creative"),
        markdown=RESULTS.side_by_side_markdown.format(study="creative"),
    log:
        RESULTS.log("side_by_side/creative.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        study="creative",
        templates=PLAN.model_templates(),
        checkpoints={n: m.checkpoint for n, m in sorted(PLAN.models.items())},
        code=script_code("pr_llm_side_by_side.py"),
    script:
        "../workflow/scripts/pr_llm_side_by_side.py"


rule agnews_side_by_side:
    input:
        scores=RESULTS.scores,
    output:
        table=RESULTS.side_by_side.format(study="agnews-experiment"),
        markdown=RESULTS.side_by_side_markdown.format(study="agnews-experiment"),
    log:
        RESULTS.log("side_by_side/agnews-experiment.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        study="agnews-experiment",
        templates=PLAN.model_templates(),
        checkpoints={n: m.checkpoint for n, m in sorted(PLAN.models.items())},
        code=script_code("pr_llm_side_by_side.py"),
    script:
        "../workflow/scripts/pr_llm_side_by_side.py"


rule omniinput_compare_side_by_side:
    input:
        compare=[
            RESULTS.omni_compare_table.format(comparison=c)
            for c in PLAN.omniinput.comparisons
        ],
        variance=[
            RESULTS.omni_variance_table.format(variance=v)
            for v in PLAN.omniinput.variance
        ],
    output:
        table=RESULTS.side_by_side.format(study="omniinput-compare"),
        markdown=RESULTS.side_by_side_markdown.format(study="omniinput-compare"),
    log:
        RESULTS.log("side_by_side/omniinput-compare.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        study="omniinput-compare",
        comparisons=list(PLAN.omniinput.comparisons),
        variances=list(PLAN.omniinput.variance),
        # the variance runs whose z is a language model's mean NLL (Table 1's bins are NLL)
        nll_variances=[
            v
            for v, s in PLAN.omniinput.variance.items()
            if PLAN.omniinput.runs[s["run"]].classifier is None
        ],
        sizes={n: c.params_b for n, c in sorted(PLAN.checkpoints.items())},
        code=script_code("pr_llm_side_by_side.py"),
    script:
        "../workflow/scripts/pr_llm_side_by_side.py"


# Paired model-vs-model differences of every headline value from the score records' shared
# replicates over prompts (analysis.paired), and per dataset the matrix of significant ones.
rule paired_differences:
    input:
        TARGETS.scores,
    output:
        RESULTS.paired_table,
    log:
        RESULTS.log("paired_differences.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        code=script_code("paired_differences.py"),
    script:
        "../workflow/scripts/paired_differences.py"


rule paired_figure:
    input:
        RESULTS.paired_table,
    output:
        report(
            RESULTS.paired_figure,
            caption="../workflow/report/paired.rst",
            category="Paired comparisons",
        ),
    log:
        RESULTS.log("paired_figure/{dataset}.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("paired_figure.py"),
    script:
        "../workflow/scripts/paired_figure.py"


# The texts per side each headline value needs for a target interval width (analysis.sample_size).
rule sample_size:
    input:
        RESULTS.scores,
    output:
        RESULTS.sample_size_table,
    log:
        RESULTS.log("sample_size.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        code=script_code("sample_size.py"),
    script:
        "../workflow/scripts/sample_size.py"
