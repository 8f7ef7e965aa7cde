"""``python -m agenthost.app`` is the ``agenthost`` command."""

import sys

from agenthost.app.cli import main

sys.exit(main())
