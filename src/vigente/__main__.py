"""``python -m vigente``: the ``vigente`` command."""

from vigente.cli import main

if __name__ == "__main__":
    main()
