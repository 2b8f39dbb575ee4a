# GraphDojo: `make run` serves the site with a grading worker; `make test` runs the whole suite.
SHELL := /bin/bash
PY_SYSTEM ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The test suite always talks to the real PostgreSQL and Redis (running on every machine
# of this kind); override these to point elsewhere.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/graphdojo
TEST_BROKER_URL ?= redis://127.0.0.1:6379/15

.PHONY: venv run sandbox-tools test check bench image stack-images clean

venv: $(STAMP)
$(STAMP): pyproject.toml
	test -x $(PY) || $(PY_SYSTEM) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

run: venv sandbox-tools
	$(PY) manage.py migrate --noinput
	$(PY) manage.py sync_content
	$(PY) manage.py sync_quizzes
	$(PY) manage.py sync_lessons
	$(PY) manage.py demo_accounts
	exec $(PY) manage.py serve

test: venv
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=$(TEST_BROKER_URL) \
		$(PY) -m pytest $(PYTEST_ARGS)

# Types and lint (configured in pyproject.toml); .ci/run runs it before the tests.
# Lint covers the whole tree; every source root but tests/ and exercises/ is typed too, with
# its settings there (grader/, sandbox/, graphdojo/, bench/ and testbed/ are strict).
LINTED := platform grader sandbox graphdojo bench exercises tests testbed
TYPED := platform grader sandbox graphdojo bench testbed
check: venv
	$(PY) -m ruff check $(LINTED)
	$(PY) -m mypy $(TYPED)

# The embedded sandbox is bubblewrap; install it when we can (root with apt), else say so.
sandbox-tools:
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; } || \
		echo "bubblewrap is missing: install it, or set SANDBOX_ALLOW_UNISOLATED=true to grade without isolation"

bench: venv
	$(PY) -m bench

image:
	bash sandbox/image/build.sh

# docker-compose.yml's web, PostgreSQL and Redis images, built here with no registry.
stack-images: image
	bash deploy/build.sh

clean:
	rm -rf $(VENV) .pytest_cache var
