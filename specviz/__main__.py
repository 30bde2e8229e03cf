"""`python -m specviz ...`: the command line."""

import sys

from specviz.cli.main import main

sys.exit(main())
