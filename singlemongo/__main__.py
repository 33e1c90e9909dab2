import sys

from singlemongo.cli import main

sys.exit(main())
