"""Check that a project variable names a folder holding the files a workflow needs, and say
which variable to set when it does not (spaCy's own hint, "run the assets command", cannot help
for data that has no asset entry).

    python scripts/check_data.py corpus_dir ../shared/data/corpus train.txt.gz heldout.txt.gz
"""
from pathlib import Path
from typing import List

import typer


def main(
    variable: str = typer.Argument(..., help="The project variable, e.g. corpus_dir"),
    folder: Path = typer.Argument(..., help="Its value"),
    files: List[str] = typer.Argument(..., help="Files the folder must hold (name|alternative)"),
) -> None:
    """Exit with a message naming the variable if a file is missing."""
    missing = [name for name in files if not any((folder / option).is_file() for option in name.split("|"))]
    if missing:
        raise SystemExit(
            f"error: {folder} lacks {', '.join(m.replace('|', ' or ') for m in missing)}. Set --vars.{variable} "
            f"to a folder that holds them (e.g. spacy project run WORKFLOW . --vars.{variable} PATH); "
            "the README's 'The project' section says where each data set comes from"
        )
    print(f"{variable} = {folder}: ok")


if __name__ == "__main__":
    typer.run(main)
