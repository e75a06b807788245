import sys

from truco_lab.cli import main

sys.exit(main())
