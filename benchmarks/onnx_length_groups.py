"""CPU seconds of `OnnxBiLM.embed_sentences` with its batches split by length (`_length_groups`,
the default for graphs whose LSTMs step every row) against one run of the graph per batch (the
default for graphs whose LSTMs compute only the active rows), on exported graphs (`onnx_profile.py`
writes them), cold token cache, runs interleaved; CPU time (`time.process_time`), which holds on
a loaded machine where wall-clock does not.

    OMP_NUM_THREADS=1 python benchmarks/onnx_length_groups.py PROFILE_DIR/original/int8.onnx  # PROFILE_DIR: onnx_profile.py --out
"""
import time
from pathlib import Path
from typing import Dict, List

import typer
from bilm_speed import DEFAULT_CORPUS, read_lines

app = typer.Typer(add_completion=False)


@app.command()
def main(
    graphs: List[Path] = typer.Argument(..., help="exported .onnx graphs"),
    corpus: Path = typer.Option(DEFAULT_CORPUS, help="text, a sentence a line"),
    repeats: int = typer.Option(3, help="interleaved runs of each variant; the median counts"),
    uniform: int = typer.Option(25, help="also: sentences cut to this length (0: skip), where the split should not happen"),
) -> None:
    import spacy

    from spacy_elmo.onnx import OnnxBiLM

    nlp = spacy.blank("en")
    texts = read_lines(corpus, 10**9)
    sentences = [s for s in ([t.text for t in doc if not t.is_space] for doc in nlp.tokenizer.pipe(texts)) if s]
    inputs = {f"{len(sentences)} corpus lines": sentences}
    if uniform:
        inputs[f"64 lines cut to {uniform} tokens"] = [s[:uniform] for s in sentences if len(s) >= uniform][:64]
    for graph in graphs:
        runner = OnnxBiLM(graph, threads=1)
        for name, batch in inputs.items():
            seconds: Dict[str, List[float]] = {"one run per batch": [], "split by length": []}

            def run(variant: str) -> float:
                runner.split_by_length = variant == "split by length"
                runner.clear_cache()
                start = time.process_time()
                runner.embed_sentences(batch)
                return time.process_time() - start

            run("split by length")
            for _ in range(repeats):
                for variant in seconds:
                    seconds[variant].append(run(variant))
            medians = {variant: sorted(values)[len(values) // 2] for variant, values in seconds.items()}
            print(f"{graph} | {name}: " + "; ".join(f"{v} {m:.3f} s ({', '.join(f'{x:.3f}' for x in seconds[v])})" for v, m in medians.items())
                  + f"; split/one {medians['split by length'] / medians['one run per batch']:.2f}")


if __name__ == "__main__":
    app()
