# make demo : install, then every recipe at a quick size, packed, its models run on input they never saw (demo_summary.md)
# make test : install, then the test suite (2 workers; make test-fast: the unit tests only, for the edit loop)
# make reproduce : install, then every recipe's full mini-corpus study (./run.sh; reproduce_summary.md)
# make readme : README's measured cells from the recipes' RESULTS.md headlines (after a recipe's run)
SHELL := /bin/bash
PY := tools/venv/bin/python

.PHONY: all install demo reproduce readme test test-fast clean help
all: help
help:
	@sed -n '1,4p' Makefile | sed 's/^# //'

install:
	bash tools/install.sh

demo: install
	$(PY) -m local_models.bin.run_demo --mode demo

reproduce: install
	$(PY) -m local_models.bin.run_demo --mode reproduce
	$(PY) -m local_models.bin.update_readme

readme: install
	$(PY) -m local_models.bin.update_readme

# pytest exits 5 when it collected no tests: that is a broken suite, not a pass.
# One worker per core; a test file stays on one worker (its module fixtures run one recipe once), in the
# order tests/conftest.py gives (longest first: no long module left as a tail for one worker).
PYTEST := $(PY) -m pytest -q -p no:typeguard -n 2 --dist loadfile --no-loadscope-reorder --durations=15
test: install
	@rc=0; $(PYTEST) tests || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc

# tests marked slow in tests/conftest.py (recipe runs, ESPnet training) left out
test-fast: install
	@rc=0; $(PYTEST) -m "not slow" tests || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test-fast: pytest collected no tests" >&2; exit 1; fi; exit $$rc

clean:
	rm -rf tools/venv egs/*/*/{data,dump,exp} demo_summary.md reproduce_summary.md
