# Two commands on a fresh Debian machine (see README.md):
#   make serve   install what is missing, build, start the server
#   make test    the same set-up, then go vet, staticcheck, mypy, go test -race and pytest
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

.PHONY: setup build serve test gotest pytest vet staticcheck typecheck lint fuzz clean wheel wheeltest

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

# Where scripts/setup.sh installs its pinned staticcheck (go install's own
# choice: GOBIN, else the first GOPATH's bin).
STATICCHECK = $(or $(shell go env GOBIN),$(firstword $(subst :, ,$(shell go env GOPATH)))/bin)/staticcheck

staticcheck: setup
	$(STATICCHECK) ./...

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

# A wheel that needs nothing but glibc on the user's machine: the server
# linked statically against libzmq (built from Debian's source), libhdf5 and
# libstdc++ (scripts/wheel.sh), in dist/; wheeltest installs it into a
# fresh venv without Go and uses it.
wheel: setup
	@bash scripts/wheel.sh

wheeltest: wheel
	.venv/bin/python -m pytest -q python/wheeltest

test: build vet staticcheck typecheck lint gotest pytest wheeltest

# Short fuzzing sessions of every fuzz target, found by scripts/fuzz.sh
# with go test -list (not part of make test; the seed corpora run in go
# test). FUZZTIME=5s make fuzz for a quick pass.
fuzz:
	@bash scripts/fuzz.sh

clean:
	rm -rf bin build dist

# The documentation site (user guide + API reference from docstrings) in site/.
# mkdocs and mkdocstrings go into .venv here only, not in make test.
.PHONY: docs
docs: setup
	@.venv/bin/python -c 'import mkdocs, mkdocstrings, mkdocstrings_handlers.python' 2>/dev/null || \
		.venv/bin/python -m pip install -q 'mkdocs>=1.5' 'mkdocstrings[python]>=0.24'
	.venv/bin/mkdocs build -f mkdocs.yml
	@echo "docs: open site/index.html, or serve them with .venv/bin/mkdocs serve"
