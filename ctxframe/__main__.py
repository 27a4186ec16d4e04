"""`python -m ctxframe` runs the CLI."""

import sys

from ctxframe.cli import main

sys.exit(main())
