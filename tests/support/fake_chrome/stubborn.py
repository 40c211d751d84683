#!/usr/bin/env python3
"""A Chrome that announces an endpoint, ignores SIGTERM, and forks a grandchild that does too.

It prints `grandchild=PID` so the test can check that the grandchild died as well.
"""

import os
import signal
import sys

signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = os.fork()
if child == 0:
    child = os.fork()  # the grandchild of our launcher
    if child:
        os._exit(0)
    while True:
        signal.pause()
os.waitpid(child, 0)
grandchild_pid = None
# The grandchild is the only other member of our group besides us: find it.
for name in os.listdir("/proc"):
    if name.isdigit() and int(name) != os.getpid():
        try:
            if os.getpgid(int(name)) == os.getpgid(0):
                grandchild_pid = int(name)
        except OSError:
            pass
sys.stderr.write(f"grandchild={grandchild_pid}\n")
sys.stderr.write("DevTools listening on ws://127.0.0.1:9/devtools/browser/fake\n")
sys.stderr.flush()
while True:
    signal.pause()
