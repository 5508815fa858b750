# One command sets up and runs each job on a fresh machine (Python >= 3.11, Java 17 and Maven for Kafka).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup check demo scan test test-fast bench bench-quality bench-engine kafka-start kafka-stop clean

$(BIN)/.installed-dev: pyproject.toml
	@echo "== make setup: $(VENV) and the project's packages, the native fingerprint built with cargo (minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/pip install -q -e '.[dev]'
	touch $@

setup: $(BIN)/.installed-dev
	@scripts/install-browser

## The main job: the end-to-end demo (local broker, topics, worker, sample replay, live verdicts).
demo: setup
	scripts/demo

scan: setup
	@out=$$(mktemp -d -t neardup-scan-XXXXXX); \
	$(BIN)/neardup scan sample -o $$out/sample-verdicts.jsonl && \
	$(BIN)/python -c "import json,sys; v=[json.loads(l) for l in open(sys.argv[1])]; \
	d=[x for x in v if x['verdict']=='duplicate']; [print(f\"{x['id']:>14} duplicate-of {x['duplicate_of']:<14} distance {x['distance']}\") for x in d[:15]]; \
	print(f'... {len(v)} events, {len(d)} duplicates (distance: fingerprint bits that differ, of 64)')" $$out/sample-verdicts.jsonl; \
	status=$$?; rm -rf $$out; exit $$status

## The test suite (lint, format, types, then unit, property, RocksDB and Kafka integration); CI runs exactly this.
test: setup check
	$(BIN)/pytest -n 2 --dist loadgroup

## Lint, format and types only (also the first step of `make test`).
check: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test-fast: setup
	$(BIN)/pytest -n 2 -m "not kafka"

bench-quality: setup
	$(BIN)/python bench/quality.py

bench-engine: setup
	$(BIN)/python bench/engine.py

bench: bench-quality bench-engine

kafka-start:
	PYTHON=$(abspath $(BIN))/python scripts/kafka-local start

kafka-stop:
	scripts/kafka-local stop

clean:
	rm -rf $(VENV)
