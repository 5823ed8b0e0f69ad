"""`python -m rlvr.serve MODEL ...`: the same as `rlvr serve`, without loading the training
stack that the `rlvr` command imports first (a faster start for scripts and tests). A program,
not a layer: it runs the command where it is composed (rlvr/cli/serve_command.py)."""

import sys

from rlvr.cli.serve_command import main

sys.exit(main())
