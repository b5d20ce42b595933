"""``python3 -m fedscore_client …``: the ``fedscore-client`` command (fedscore_client_cli.py)."""

import sys

from fedscore_client import main

sys.exit(main())
