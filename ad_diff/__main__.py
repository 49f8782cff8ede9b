"""`python -m ad_diff`, and the `ad-diff` console script (pyproject.toml: ``ad_diff.__main__:main``).

This module is only ever the program, never a library import, so it may set the process's collector policy.
Importing the CLI (typer, click, their standard library and ad-diff's modules) builds a few hundred modules'
objects and no garbage; the cyclic collector would scan them over and over as they pile up, and once more in
full at interpreter shutdown. So collection is off while the CLI is imported, and what the import built is
then frozen out of every later collection (``gc.freeze``): a log-only comparison spends ~15 ms less CPU
(of ~130). Objects made afterwards are collected as usual (the analysis pauses the collector itself:
:mod:`ad_diff.core.gcpause`).
"""

import gc

_collecting = gc.isenabled()
gc.disable()
from ad_diff.cli.app import main  # noqa: E402 - imported with the collector off (see above)

gc.freeze()
if _collecting:
    gc.enable()

if __name__ == "__main__":
    main()
