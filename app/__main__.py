"""``python -m app`` is the ``agenthost`` command."""

import sys

from app.cli import main

sys.exit(main())
