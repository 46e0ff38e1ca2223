"""AllenNLP's hdf5 layout of precomputed ELMo vectors (`allennlp elmo`), the one writer of it.

The layout, as `allennlp.commands.elmo.ElmoEmbedder.embed_file` writes it:

- dataset "i" (i = 0, 1, ... the index of the line) holds line i's vectors, float32: all layers
  (n_layers, n_tokens, width), or one layer or their "average" (n_tokens, width), as the caller
  chose them (the writer only writes);
- dataset "sentence_to_index" holds one JSON string mapping each line's text to its index as a
  string; a line that occurs more than once maps to its last index;
- lines are stripped, and a blank line is an error (it would have no vectors to hold).
"""
import json
from pathlib import Path
from typing import Dict, Iterable, List, Sequence, Tuple, Union

import numpy as np

from ..errors import SpacyElmoError

INDEX_DATASET = "sentence_to_index"


def check_lines(lines: Sequence[str], source: Union[str, Path]) -> None:
    """Refuse blank lines, as AllenNLP does, naming the first one by file and line number."""
    blank = [number for number, line in enumerate(lines, 1) if not line.strip()]
    if blank:
        more = f" (and {len(blank) - 1} more)" if len(blank) > 1 else ""
        raise SpacyElmoError(
            f"{source}:{blank[0]}: empty line{more}; AllenNLP's hdf5 layout has no place for it: remove "
            "blank lines, or write Parquet (--engine ray), which keeps them as rows without tokens"
        )


def write_embedding_file(
    path: Union[str, Path],
    items: Iterable[Tuple[str, np.ndarray]],
    *,
    forget_sentences: bool = False,
    use_sentence_keys: bool = False,
) -> int:
    """Write (line, layers) pairs, in line order, in AllenNLP's layout; returns how many.

    path (Union[str, Path]): the hdf5 file to create (overwritten). It is written under a temporary
        name beside it and renamed when complete; on an error or interruption nothing is left.
    items (Iterable[Tuple[str, np.ndarray]]): each stripped line and its vectors, written as they
        are: all layers (n_layers, n_tokens, width) or the chosen one (n_tokens, width).
    forget_sentences (bool): leave out "sentence_to_index".
    use_sentence_keys (bool): name each dataset by its line instead of its index (no index then);
        a repeated line is an error.
    """
    import h5py

    index: Dict[str, str] = {}
    count = 0
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")  # renamed to `path` only once complete
    try:
        with h5py.File(partial, "w") as out:
            for count, (line, vectors) in enumerate(items, 1):
                key = line if use_sentence_keys else str(count - 1)
                if use_sentence_keys and key in out:
                    raise SpacyElmoError(f"{line!r} is in the input twice; without use_sentence_keys repeated lines are fine")
                index[line] = key
                out.create_dataset(key, dtype="float32", data=vectors)
            if not forget_sentences and not use_sentence_keys:
                out.create_dataset(INDEX_DATASET, (1,), dtype=h5py.string_dtype(), data=[json.dumps(index)])
        partial.replace(path)
    except BaseException:  # an error, Ctrl-C or a full disk: leave no half-written file
        partial.unlink(missing_ok=True)
        raise
    return count


__all__: List[str] = ["check_lines", "write_embedding_file"]
