# SPDX-License-Identifier: BSD-3-Clause
"""Print the package directory this interpreter searches under PREFIX
(argv[1]), or nothing. Used by host/python/meson.build at configure time."""
import sys

prefix = sys.argv[1].rstrip("/") + "/"
for p in sys.path:
    if p.startswith(prefix) and p.rstrip("/").endswith(("dist-packages", "site-packages")):
        print(p)
        break
