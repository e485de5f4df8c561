"""`python -m dpaudit` runs the command-line interface."""

from __future__ import annotations

import sys

from dpaudit.cli import main

if __name__ == "__main__":
    sys.exit(main())
