"""`python -m ctxframe` runs the CLI."""

from ctxframe.cli import run

run()
