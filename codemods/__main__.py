"""`python -m codemods`: the same as the compat-lso-migrate command."""

import sys

from codemods.cli import main

sys.exit(main())
