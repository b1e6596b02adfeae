# make demo : install, then run every recipe under egs/ on its built-in mini corpus + summary table
# make test : install, then the test suite
SHELL := /bin/bash
PY := tools/venv/bin/python

.PHONY: all install demo test clean help
all: help
help:
	@sed -n '1,2p' Makefile | sed 's/^# //'

install:
	bash tools/install.sh

demo: install
	$(PY) -m local_models.bin.run_demo

# pytest exits 5 when it collected no tests: that is a broken suite, not a pass.
test: install
	@rc=0; $(PY) -m pytest -q tests || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc

clean:
	rm -rf tools/venv egs/*/*/{data,dump,exp} demo_summary.md
