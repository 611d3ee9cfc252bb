"""``python -m tools.ablation``: :func:`tools.ablation.main`."""

import sys

from tools.ablation import main

sys.exit(main())
