# genmetrics: `make demo` runs the default workflow, `make test` runs the test suite.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CORES  ?= 2
PYTEST_ARGS ?=

.PHONY: plan webtext-plan pr-scale-plan biographies-plan creative-plan chat-vs-base-plan summary-diversity-plan instruction-diversity-plan instruction-sets-plan omniinput-compare-plan agreement-plan agnews-experiment-plan gpt2-decoding-plan face-scaling-plan omniinput-toy-plan omniinput-plan runtime-plan face-real-data-plan face-agreement-plan test-run studies webtext pr-scale biographies creative chat-vs-base summary-diversity instruction-diversity instruction-sets runtime omniinput-compare agreement agnews-experiment gpt2-decoding face-scaling face-real-data face-agreement omniinput-toy omniinput demo test test-slow test-slurm test-all install install-test install-docs docs lint format dry-run report bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "setuptools<82" wheel

# torch is pinned to the CPU wheel (2.13.0) before anything else can pull a CUDA build;
# `all` = the light core + every extra (models, text, approx, plots, workflow).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[all]"
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ".[all,test]"
	# the `diversity` package is an oracle only; its own dependencies (spaCy, evaluate, ...) are not needed
	$(BIN)/python -m pip install --quiet --no-deps diversity==0.3.1
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

$(VENV)/.installed-docs: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ".[all,docs]"
	touch $@

install-docs: $(VENV)/.installed-docs

# The documentation site (mkdocs.yml, docs/) into site/: offline, warnings are errors
docs: install-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "Site: site/index.html"

# The run, then its report (as `make report`). On CPU cores, one thread per model job and
# several jobs at once: two single-thread generate jobs are 1.4x faster than one job on two
# threads on 2 cores, with the same texts (torch's small batched matrix products scale badly).
LOCAL_THREADS := --set-threads generate=1 embed=1 surprisal=1 score_with_model=1
demo: install
	$(BIN)/snakemake --cores $(CORES) $(LOCAL_THREADS) --configfile config.yaml --rerun-incomplete
	$(BIN)/snakemake --cores $(CORES) --configfile config.yaml --report results/snakemake_report.html --report-stylesheet workflow/report/stylesheet.css
	@echo "Scores: results/scores.csv  Figures: results/figures/"
	@echo "Report: results/snakemake_report.html (one-page summary: results/report.html)"

# The report of the finished `make demo` run (Snakemake's): every figure and table with its
# caption, the workflow and run times; results/report.html is its one-page summary
report: install
	$(BIN)/snakemake --cores $(CORES) --configfile config.yaml --report results/snakemake_report.html --report-stylesheet workflow/report/stylesheet.css
	@echo "Report: results/snakemake_report.html"

# two pytest-xdist workers; a test file stays on one worker, the slowest start first
# (tests/conftest.py)
TEST_WORKERS ?= 2
test: install-test
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=25 -m "not slow and not slurm" $(PYTEST_ARGS)

# the slow tests, and the fuzz tests (tests/test_fuzz_inputs.py) with the long Hypothesis budget
test-slow: install-test
	HYPOTHESIS_PROFILE=long $(BIN)/python -m pytest -m "slow or fuzz" $(PYTEST_ARGS)

# a real one-node SLURM (.ci/slurm-up.sh, as root) running `snakemake --profile cluster`
test-slurm: install-test
	$(BIN)/python -m pytest -m slurm -s $(PYTEST_ARGS) tests/test_slurm.py

test-all: install-test
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The offline test run by hand (the run `make test` checks): .test/config.yaml on 32 texts with a
# tiny random LM, no download -> results/test/. Its numbers mean nothing; a few minutes.
test-run: install
	$(BIN)/python -m genmetrics.testing.tiny_lm tiny-model results/test/tiny-model
	GENMETRICS_TINY_MODEL=$(CURDIR)/results/test/tiny-model $(BIN)/snakemake --cores $(CORES) --set-threads generate=1 embed=1 surprisal=1 --scheduler greedy --configfile .test/config.yaml --config results_dir=results/test

dry-run: install
	$(BIN)/snakemake -n --cores $(CORES)

lint: install-test
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/ruff check src tests benchmarks workflow/scripts
	$(BIN)/ruff format --check src tests benchmarks workflow/scripts

format: install-test
	$(BIN)/snakefmt Snakefile rules/
	$(BIN)/ruff format src tests benchmarks workflow/scripts
	$(BIN)/ruff check --fix src tests benchmarks workflow/scripts

bench: install-test
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf results .snakemake site

# What a study will do, before it runs (nothing runs: `snakemake -n`): the jobs per rule, the
# generate jobs with their texts x tokens, the outputs to read and an estimated time on 2 cores
# from the demo's measured job costs (resources/plan/job_seconds.tsv). PROFILE=paper adds the
# overlay configs/profiles/<study>-paper.yaml (the paper's models, N, lengths, seeds, featurizer)
# and the compute the paper reports for that work. `make webtext-plan PROFILE=paper` is
# `make plan STUDY=webtext PROFILE=paper`; every Snakemake study has its <study>-plan.
STUDY ?= webtext
PROFILE ?=
plan: install
	$(BIN)/python -m genmetrics.plan.study_plan $(STUDY) --cores $(CORES) $(if $(PROFILE),--profile $(PROFILE))

STUDY_PLANS := webtext-plan pr-scale-plan biographies-plan creative-plan chat-vs-base-plan summary-diversity-plan instruction-diversity-plan instruction-sets-plan omniinput-compare-plan agreement-plan agnews-experiment-plan gpt2-decoding-plan face-scaling-plan omniinput-toy-plan omniinput-plan runtime-plan face-real-data-plan face-agreement-plan
$(STUDY_PLANS): install
	$(BIN)/python -m genmetrics.plan.study_plan $(@:-plan=) --cores $(CORES) $(if $(PROFILE),--profile $(PROFILE))

# Every study passes --rerun-incomplete: an interrupted run resumes with the same command and
# redoes the jobs it was in (as the demo does).
# The precision/recall paper's studies (Le Bronnec et al. 2024; docs/studies.md): each a ready
# config at 2-core size on the registry models and ../shared/data, writing results/<study>/.
# webtext: the P/R plane with 2-sigma ellipses (Fig. 1), MAUVE bars (Fig. B.2), the variance
# split (Table B.4) and the N and k sweeps (Fig. 6 / B.1).
webtext: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete all sweeps --configfile configs/webtext.yaml
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete webtext_side_by_side --configfile configs/webtext.yaml

# pr-scale: P/R at sizes that can show the effects, on texts that exist (no generation): the N
# sweep to 981 per side and the k sweep (GPT-2 samples against WebText, Fig. 6 / B.1), P and R
# per model size with intervals (GPT-2 117M / 1.5B; GPT-Neo 2.7B / GPT-J 6B / GPT-NeoX 20B on
# three DetectGPT domains), Fig. A.5's correlations with PRD's F_8 and F_1/8, and the paper's
# numbers beside ours (analysis/pr_scale_side_by_side.md). About 7 min on 2 shared cores.
pr-scale: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete all sweeps pr_scale_comparison --configfile configs/pr_scale.yaml

# biographies: WikiText-2 paragraphs with n in-context examples; P/R against n (Fig. 8) and the
# correlation table of P, R, MAUVE, Self-BLEU and Distinct-4 across models (Fig. 7).
biographies: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete --configfile configs/biographies.yaml
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete biographies_side_by_side --configfile configs/biographies.yaml

# creative: 50 creative-writing prompts, several samples per prompt; the model x model table (Table 1).
creative: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete --configfile configs/creative.yaml
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete creative_side_by_side --configfile configs/creative.yaml

# chat-vs-base: the same WebText prompts through a chat model and its base model.
chat-vs-base: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete --configfile configs/chat_vs_base.yaml
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete chat_vs_base_side_by_side --configfile configs/chat_vs_base.yaml

# The diversity paper's studies (Shaib et al. 2024; docs/studies.md "The diversity paper's and
# OmniInput's experiments"), on real system outputs in ../shared/data (nothing generated).
# summary-diversity: 25 CNN/DM systems (REALSumm) and 4 XSum systems: every diversity score per
# system raw and truncated (Tables 3-5, 7), length correlation (Table 6), CNN/DM-XSum stability
# (Table 2), the score heatmap with ROUGE-1 and BERTScore (Fig. 2).
summary-diversity: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete --configfile configs/summary_diversity.yaml

# instruction-diversity: ten chat models' AlpacaEval responses (our extension: the paper scores
# no responses; its Tables 9, 13 are the instruction-sets study below).
instruction-diversity: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete --configfile configs/instruction_diversity.yaml

# instruction-sets: the *instructions* of instruction sets compared with each other (§10.2,
# App. A.4-A.5, Tables 9, 12, 13): CR, CR: POS, self-repetition and NGD per set, whole and
# downsampled to the smallest set then cut, beside the paper's numbers. The sets are the five
# source subsets of AlpacaEval's 805 instructions (the paper's training sets are not offline)
# -> results/instruction-sets/analysis/instruction_sets.md. About 1.5 min on 2 shared cores.
instruction-sets: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete --configfile configs/instruction_sets.yaml

# runtime: the time of every Shaib et al. (2024) diversity score as the number of texts grows,
# ours and the `diversity` package's on the same REALSumm summaries (their Fig. 3) ->
# results/runtime/runtime.{csv,md,json,png}. The package is in the test install. About 10 min.
runtime: install-test
	$(BIN)/python benchmarks/bench_diversity_runtime.py --out results/runtime

studies: webtext pr-scale biographies creative chat-vs-base summary-diversity instruction-diversity instruction-sets runtime omniinput-compare

# Controlled P/R experiment on AG News (Le Bronnec et al. 2024, Fig. 2); needs ../shared/data.
agnews-experiment: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete --configfile configs/agnews_pr.yaml
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete agnews_side_by_side --configfile configs/agnews_pr.yaml

# Diversity scores of GPT-2 1.5B decoding settings (T=1, top-k 40, T=0.7); needs ../shared/data.
gpt2-decoding: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete --configfile configs/gpt2_decoding.yaml

# FACE-2 scaling check (Liu et al. 2025, Table 2) on the Fast-DetectGPT continuations; needs ../shared/data.
face-scaling: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete --configfile configs/face_scaling.yaml

# FACE on stored surprisal (WebText vs GPT-2 samples; the FACE paper's size pairs), printing the tables.
face-real-data: install-test
	$(BIN)/python -m pytest -q -s tests/test_face_real_data.py

# FACE vs human A/B judgments (contrastive search, RankGen) with SmolLM2 surprisal; needs ../shared/data.
face-agreement: install-test
	$(BIN)/python -m pytest -q -s -m slow tests/test_face_agreement.py

# OmniInput toy validation (Liu et al. §3.2): digit GPT-2, exact enumeration vs Wang-Landau
# (uniform and gradient proposals) and Monte Carlo at equal budgets -> results/omniinput/toy/validation.json
omniinput-toy: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete omniinput_toy

# The toy and the SmolLM2 run (8-token inputs, judge-LM annotator): PR curves and samples per bin
omniinput: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete omniinput

# OmniInput study (Liu et al. §3.3, §3.4, Table 1): SmolLM2 vs Gemma-3 at 25 and 100 tokens (AUPR
# over 3 sampler seeds), a classifier's logit as the target (AG News Sports, trained here), two
# judge LMs on the same samples. About 15-20 min on 2 cores.
omniinput-compare: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete omniinput --configfile configs/omniinput_compare.yaml
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete omniinput_compare_side_by_side --configfile configs/omniinput_compare.yaml

# Agreement of metrics with human judgments (REALSumm, XSum hallucinations, HANNA, contrastive
# search and RankGen A/B) -> results/human-agreement/agreement/summary.md, figures and a
# Snakemake report; needs ../shared/data. About 5 min on 2 cores.
agreement: install
	$(BIN)/snakemake --cores $(CORES) --rerun-incomplete agreement --configfile configs/agreement.yaml
	$(BIN)/snakemake --cores $(CORES) --configfile configs/agreement.yaml --report results/human-agreement/report.html
	@echo "Summary: results/human-agreement/agreement/summary.md  Report: results/human-agreement/report.html"
