#!/usr/bin/env python3
"""A Chrome that starts but never announces a DevTools endpoint."""

import signal
import sys

sys.stderr.write("fake chrome: starting slowly\n")
sys.stderr.flush()
while True:
    signal.pause()
