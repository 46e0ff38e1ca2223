"""The log-uniform sampler and the sampled / full softmax losses."""

import math

import pytest
import torch

from spacy_elmo.training.sampled_softmax import LogUniformSampler, full_softmax_loss, sampled_softmax_loss

from .helpers import single_thread  # noqa: F401

pytestmark = pytest.mark.usefixtures("single_thread")


def test_sampler_draws_unique_ids_and_counts_tries():
    sampler = LogUniformSampler(vocab_size=50, n_samples=20)
    generator = torch.Generator().manual_seed(0)
    for _ in range(20):
        ids, tries = sampler.sample(generator)
        assert len(ids) == 20 and len(set(ids.tolist())) == 20
        assert ids.min() >= 0 and ids.max() < 50
        assert tries >= 20


def test_sampler_follows_the_log_uniform_distribution():
    sampler = LogUniformSampler(vocab_size=1000, n_samples=10)
    draws = sampler._draw(200_000, torch.Generator().manual_seed(1))
    counts = torch.bincount(draws, minlength=1000).double() / len(draws)
    expected = sampler.probability(torch.arange(1000))
    assert math.isclose(float(expected.sum()), 1.0, rel_tol=1e-9)
    for k in (0, 1, 5, 50):
        assert abs(counts[k] - expected[k]) < 4 * math.sqrt(expected[k] / len(draws)) + 1e-4


def test_sampled_loss_matches_the_tensorflow_formula():
    torch.manual_seed(0)
    vocab_size, dim = 30, 6
    hidden, weight, bias = torch.randn(5, dim), torch.randn(vocab_size, dim), torch.randn(vocab_size)
    targets = torch.tensor([0, 3, 7, 7, 29])
    sampler = LogUniformSampler(vocab_size, 8)
    loss = sampled_softmax_loss(hidden, targets, weight, bias, sampler, torch.Generator().manual_seed(3))
    sampled, tries = sampler.sample(torch.Generator().manual_seed(3))

    def log_q(k):
        p = (math.log(k + 2) - math.log(k + 1)) / math.log(vocab_size + 1)
        return math.log(1 - (1 - p) ** tries)

    expected = 0.0
    for row, target in enumerate(targets.tolist()):
        logits = [float(hidden[row] @ weight[target] + bias[target]) - log_q(target)]
        for k in sampled.tolist():
            if k != target:  # accidental hits removed
                logits.append(float(hidden[row] @ weight[k] + bias[k]) - log_q(k))
        expected += math.log(sum(math.exp(x) for x in logits)) - logits[0]
    assert float(loss) == pytest.approx(expected / len(targets), rel=1e-5)


def test_sampled_loss_gradients_match_autograd():
    torch.manual_seed(0)
    vocab_size, dim = 40, 5
    params = [torch.randn(7, dim), torch.randn(vocab_size, dim), torch.randn(vocab_size)]
    targets = torch.tensor([0, 1, 2, 3, 5, 8, 39])  # frequent ids: accidental hits are likely
    sampler = LogUniformSampler(vocab_size, 12)
    sampled, tries = sampler.sample(torch.Generator().manual_seed(5))
    assert set(targets.tolist()) & set(sampled.tolist())

    fused = [p.clone().double().requires_grad_() for p in params]
    sampled_softmax_loss(*fused[:1], targets, *fused[1:], sampler, torch.Generator().manual_seed(5)).backward()

    hidden, weight, bias = [p.clone().double().requires_grad_() for p in params]
    log_q = torch.log(sampler.expected_count(torch.arange(vocab_size), tries))
    logits = hidden @ weight.t() + bias - log_q
    true = logits[torch.arange(7), targets]
    negatives = logits[:, sampled].masked_fill(targets.unsqueeze(1) == sampled.unsqueeze(0), float("-inf"))
    (torch.logsumexp(torch.cat([true.unsqueeze(1), negatives], 1), 1) - true).mean().backward()
    for mine, reference in zip(fused, (hidden, weight, bias)):
        torch.testing.assert_close(mine.grad, reference.grad)


def test_full_softmax_loss_is_cross_entropy():
    torch.manual_seed(0)
    hidden, weight, bias = torch.randn(4, 3), torch.randn(7, 3), torch.randn(7)
    targets = torch.tensor([1, 0, 6, 2])
    logits = hidden @ weight.t() + bias
    expected = -torch.log_softmax(logits, -1)[torch.arange(4), targets].mean()
    assert float(full_softmax_loss(hidden, targets, weight, bias)) == pytest.approx(float(expected), rel=1e-6)


def test_sampled_loss_trains_toward_the_true_class():
    torch.manual_seed(0)
    weight = torch.randn(200, 4, requires_grad=True)
    bias = torch.zeros(200, requires_grad=True)
    hidden = torch.randn(16, 4)
    targets = torch.randint(0, 200, (16,))
    optimizer = torch.optim.Adagrad([weight, bias], lr=0.5)
    sampler = LogUniformSampler(200, 20)
    before = float(full_softmax_loss(hidden, targets, weight, bias).detach())
    for _ in range(100):
        optimizer.zero_grad()
        sampled_softmax_loss(hidden, targets, weight, bias, sampler).backward()
        optimizer.step()
    assert float(full_softmax_loss(hidden, targets, weight, bias).detach()) < before - 1.0
