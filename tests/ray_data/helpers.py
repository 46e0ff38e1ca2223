"""Shared by the Ray Data tests."""


def model_args(files):
    weights, options = files
    return ["--model", str(weights), "--options", str(options)]


class FakeDataset:
    def map_batches(self, fn, **kwargs):
        self.fn, self.kwargs = fn, kwargs
        return "mapped"
