#!/usr/bin/env python3
"""A Chrome that fails at start: prints a reason to stderr and exits 1."""

import sys

sys.stderr.write("fake chrome: cannot open shared object libnss3.so\n")
sys.exit(1)
