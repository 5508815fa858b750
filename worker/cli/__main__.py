"""``python -m worker.cli``: the ``neardup`` command without its console script, as before the
commands became a package."""

import sys

from worker.cli.main import main

sys.exit(main())
