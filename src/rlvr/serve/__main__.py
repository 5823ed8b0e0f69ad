"""`python -m rlvr.serve MODEL ...`: the same as `rlvr serve`, without loading the training
stack that the `rlvr` command imports first (a faster start for scripts and tests)."""

import sys

from rlvr.serve.command import main

sys.exit(main())
