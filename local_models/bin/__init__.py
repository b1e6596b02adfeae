"""Command-line entry points; each module has `main(argv=None)` and `--help`."""
