import sys

from bpe.cli import main

sys.exit(main())
