import sys

from cuda_l2_explorer.cli import main

sys.exit(main())
