# Two commands on a fresh Debian machine (see README.md):
#   make serve   install what is missing, build, start the server
#   make test    the same set-up, then go vet, mypy, go test -race and pytest
SHELL := /bin/bash
SERVER := bin/arktos-server
ARKTOS_ADDR ?= tcp://127.0.0.1:5555
GO_SOURCES := $(shell find . -name '*.go' -not -path './.venv/*') go.mod go.sum

# Go 1.26's experimental simd/archsimd package gives the AVX-512 kernels of
# comparisons, float sums and masks (ops/simd_amd64.go: 1.7-2.3x faster than
# the plain loops); a build without it, or a CPU without AVX-512, runs the
# plain loops, which give the same answers (get_config's "simd" says which).
# make test requires the kernels to be built (ops TestSIMDTaken).
export GOEXPERIMENT := simd

.PHONY: setup build serve test gotest pytest vet typecheck lint fuzz clean

setup:
	@bash scripts/setup.sh

$(SERVER): $(GO_SOURCES) Makefile
	go build -o $(SERVER) ./cmd/arktos-server

build: setup $(SERVER)

serve: build
	@echo "arktos-server on $(ARKTOS_ADDR). Connect from Python with:"
	@echo "  .venv/bin/python -c 'import arktos as ak; ak.connect(\"$(ARKTOS_ADDR)\"); print(ak.get_config())'"
	@echo "Stop it with Ctrl-C."
	exec ./$(SERVER) --addr $(ARKTOS_ADDR)

vet:
	go vet ./...

# The Python package, strictly (python/pyproject.toml [tool.mypy]).
typecheck: setup
	cd python && ../.venv/bin/python -m mypy

# ruff on python/ (rules in python/pyproject.toml [tool.ruff]).
lint: setup
	.venv/bin/python -m ruff check python

gotest:
	ARKTOS_SERVER_BIN=$(CURDIR)/$(SERVER) ARKTOS_REQUIRE_SIMD=1 go test -race -count=1 ./...

pytest:
	ARKTOS_SERVER_BIN=$(CURDIR)/$(SERVER) ARKTOS_REQUIRE_SIMD=1 .venv/bin/python -m pytest -q python/tests
	# The operations against numpy again with the AVX-512 kernels off
	# (--simd=false): the plain loops a CPU without AVX-512 runs.
	ARKTOS_SERVER_BIN=$(CURDIR)/$(SERVER) ARKTOS_TEST_SIMD=off .venv/bin/python -m pytest -q \
		python/tests/test_ops_elementwise.py python/tests/test_ops_reduce_create.py \
		python/tests/test_ops_index_sort.py python/tests/test_categorical.py

test: build vet typecheck lint gotest pytest

# Short fuzzing sessions of everything that parses bytes from the network or
# from files (not part of make test; the seed corpora run in go test).
# Minimizing is capped at 2 s an input: by default Go minimizes each new
# interesting input for up to 60 s, and with FuzzDirectReader's 20 KB Parquet
# seeds that took a whole 30 s session (it looked like a stall at 16 execs).
fuzz:
	go test -run '^$$' -fuzz FuzzDecodeRequest -fuzztime 30s -fuzzminimizetime 2s ./transfer/
	go test -run '^$$' -fuzz FuzzHeaderCodec -fuzztime 30s -fuzzminimizetime 2s ./transfer/
	go test -run '^$$' -fuzz FuzzDecompressFrame -fuzztime 30s -fuzzminimizetime 2s ./transfer/
	go test -run '^$$' -fuzz FuzzReadLane -fuzztime 30s -fuzzminimizetime 2s ./transfer/
	go test -run '^$$' -fuzz FuzzLane -fuzztime 30s -fuzzminimizetime 2s ./server/
	go test -run '^$$' -fuzz FuzzDirectReader -fuzztime 60s -fuzzminimizetime 2s ./arrowio/
	go test -run '^$$' -fuzz FuzzReadStrings -fuzztime 30s -fuzzminimizetime 2s ./arrowio/

clean:
	rm -rf bin

# The documentation site (user guide + API reference from docstrings) in site/.
# mkdocs and mkdocstrings go into .venv here only, not in make test.
.PHONY: docs
docs: setup
	@.venv/bin/python -c 'import mkdocs, mkdocstrings, mkdocstrings_handlers.python' 2>/dev/null || \
		.venv/bin/python -m pip install -q 'mkdocs>=1.5' 'mkdocstrings[python]>=0.24'
	.venv/bin/mkdocs build -f mkdocs.yml
	@echo "docs: open site/index.html, or serve them with .venv/bin/mkdocs serve"
