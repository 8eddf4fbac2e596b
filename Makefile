# The two commands a new user runs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
WORKERS ?= 2

.PHONY: run test install bench lint clean browser

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/tonk pipeline configs/quick.yaml --hands 2000 --workers 2

test: $(STAMP) browser
	$(PY) -m pytest -n $(WORKERS) -q

# The browser game's end-to-end test drives Debian's chromium (no download at test time).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null) || \
	  echo "no chromium: the browser test will skip"

bench: $(STAMP)
	$(VENV)/bin/tonk bench engine
	$(VENV)/bin/tonk bench engine --with-obs

lint: $(STAMP)
	$(PY) -m pip install --quiet ruff mypy
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy tonk_env

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
