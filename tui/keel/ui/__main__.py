"""`python -m keel.ui tui [--fake] ...`: the UI without the rest of keel's CLI."""

import sys

from keel.ui.cli import main

sys.exit(main())
