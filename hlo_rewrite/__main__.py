"""``python -m hlo_rewrite`` runs the command line, and names itself so in its help."""

from .cli import main

if __name__ == "__main__":
    main(prog_name="python -m hlo_rewrite")
