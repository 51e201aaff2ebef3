import sys

from invcrawl.cli import main

sys.exit(main())
