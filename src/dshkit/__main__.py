"""`python -m dshkit`: the same command line as the `dshkit` script."""

from .cli import main

main()
