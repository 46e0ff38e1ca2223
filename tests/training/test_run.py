"""`pretrain` and `resume` end to end: the bilm-tf training test, exact resume, fine-tuning, the
new softmax, held-out perplexity, budgets, divergence and refused settings (the `pretrain`
command: tests/cli/test_pretrain.py)."""

import json
from pathlib import Path

import pytest
import torch

from spacy_elmo.bilm import load_bilm
from spacy_elmo.training import TrainingSettings, TrainingSetupError, evaluate_perplexity, pretrain, resume
from spacy_elmo.training.errors import TrainingDiverged
from spacy_elmo.training.corpus import TextCorpus, make_tokenizer
from spacy_elmo.training.presets import apply_overrides, preset_architecture

from .helpers import WORDS, single_thread, write_corpus  # noqa: F401

pytestmark = pytest.mark.usefixtures("single_thread")


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
