"""``python -m tcrex``: the command-line interface (see ``tcrex --help``)."""
from .cli import main

if __name__ == "__main__":
    main()
