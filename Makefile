# The two commands a new user runs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
WORKERS ?= 2

# every package that `make lint` type-checks
PACKAGES := tonk_env agents train eval frontends tonk_cli

.PHONY: run test install bench lint docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,examples]"
	touch $(STAMP)

install: $(STAMP)

# the documentation site's tools (the `docs` extra), installed on first use of `make docs`
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

run: $(STAMP)
	$(VENV)/bin/tonk pipeline configs/quick.yaml --hands 2000 --workers 2

# The browser game's end-to-end test drives Debian's chromium and chromedriver when they are
# installed (.ci/run installs them) and skips with the reason when they are not. worksteal: a worker
# that runs out of tests takes queued ones from the other, so the long tests do not end the run on one.
test: $(STAMP)
	$(PY) -m pytest -n $(WORKERS) --dist worksteal -q

bench: $(STAMP)
	$(VENV)/bin/tonk bench engine
	$(VENV)/bin/tonk bench engine --with-obs

# All three checks run, so one run reports everything; the exit status is non-zero if any failed.
lint: $(STAMP)
	@status=0; \
	$(VENV)/bin/ruff check . || status=1; \
	$(VENV)/bin/ruff format --check . || status=1; \
	$(VENV)/bin/mypy $(PACKAGES) || status=1; \
	exit $$status

# The documentation site (mkdocs.yml) into site/: strict, so a broken page, link or API reference
# (a renamed function in a `::: module` page, a bad docstring) fails the build. Nothing is downloaded.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache site
