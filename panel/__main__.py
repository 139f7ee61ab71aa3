"""``python -m panel --root ROOT --port PORT``: the daemon starts the panel this way."""

from __future__ import annotations

import sys

from panel.server import main

sys.exit(main())
