"""What the walkthrough says about torch 2.13, checked against the installed torch (and
against ember where the chapter compares the two). Each test names the chapter whose
sentence it pins; a torch release that changes the fact fails here first.

PyTorch counterpart: none (the oracle is torch itself).
"""

import io
import tempfile
import threading
import zipfile

import torch
import torch.distributed as dist

import ember


def test_torch_save_writes_seven_records_and_ember_four():
    """Chapter 9, "The zip layout": the records of a one-tensor checkpoint."""
    def records(lib):
        buffer = io.BytesIO()
        lib.save({"w": lib.ones(2, 3), "step": 7}, buffer)
        return sorted(name.split("/", 1)[1] for name in zipfile.ZipFile(buffer).namelist())

    assert records(ember) == ["byteorder", "data.pkl", "data/0", "version"]
    assert records(torch) == [".data/serialization_id", ".format_version", ".storage_alignment",
                              "byteorder", "data.pkl", "data/0", "version"]
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2, 3)}, buffer)
    buffer.seek(0)
    assert ember.load(buffer)["w"].tolist() == [[1.0] * 3] * 2  # the three extra records are accepted


def test_sequence_nr_counts_per_thread_in_torch_and_per_process_in_ember():
    """Chapter 3, "The engine's ordering": torch's sequence_nr is thread-local."""
    x = torch.ones(1, requires_grad=True)
    first = x.exp().grad_fn._sequence_nr()
    worker = threading.Thread(target=lambda: [x.exp() for _ in range(5)])
    worker.start()
    worker.join()
    assert x.exp().grad_fn._sequence_nr() == first + 1

    y = ember.ones(1, requires_grad=True)
    first = y.exp().grad_fn._seq
    worker = threading.Thread(target=lambda: [y.exp() for _ in range(5)])
    worker.start()
    worker.join()
    assert y.exp().grad_fn._seq == first + 6


def test_a_size_one_dimension_may_have_any_stride_in_a_contiguous_tensor():
    """Chapter 1, "Where the numbers come from": contiguity skips size-1 dimensions."""
    for lib in (ember, torch):
        x = lib.arange(12).as_strided((3, 1, 4), (4, 100, 1))
        assert x.is_contiguous()
        assert x.contiguous().stride() == (4, 100, 1)


def test_ddp_first_iteration_is_one_bucket_then_rebuilt_in_arrival_order():
    """Chapter 14, "DistributedDataParallel and its reducer": torch 2.13's default
    buckets; ember computes the size-capped buckets from the start."""
    with tempfile.NamedTemporaryFile() as store:
        dist.init_process_group("gloo", store=dist.FileStore(store.name, 1), rank=0, world_size=1)
        try:
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(100, 1000), torch.nn.Linear(1000, 1000),
                                        torch.nn.Linear(1000, 10))
            ddp = torch.nn.parallel.DistributedDataParallel(model)
            total = sum(p.numel() * p.element_size() for p in model.parameters())
            assert ddp._get_ddp_logging_data()["bucket_sizes"] == str(total)
            for _ in range(11):  # DDP logs its runtime statistics at iteration 10
                ddp(torch.randn(4, 100)).sum().backward()
            logged = ddp._get_ddp_logging_data()
        finally:
            dist.destroy_process_group()
    assert logged["has_rebuilt_buckets"] == 1
    assert logged["rebuilt_per_bucket_param_indices"] == "5 4 3 2, 1 0"  # the order backward produced them

    from ember.nn.parallel.reducer import compute_bucket_assignment_by_size
    ours = ember.nn.Sequential(ember.nn.Linear(100, 1000), ember.nn.Linear(1000, 1000), ember.nn.Linear(1000, 10))
    assert len(compute_bucket_assignment_by_size(list(ours.parameters()), [1024 * 1024, 25 * 1024 * 1024])) > 1
