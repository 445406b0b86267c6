"""``python -m hlo_rewrite`` runs the command line, and names itself so in its help."""

from .cli import console_main

if __name__ == "__main__":
    console_main(prog_name="python -m hlo_rewrite")
