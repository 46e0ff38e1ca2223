"""End-to-end pretraining: the bilm-tf training test, exact resume, fine-tuning, the commands."""

import json
import random
from pathlib import Path

import pytest
import spacy
import torch
from typer.testing import CliRunner

from spacy_elmo.bilm import load_bilm, save_bilm
from spacy_elmo.bilm.loading import DEFAULT_MODEL
from spacy_elmo.cli.app import app
from spacy_elmo.cli import main as _register_commands  # noqa: F401
from spacy_elmo.training import TrainingSettings, TrainingSetupError, evaluate_perplexity, pretrain, resume
from spacy_elmo.training.errors import TrainingDiverged
from spacy_elmo.training.evaluation import scored_targets
from spacy_elmo.training.corpus import TextCorpus, make_tokenizer
from spacy_elmo.training.presets import apply_overrides, preset_architecture

from ..conftest import random_bilm
from .helpers import single_thread  # noqa: F401

pytestmark = pytest.mark.usefixtures("single_thread")

WORDS = "the a cat dog sees likes runs to house garden small big quickly and".split()


def write_corpus(path: Path, n_lines: int = 60, seed: int = 0) -> Path:
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) + " ." for _ in range(n_lines)]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


def quick_settings(**changes) -> TrainingSettings:
    base = dict(batch_size=3, unroll_steps=5, negatives=8, epochs=None, checkpoint_every=2)
    return TrainingSettings(**{**base, **changes})


def test_bilm_tf_training_fixture_reaches_perplexity_below_20(fixtures_dir, tmp_path):
    train = fixtures_dir / "bilm-tf" / "train"
    options = apply_overrides(
        preset_architecture("tiny"), {"lstm.use_skip_connections": False, "char_cnn.max_characters_per_token": 10}
    )
    settings = TrainingSettings(
        batch_size=2, unroll_steps=10, negatives=16, epochs=50, clip_norm=1.0, dropout=0.1
    )
    result = pretrain(
        tmp_path / "run",
        [train / "data.txt"],
        options,
        settings,
        vocab_path=train / "vocab.txt",
        show_progress=False,
    )
    assert result.steps > 300
    bilm = load_bilm(tmp_path / "run" / "model")
    assert bilm.vocab == (train / "vocab.txt").read_text().split()
    sentences = TextCorpus([train / "data.txt"], make_tokenizer("en")).texts()
    perplexity = evaluate_perplexity(bilm, sentences, batch_size=2, unroll_steps=10)
    assert perplexity.mean < 20, perplexity
    assert perplexity.n_tokens == 134 + 2 * 5 - 2  # words and markers are all targets, except each row's first
    untrained = evaluate_perplexity(
        _untrained_like(bilm),
        TextCorpus([train / "data.txt"], make_tokenizer("en")).texts(),
        batch_size=2,
        unroll_steps=10,
    )
    assert untrained.mean > 25


def _untrained_like(bilm):
    from spacy_elmo.bilm import BiLM

    torch.manual_seed(0)
    fresh = BiLM(bilm.config)
    fresh.reset_parameters()
    fresh.set_softmax(bilm.vocab)
    return fresh


def test_resumed_run_ends_with_the_weights_of_an_uninterrupted_one(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    options = preset_architecture("tiny")
    whole = pretrain(tmp_path / "whole", [text], options, quick_settings(max_steps=7), show_progress=False)
    part = pretrain(tmp_path / "part", [text], options, quick_settings(max_steps=3), show_progress=False)
    assert part.steps == 3 and part.stopped_by == "--max-steps 3 reached"
    assert part.checkpoint == tmp_path / "part" / "checkpoints" / "step-000000003"
    assert sorted(p.name for p in (tmp_path / "part" / "checkpoints").iterdir()) == [
        "step-000000002",
        "step-000000003",
    ]
    first = load_bilm(tmp_path / "part" / "checkpoints" / "step-000000003" / "model").state_dict()
    rest = resume(tmp_path / "part", {"max_steps": 7}, show_progress=False)
    assert (rest.steps, rest.tokens) == (whole.steps, whole.tokens) == (7, 7 * 15)
    a = load_bilm(tmp_path / "whole" / "model").state_dict()
    b = load_bilm(tmp_path / "part" / "model").state_dict()
    assert any(not torch.equal(a[k], first[k]) for k in a)  # training moved on after the resume
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=1e-5, atol=1e-6)
    assert rest.loss == pytest.approx(whole.loss, rel=1e-5)


def test_a_run_resumed_at_its_budget_logs_its_final_row_once(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    settings = quick_settings(max_steps=3)
    pretrain(tmp_path / "run", [text], preset_architecture("tiny"), settings, heldout_path=text, show_progress=False)
    rest = resume(tmp_path / "run", {"max_steps": 3}, show_progress=False)
    assert rest.heldout is not None  # it scores the held-out text again, but logs it once
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows if row.get("final")] == [3]


def test_resume_refuses_changed_settings_and_missing_runs(tmp_path):
    with pytest.raises(TrainingSetupError, match="no training run"):
        resume(tmp_path / "nothing")
    text = write_corpus(tmp_path / "text.txt")
    pretrain(tmp_path / "run", [text], preset_architecture("tiny"), quick_settings(max_steps=1), show_progress=False)
    with pytest.raises(TrainingSetupError, match="cannot change batch_size"):
        resume(tmp_path / "run", {"batch_size": 8})
    with pytest.raises(TrainingSetupError, match="already holds a training run"):
        pretrain(
            tmp_path / "run", [text], preset_architecture("tiny"), quick_settings(max_steps=1), show_progress=False
        )


def test_finetune_a_native_model_keeps_its_vocabulary(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    pretrain(tmp_path / "base", [text], preset_architecture("tiny"), quick_settings(max_steps=2), show_progress=False)
    base = load_bilm(tmp_path / "base" / "model")
    other = write_corpus(tmp_path / "other.txt", seed=1)
    pretrain(
        tmp_path / "tuned",
        [other],
        None,
        quick_settings(max_steps=2),
        init=tmp_path / "base" / "model",
        show_progress=False,
    )
    tuned = load_bilm(tmp_path / "tuned" / "model")
    assert tuned.vocab == base.vocab
    changed = [k for k, v in base.state_dict().items() if not torch.equal(v, tuned.state_dict()[k])]
    assert "softmax.weight" in changed and len(changed) > 5


def test_finetune_original_weights_gets_a_new_softmax_and_exports(fixtures_dir, tmp_path):
    model = fixtures_dir / "bilm-tf" / "model"
    text = write_corpus(tmp_path / "text.txt")
    pretrain(
        tmp_path / "run",
        [text],
        None,
        quick_settings(max_steps=2),
        init=model / "lm_weights.hdf5",
        init_options=model / "options.json",
        export=True,
        show_progress=False,
    )
    tuned = load_bilm(tmp_path / "run" / "model")
    original = load_bilm(model / "lm_weights.hdf5", options=model / "options.json")
    assert tuned.config == original.config
    assert tuned.vocab[:3] == ["<S>", "</S>", "<UNK>"] and set(tuned.vocab[3:]) == set(WORDS) | {"."}
    exported = load_bilm(
        tmp_path / "run" / "original" / "weights.hdf5", options=tmp_path / "run" / "original" / "options.json"
    )
    for name, tensor in exported.state_dict().items():
        torch.testing.assert_close(tensor, tuned.state_dict()[name], rtol=1e-6, atol=1e-6)


def test_a_new_softmax_starts_from_the_log_unigram_distribution(tmp_path):
    from collections import Counter

    from spacy_elmo.training.vocab import SoftmaxVocab

    text = write_corpus(tmp_path / "text.txt")
    settings = quick_settings(max_steps=1, optimizer="sgd", learning_rate=1e-12)
    pretrain(tmp_path / "run", [text], preset_architecture("tiny"), settings, show_progress=False)
    bilm = load_bilm(tmp_path / "run" / "model")
    counts = Counter()
    stats = TextCorpus([text], make_tokenizer("en")).scan(counts)
    expected = torch.tensor(SoftmaxVocab(bilm.vocab).log_frequencies(counts, stats.sentences))
    torch.testing.assert_close(bilm.softmax.bias.detach(), expected)
    assert bilm.softmax.bias[bilm.vocab.index("the")] > bilm.softmax.bias[bilm.vocab.index("quickly")]


def test_heldout_perplexity_is_logged(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    heldout = write_corpus(tmp_path / "heldout.txt", n_lines=10, seed=2)
    result = pretrain(
        tmp_path / "run",
        [text],
        preset_architecture("tiny"),
        quick_settings(max_steps=4, eval_every=2, log_every=1),
        heldout_path=heldout,
        show_progress=False,
    )
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if "heldout_perplexity" in r] == [2, 4, 4]
    assert len([r for r in records if "loss_forward" in r]) == 4
    assert result.heldout is not None and 1 < result.heldout.mean < 1000


def run_cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_pretrain_and_evaluate_commands(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    out = tmp_path / "run"
    result = run_cli(
        "pretrain",
        out,
        text,
        "--preset",
        "tiny",
        "--set",
        "lstm.dim=12",
        "--batch-size",
        2,
        "--unroll-steps",
        4,
        "--max-steps",
        3,
        "--max-vocab-size",
        8,
        "--storage-dtype",
        "float16",
        "--quiet",
    )
    assert result.exit_code == 0, result.output
    assert "steps 3" in result.output
    assert json.loads((out / "model" / "config.json").read_text())["storage_dtype"] == "float16"
    bilm = load_bilm(out / "model")
    assert bilm.config.lstm_dim == 12 and len(bilm.vocab) == 8
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"bilm": str(out / "model")}})
    assert nlp("the cat sees a dog")._.elmo.shape == (3, 5, 16)
    result = run_cli("evaluate", out / "model", text, "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["mean"] == pytest.approx((scores["forward"] * scores["backward"]) ** 0.5, rel=1e-6)
    result = run_cli("pretrain", out, "--resume", "--max-steps", 5, "--quiet")
    assert result.exit_code == 0, result.output
    assert "steps 5" in result.output


def test_the_removed_setting_names_are_refused_naming_the_new_ones():
    with pytest.raises(TypeError, match="precision"):
        TrainingSettings(precision="bf16")
    earlier_run = {**TrainingSettings().to_dict(), "precision": "bf16", "model_dtype": "float16"}
    del earlier_run["compute_dtype"], earlier_run["storage_dtype"]
    with pytest.raises(TrainingSetupError) as error:
        TrainingSettings.from_dict(earlier_run)
    assert str(error.value) == "unknown training settings: model_dtype (now storage_dtype), precision (now compute_dtype)"
    with pytest.raises(TypeError, match="options"):
        pretrain(Path("unused"), [], options=preset_architecture("tiny"))
    import spacy_elmo.training.presets as presets

    assert not hasattr(presets, "preset_options")


@pytest.mark.parametrize(
    "content,message",
    [
        (b"", "is empty"),
        (b"\xff\xfe\xfa\n", "no sentence found in 1 lines (1 line not UTF-8"),
        (b"y" * 100_000 + b"\n", "too long"),
    ],
)
def test_bad_text_is_a_clear_error_before_training(tmp_path, content, message):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    result = run_cli("pretrain", tmp_path / "run", bad, "--preset", "tiny", "--max-steps", 1, "--quiet")
    assert result.exit_code == 1
    assert message in result.output and str(bad) in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_usage_errors_are_reported_without_traceback(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    for args, message in [
        (["--preset", "huge"], "unknown preset 'huge'"),
        (["--preset", "tiny", "--set", "lstm.width=3"], "unknown architecture setting 'lstm.width'"),
        (["--preset", "tiny", "--optimizer", "lbfgs"], "unknown optimizer 'lbfgs'"),
        (["--lang", "zz"], "no tokenizer for language 'zz'"),
    ]:
        result = run_cli("pretrain", tmp_path / "run", text, *args, "--quiet")
        assert result.exit_code == 1 and message in result.output, result.output
    result = run_cli("evaluate", tmp_path, text)
    assert result.exit_code == 1 and "error:" in result.output


def test_evaluate_explains_that_a_model_without_softmax_has_no_perplexity_before_any_progress(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    save_bilm(random_bilm(), tmp_path / "no-softmax")
    result = run_cli("evaluate", tmp_path / "no-softmax", text, "--threads", 1)
    assert result.exit_code == 1 and "has no softmax" in result.output and "pretrain --init" in result.output
    assert "token" not in result.output.replace("no softmax", "")  # no progress bar was drawn


@pytest.mark.parametrize("n_sentences,batch_size", [(1, 64), (5, 2), (30, 4), (7, 7)])
def test_scored_targets_counts_what_evaluation_scores(n_sentences, batch_size):
    rng = random.Random(n_sentences)
    words = ["a", "b", "dog", "cat", "the"]
    bilm = random_bilm()
    bilm.set_softmax(["<S>", "</S>", "<UNK>", *words])
    sentences = [[rng.choice(words) for _ in range(rng.randint(1, 12))] for _ in range(n_sentences)]
    updates = []
    result = evaluate_perplexity(bilm, sentences, batch_size=batch_size, unroll_steps=5, progress=updates.append)
    assert scored_targets(sentences, batch_size) == result.n_tokens == sum(updates)


def test_too_little_text_for_one_batch_is_a_clear_error(tmp_path):
    text = tmp_path / "short.txt"
    text.write_text("just four words here\n")
    result = run_cli("pretrain", tmp_path / "run", text, "--preset", "tiny", "--epochs", 1, "--quiet")
    assert result.exit_code == 1 and "less than one batch needs" in result.output, result.output


def test_a_diverging_run_stops_with_a_clear_error_and_keeps_good_checkpoints(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    settings = quick_settings(
        max_steps=50, learning_rate=1e30, optimizer="sgd", clip_norm=1e30, checkpoint_every=1
    )
    with pytest.raises(TrainingDiverged, match="no longer finite"):
        pretrain(tmp_path / "run", [text], preset_architecture("tiny"), settings, show_progress=False)
    assert not (tmp_path / "run" / "model").exists()
    for checkpoint in (tmp_path / "run" / "checkpoints").glob("step-*"):
        weights = load_bilm(checkpoint / "model").state_dict()
        assert all(torch.isfinite(t).all() for t in weights.values())


def test_the_run_says_which_budget_ended_it(tmp_path):
    text = write_corpus(tmp_path / "text.txt")
    options = preset_architecture("tiny")
    by_tokens = pretrain(tmp_path / "t", [text], options, quick_settings(token_budget=40), show_progress=False)
    assert by_tokens.stopped_by == "--token-budget 40 reached" and by_tokens.tokens >= 40
    by_epochs = pretrain(tmp_path / "e", [text], options, quick_settings(epochs=1), show_progress=False)
    assert by_epochs.stopped_by == "the training text ended (1 epoch, --epochs)"


def test_commands_take_a_bundled_model_by_name(tmp_path):
    text = write_corpus(tmp_path / "text.txt", n_lines=8)
    result = run_cli("evaluate", DEFAULT_MODEL, text, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["tokens"] > 0
    result = run_cli(
        "pretrain", tmp_path / "tuned", text, "--init", DEFAULT_MODEL, "--max-steps", "1", "--batch-size", "2",
        "--unroll-steps", "5", "--negatives", "16", "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "tuned" / "run.json").read_text())["init"].endswith(DEFAULT_MODEL)


def test_pretrain_spins_its_threads_and_other_commands_sleep():
    """`python -m spacy_elmo pretrain` starts torch with OMP_WAIT_POLICY=ACTIVE, the other commands
    with PASSIVE, and an exported value wins."""
    import os
    import subprocess
    import sys

    probe = "import os, runpy, sys; sys.argv = ['spacy_elmo', sys.argv[1], '--help']; "
    probe += "sys.stdout = open(os.devnull, 'w'); "
    probe += "exec('try:\\n runpy.run_module(\"spacy_elmo\", run_name=\"__main__\")\\nexcept SystemExit: pass'); "
    probe += "sys.stdout = sys.__stdout__; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}

    def policy(command: str, **extra: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe, command], env={**env, **extra}, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert policy("pretrain") == "ACTIVE"
    assert policy("embed") == "PASSIVE"
    assert policy("pretrain", OMP_WAIT_POLICY="PASSIVE") == "PASSIVE"
