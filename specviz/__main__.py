"""`python -m specviz ...`: the command line."""

import sys

from specviz.cli import main

sys.exit(main())
