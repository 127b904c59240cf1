# Two commands for a new user:
#   make run    set up .venv and start the dashboard (http://localhost:$(PORT))
#   make test   set up .venv (and Debian's chromium, PostgreSQL, the MLflow test server) and run every test
# For the edit-test loop: make test-fast (no browser, cluster, slow or AppTest tests) and make lint (ruff).
#
# Variables: PORT (default 8501), HOST (default 127.0.0.1: this machine only; a shared server is an explicit
# HOST=0.0.0.0, see docs/deployment.md), PYTHON (interpreter that creates .venv,
# default python3), PYTEST_ARGS (extra pytest arguments, e.g. "-m 'not e2e'").

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
PORT ?= 8501
HOST ?= 127.0.0.1
PYTEST_ARGS ?=
CHROMIUM := /usr/bin/chromium

VENV := .venv
VENV_PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements.stamp
MLFLOW_VENV := .venv-mlflow
MLFLOW_STAMP := $(MLFLOW_VENV)/.requirements.stamp

.PHONY: help venv lock browser postgres mlflow-server oidc-provider run test test-fast lint sample-data clean-venv

help:
	@echo "make run    - set up $(VENV) and start the dashboard on http://localhost:$(PORT)"
	@echo "make test   - set up $(VENV) and $(CHROMIUM), then run every test (incl. browser tests)"
	@echo "make test-fast - every test but the browser, cluster, slow and AppTest ones: the edit-test loop"
	@echo "make lint   - ruff check (configured in pyproject.toml)"
	@echo "make venv   - only create/update $(VENV) from requirements.txt, pinned by requirements.lock"
	@echo "make lock   - rewrite requirements.lock from what $(VENV) has installed (after changing requirements.txt)"
	@echo "make browser     - only install Debian's chromium if missing (needs root + apt-get)"
	@echo "make postgres    - only install Debian's postgresql if missing (the shared-workspace tests start one)"
	@echo "make mlflow-server - only create $(MLFLOW_VENV), the MLflow tracking server the monitor's registry tests start"
	@echo "make oidc-provider - only install the OpenID provider the sign-in test starts (npm, tests/support/oidc)"
	@echo "make sample-data - rebuild sample_data/ (CSV + bundled model)"

# The stamp is newer than requirements.txt once pip has installed it; pip runs
# again only when requirements.txt or requirements.lock changes (or .venv is deleted).
# requirements.lock pins every package the requirements pull in (see `make lock`).
venv: $(STAMP)

$(STAMP): requirements.txt requirements.lock pyproject.toml
	@test -x $(VENV_PY) || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(VENV_PY) -m pip install --disable-pip-version-check --no-input -r requirements.txt -c requirements.lock
	$(VENV_PY) -m pip install --disable-pip-version-check --no-input --no-deps -e .
	@touch $@

# After editing requirements.txt: install the new set without the old pins, check it, then pin it.
lock:
	@test -x $(VENV_PY) || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	$(VENV_PY) -m pip install --disable-pip-version-check --no-input -r requirements.txt
	$(VENV_PY) .ci/lock.py

# Debian's chromium for the end-to-end tests (Playwright's own browser download
# is not used).  Without root/apt-get the e2e tests skip and say why.
browser:
	@if [ -x $(CHROMIUM) ]; then \
		echo "browser: $(CHROMIUM) present"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "browser: installing Debian's chromium with apt-get"; \
		export DEBIAN_FRONTEND=noninteractive; \
		if apt-get update && apt-get install -y chromium && [ -x $(CHROMIUM) ]; then \
			echo "browser: installed $(CHROMIUM)"; \
		else \
			echo "browser: ERROR: 'apt-get install -y chromium' did not provide $(CHROMIUM); the end-to-end tests cannot run." >&2; \
			exit 1; \
		fi; \
	else \
		echo "browser: NOTE: $(CHROMIUM) is missing and cannot be installed here (needs root and apt-get)."; \
		echo "browser: install it with 'sudo apt-get install chromium'; until then the e2e tests are skipped."; \
	fi

# Debian's PostgreSQL server binaries for the shared-workspace tests (tests/workspace/test_workspace_store.py starts its
# own server in a temporary folder as the postgres user; nothing is left running). Without root/apt-get they skip.
postgres:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		echo "postgres: $$(ls /usr/lib/postgresql/*/bin/initdb | head -1) present"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "postgres: installing Debian's postgresql with apt-get"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update && apt-get install -y postgresql || { echo "postgres: ERROR: apt-get install postgresql failed" >&2; exit 1; }; \
	else \
		echo "postgres: NOTE: PostgreSQL is missing and cannot be installed here; the shared-workspace test is skipped."; \
	fi

# The MLflow tracking server of the monitor's registry tests (tests/monitor/test_mlflow_registry.py starts it on
# loopback with a SQLite backend). Full mlflow pins pyarrow<26 and pandas<3, which conflict with requirements.lock, so
# it lives in an environment of its own, pinned by .ci/mlflow-server.txt (about 850 MB; docs/monitor.md). The client
# (mlflow-skinny, the extra tcrex[mlflow]) is in requirements.txt.
mlflow-server: $(MLFLOW_STAMP)

$(MLFLOW_STAMP): .ci/mlflow-server.txt
	@test -x $(MLFLOW_VENV)/bin/python || { echo "creating $(MLFLOW_VENV) with $(PYTHON)"; $(PYTHON) -m venv $(MLFLOW_VENV); }
	$(MLFLOW_VENV)/bin/python -m pip install --disable-pip-version-check --no-input -q -r .ci/mlflow-server.txt
	@touch $@

# The OpenID provider of the sign-in test (tests/e2e/test_sign_in_browser.py starts it on loopback): panva's certified
# oidc-provider, pinned in tests/support/oidc/package.json, under Debian's nodejs (installed with apt-get when root).
# Without node/npm the sign-in test skips and says why.
oidc-provider:
	@if [ -d tests/support/oidc/node_modules/oidc-provider ]; then \
		echo "oidc-provider: present"; \
	else \
		if ! command -v npm >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "oidc-provider: installing Debian's nodejs and npm with apt-get"; \
			DEBIAN_FRONTEND=noninteractive apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm; \
		fi; \
		if command -v npm >/dev/null 2>&1; then \
			npm install --prefix tests/support/oidc --no-audit --no-fund --no-save || { echo "oidc-provider: ERROR: npm install failed" >&2; exit 1; }; \
		else \
			echo "oidc-provider: NOTE: npm is missing and cannot be installed here; the sign-in test is skipped."; \
		fi; \
	fi

# tcrex.ui.launch is `streamlit run app.py` without the spurious "Page not found"
# modal on a fresh server's first deep link (see its docstring).
run: venv
	$(VENV_PY) -m tcrex.ui.launch --server.port $(PORT) --server.address $(HOST)

# pytest's exit code is the recipe's exit code (5 = no tests collected fails too).
test: venv browser postgres mlflow-server oidc-provider
	$(VENV_PY) -m pytest $(PYTEST_ARGS)

# Everything but the browser, cluster, slow (property/fuzz, sandboxed workers, wheel install) and AppTest tests:
# markers in pytest.ini. Measured: see README (under 90 s on an idle 2-core machine).
test-fast: venv
	$(VENV_PY) -m pytest -m "not e2e and not cluster and not slow and not apptest" $(PYTEST_ARGS)

lint: venv
	$(VENV)/bin/ruff check .

sample-data: venv
	$(VENV_PY) sample_data/build.py

clean-venv:
	rm -rf $(VENV)
