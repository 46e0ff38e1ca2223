"""The device, runtime and dtype names, the thread settings, and their errors."""
import pytest

from spacy_elmo import runtime
from spacy_elmo.errors import ConfigError
from spacy_elmo.runtime import (
    check_compute_dtype,
    check_device,
    check_runtime,
    check_storage_dtype,
    omp_wait_policy,
    onnx_threads,
)


@pytest.mark.parametrize("name", ["auto", "cpu", "cuda", "cuda:0", "cuda:12", "mps"])
def test_device_names_pass(name):
    assert check_device(name) == name


@pytest.mark.parametrize("name", ["gpu", "cuda:", "cuda:x", "CPU", "cpu ", -1])
def test_an_unknown_device_is_named(name):
    with pytest.raises(ConfigError) as error:
        check_device(name, what="embedding device")
    assert str(error.value) == f"unknown embedding device {name!r}; use auto, cpu, cuda, cuda:N or mps"


def test_a_bare_gpu_index_is_refused():
    with pytest.raises(ConfigError, match=r"^unknown device 0; use auto, cpu, cuda, cuda:N or mps$"):
        check_device(0)


@pytest.mark.parametrize("name, canonical", [("float32", "float32"), ("fp32", "float32"), ("bf16", "bfloat16"), ("bfloat16", "bfloat16"), ("int8", "int8")])
def test_compute_dtypes_and_short_names(name, canonical):
    assert check_compute_dtype(name) == canonical


def test_an_unknown_compute_dtype_lists_the_choices():
    with pytest.raises(ConfigError) as error:
        check_compute_dtype("float16")
    assert str(error.value) == "unknown compute dtype 'float16'; use one of float32, fp32, bfloat16, bf16, int8"


def test_runtimes():
    assert check_runtime("torch") == "torch" and check_runtime("onnxruntime") == "onnxruntime"
    with pytest.raises(ConfigError) as error:
        check_runtime("onnx")
    assert str(error.value) == "unknown runtime 'onnx'; use one of torch, onnxruntime"


def test_storage_dtypes_and_their_choices():
    assert check_storage_dtype("float16-softmax") == "float16-softmax"
    with pytest.raises(ConfigError) as error:
        check_storage_dtype("bfloat16", what="vector dtype", choices=runtime.VECTOR_STORAGE_DTYPES)
    assert str(error.value) == "unknown vector dtype 'bfloat16'; use one of float32, float16"


def test_only_pretrain_spins_its_threads():
    assert omp_wait_policy("pretrain") == "ACTIVE"
    assert omp_wait_policy("embed") == "PASSIVE"


@pytest.mark.parametrize("value, threads", [("3", 3), ("1", 1), ("0", 0), ("", 0), ("two", 0), ("-2", 0)])
def test_onnx_threads_follow_omp_num_threads(monkeypatch, value, threads):
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert onnx_threads() == threads


def test_onnx_threads_default_without_omp_num_threads(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert onnx_threads() == 0


def test_set_threads_refuses_fewer_than_one():
    pytest.importorskip("torch")
    with pytest.raises(ConfigError, match="^threads must be at least 1, got 0$"):
        runtime.set_threads(0)


def test_set_threads_sets_torch_and_caps_at_the_cpus(monkeypatch):
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        assert runtime.set_threads(2) == 2 and torch.get_num_threads() == 2
        monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0}, raising=False)
        assert runtime.set_threads() == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_torch_device_and_dtype():
    torch = pytest.importorskip("torch")
    assert runtime.torch_device("cpu") == torch.device("cpu")
    assert runtime.torch_device("auto", auto=torch.device("cpu")) == torch.device("cpu")
    assert runtime.torch_device(torch.device("cpu")) == torch.device("cpu")
    assert runtime.torch_dtype("bf16") is torch.bfloat16
    with pytest.raises(ConfigError, match="^int8 is not a cast of the weights"):
        runtime.torch_dtype("int8")


def test_a_cuda_device_without_a_gpu_is_refused(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError) as error:
        runtime.torch_device("cuda:0")
    assert str(error.value) == "device 'cuda:0' was asked for, but torch sees no CUDA GPU here"
