"""CuPy and PyTorch CUDA arrays: labelled where they are, equal to the host result, on the caller's stream.
Skipped where there is no GPU (CI); run on a GPU machine (docs/testing.md)."""

import numpy as np
import pytest

import cudacca
from conftest import random_image
from cudacca._table import _to_numpy

if not cudacca.cuda_available()[0]:
    pytest.skip("no usable CUDA device", allow_module_level=True)

CASES = [((1, 1), 0.5, 1), ((1, 301), 0.5, 1), ((301, 1), 0.5, 1), ((257, 263), 0.5, 1), ((128, 128), 0.4, 4),
         ((33, 35, 37), 0.3, 1), ((40, 40, 40), 0.6, 2)]


def _host(case, full):
    shape, d, g = case
    image = random_image(shape, d, g, seed=sum(shape))
    labels, table = cudacca.label(image, connectivity="full" if full else "face", return_table=True,
                                  properties="all", backend="cpu")
    return image, labels, table


def _same_table(device_table, host_table, library):
    """The device table's columns are arrays of the input's library, equal to the host engine's."""
    assert device_table.keys() == host_table.keys()
    for k in device_table:
        assert type(device_table[k]).__module__.split(".")[0] == library, k
        if k.split("-")[0] in cudacca.BASIC:  # the same operations on both sides, no fused multiply-adds: same bits
            np.testing.assert_array_equal(_to_numpy(device_table[k]), host_table[k], err_msg=k)
        else:
            np.testing.assert_allclose(_to_numpy(device_table[k]), host_table[k], rtol=1e-12, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])))
@pytest.mark.parametrize("full", [False, True])
def test_cupy_in_cupy_out(case, full):
    cupy = pytest.importorskip("cupy")
    image, expected, expected_table = _host(case, full)
    for dtype in (np.uint8, np.float32, bool):
        d_image = cupy.asarray(image.astype(dtype))
        labels, table = cudacca.label(d_image, connectivity="full" if full else "face", return_table=True,
                                      properties="all")
        assert isinstance(labels, cupy.ndarray) and labels.device.id == d_image.device.id
        np.testing.assert_array_equal(cupy.asnumpy(labels), expected)
        _same_table(table, expected_table, "cupy")
        assert cudacca.last_backend()[0] == "cuda"


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])))
@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_periodic_on_the_device(case, library):
    """Periodic boundaries on a GPU array: joined on the host after the GPU's labeling, the labels on the device,
    the table's columns moved there; equal to the CPU engine's."""
    module = pytest.importorskip(library)
    shape, d, g = case
    image = random_image(shape, d, g, seed=sum(shape) + 1)
    for connectivity in range(1, len(shape) + 1):
        expected, expected_table = cudacca.label(image, connectivity=connectivity, periodic=True, return_table=True,
                                                 properties="all", backend="cpu")
        d_image = module.asarray(image) if library == "cupy" else module.from_numpy(image).cuda()
        labels, table = cudacca.label(d_image, connectivity=connectivity, periodic=True, return_table=True,
                                      properties="all")
        np.testing.assert_array_equal(_to_numpy(labels), expected)
        _same_table(table, expected_table, library)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])))
def test_delta_on_the_device(case):
    """Value tolerance on a CuPy array: the pixel union-find and the multi-label stages on the GPU, labels and table
    there, equal to the CPU engine's."""
    cupy = pytest.importorskip("cupy")
    shape, d, g = case
    rng = np.random.default_rng(sum(shape))
    image = (random_image(shape, d, g, seed=sum(shape) + 2) * rng.integers(1, 9, size=shape)).astype(np.float32)
    for connectivity in range(1, len(shape) + 1):
        for delta in (0, 1.5):
            expected, expected_table = cudacca.label(image, connectivity=connectivity, delta=delta, return_table=True,
                                                     properties="all", backend="cpu")
            labels, table = cudacca.label(cupy.asarray(image), connectivity=connectivity, delta=delta,
                                          return_table=True, properties="all")
            np.testing.assert_array_equal(cupy.asnumpy(labels), expected)
            _same_table(table, expected_table, "cupy")


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])))
@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_contacts_on_the_device(case, library):
    """Contacts of a GPU label image: counted on the GPU, the table in the labels' library; equal to the CPU
    engine's; a host image on the CUDA engine too."""
    module = pytest.importorskip(library)
    shape, d, g = case
    labels = cudacca.label(random_image(shape, d, g, seed=sum(shape) + 3), connectivity="face", backend="cpu")
    labels = (labels % 7).astype(np.int32)  # components renamed into 6 labels: they touch
    for connectivity in range(1, len(shape) + 1):
        expected = cudacca.contacts(labels, connectivity=connectivity, spacing=(0.5, 2.0, 3.0)[:len(shape)],
                                    backend="cpu")
        d_labels = module.asarray(labels) if library == "cupy" else module.from_numpy(labels).cuda()
        for source, backend in ((d_labels, "auto"), (labels, "cuda")):
            table = cudacca.contacts(source, connectivity=connectivity, spacing=(0.5, 2.0, 3.0)[:len(shape)],
                                     backend=backend)
            assert table.keys() == expected.keys()
            for k in table:
                if source is d_labels:
                    assert type(table[k]).__module__.split(".")[0] == library, k
                np.testing.assert_array_equal(_to_numpy(table[k]), expected[k], err_msg=k)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[0])))
def test_torch_in_torch_out(case):
    torch = pytest.importorskip("torch")
    image, expected, expected_table = _host(case, True)
    t = torch.from_numpy(image).cuda()
    labels, table = cudacca.label(t, connectivity="full", return_table=True, properties="all")
    assert isinstance(labels, torch.Tensor) and labels.is_cuda and labels.dtype == torch.int32
    np.testing.assert_array_equal(labels.cpu().numpy(), expected)
    _same_table(table, expected_table, "torch")
    flipped = np.ascontiguousarray(np.transpose(image))
    non_contiguous = torch.from_numpy(flipped).cuda().permute(*reversed(range(image.ndim)))  # a view: copied once
    np.testing.assert_array_equal(cudacca.label(non_contiguous, connectivity="full").cpu().numpy(), expected)


def test_mask_post_processing_and_errors_on_device():
    cupy = pytest.importorskip("cupy")
    image = random_image((200, 300), 0.5, 2, seed=5)
    mask = np.zeros_like(image)
    mask[50:150] = 1
    expected = cudacca.label(image, mask=mask, sort=True, min_size=6, backend="cpu")
    got = cudacca.label(cupy.asarray(image), mask=cupy.asarray(mask), sort=True, min_size=6)
    np.testing.assert_array_equal(cupy.asnumpy(got), expected)
    with pytest.raises(ValueError, match="where the image is"):
        cudacca.label(cupy.asarray(image), mask=mask)
    with pytest.raises(ValueError, match="CPU engine cannot read GPU memory"):
        cudacca.label(cupy.asarray(image), backend="cpu")


def test_caller_stream_is_respected():
    """The image is written by a kernel on a user stream and labelled at once, without a synchronization; the labels
    and the table are written in order on that stream, so that the work queued there next reads them (the host does
    not wait for them)."""
    cupy = pytest.importorskip("cupy")
    for shape in ((1024, 1024), (64, 64)):  # the general path and the small-image one
        image = random_image(shape, 0.5, 1, seed=9)
        expected, expected_table = cudacca.label(image, backend="cpu", return_table=True)
        source = cupy.asarray(image)
        stream = cupy.cuda.Stream(non_blocking=True)
        for _ in range(5):
            with stream:
                target = cupy.zeros_like(source)
                for _ in range(20):  # queue work before the copy that makes the image
                    target = target * 1
                target[...] = source
                got, table = cudacca.label(target, return_table=True)
                # queued on the caller's stream right behind the call, as any CuPy operation of the caller's
                label_sum = got.sum(dtype=cupy.uint64)
                area_sum = table["area"].sum()
                host = cupy.asnumpy(got)  # on the current stream, the caller's
            stream.synchronize()
            np.testing.assert_array_equal(host, expected)
            assert int(label_sum) == int(expected.sum(dtype=np.uint64))
            assert float(area_sum) == float(expected_table["area"].sum())


def test_output_arrays_on_the_device_and_page_locked():
    """`output` on the GPU (CuPy, PyTorch), and page-locked host memory in and out (CuPy's pinned arrays, PyTorch's
    pin_memory()), large enough that the copies go by DMA without staging: the same labels and table."""
    cupy = pytest.importorskip("cupy")
    import cupyx

    image = random_image((2048, 1500), 0.5, 1, seed=41)  # 3 MB in, 12 MB of labels out: past one staging chunk
    expected, expected_table = cudacca.label(image, return_table=True, backend="cpu")
    d_image = cupy.asarray(image)
    output = cupy.full(image.shape, 7, cupy.uint32)
    got, table = cudacca.label(d_image, return_table=True, output=output)
    assert got is output
    np.testing.assert_array_equal(cupy.asnumpy(output), expected)
    _same_table(table, expected_table, "cupy")
    with pytest.raises(TypeError, match="cupy array"):
        cudacca.label(d_image, output=np.zeros(image.shape, np.uint32))
    pinned_image = cupyx.empty_pinned(image.shape, image.dtype)
    pinned_image[...] = image
    for source in (image, pinned_image):
        pinned_labels = cupyx.zeros_pinned(image.shape, np.uint32)
        got, table = cudacca.label(source, return_table=True, backend="cuda", output=pinned_labels)
        assert got is pinned_labels
        np.testing.assert_array_equal(pinned_labels, expected)
        for k in expected_table:
            np.testing.assert_array_equal(table[k], expected_table[k])
    np.testing.assert_array_equal(cudacca.label(pinned_image, backend="cuda"), expected)  # pinned in, pageable out
    torch = pytest.importorskip("torch")
    t_image = torch.from_numpy(image).pin_memory()
    t_labels = torch.zeros(image.shape, dtype=torch.int32).pin_memory()
    assert cudacca.label(t_image, backend="cuda", output=t_labels) is t_labels
    np.testing.assert_array_equal(t_labels.numpy(), expected)
    t_device = torch.zeros(image.shape, dtype=torch.int64, device="cuda")
    assert cudacca.label(t_image.cuda(), output=t_device) is t_device
    np.testing.assert_array_equal(t_device.cpu().numpy(), expected)


def test_current_device_and_torch_cpu_tables():
    """A call leaves the caller's current CUDA device as it was; PyTorch CPU tensors give PyTorch tables."""
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    before = cupy.cuda.runtime.getDevice()
    image = random_image((64, 64), 0.5, 1, seed=2)
    cudacca.label(cupy.asarray(image))
    assert cupy.cuda.runtime.getDevice() == before
    labels, table = cudacca.label(torch.from_numpy(image), return_table=True, properties="all")
    assert isinstance(labels, torch.Tensor) and not labels.is_cuda
    assert all(isinstance(v, torch.Tensor) for v in table.values())
    expected = cudacca.label(image, backend="cpu")
    np.testing.assert_array_equal(labels.numpy(), expected)


def test_repeated_runs_are_bit_identical():
    cupy = pytest.importorskip("cupy")
    image = cupy.asarray(random_image((64, 64, 64), 0.5, 1, seed=1))
    first, t1 = cudacca.label(image, connectivity="full", return_table=True, properties="all")
    for _ in range(5):
        again, t2 = cudacca.label(image, connectivity="full", return_table=True, properties="all")
        assert bool((again == first).all())
        for k in t1:
            assert np.array_equal(_to_numpy(t1[k]), _to_numpy(t2[k]))


def test_automatic_backend_by_size():
    """Automatic takes the CPU engine below 24,576 pixels of host image, the CUDA engine from there, never for a
    device array; the choice never changes a result."""
    cupy = pytest.importorskip("cupy")
    cases = [((64, 64), "cpu"), ((128, 191), "cpu"), ((128, 192), "cuda"), ((23, 32, 32), "cpu"), ((24, 32, 32), "cuda")]
    for shape, expected_backend in cases:
        image = random_image(shape, 0.5, 1, seed=shape[0])
        labels, table = cudacca.label(image, connectivity="full", return_table=True, properties="all")
        assert cudacca.last_backend()[0] == expected_backend, shape
        for backend in ("cpu", "cuda"):
            forced, forced_table = cudacca.label(image, connectivity="full", return_table=True, properties="all",
                                                 backend=backend)
            np.testing.assert_array_equal(forced, labels)
            for k in table:
                np.testing.assert_allclose(forced_table[k], table[k], rtol=1e-12, atol=1e-12, err_msg=k)
        cudacca.label(cupy.asarray(image))
        assert cudacca.last_backend()[0] == "cuda"


def test_batch_on_device_equals_host():
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    stack = np.stack([random_image((96, 80), 0.5, 1, seed=s) for s in range(12)])
    expected, table = cudacca.label_batch(stack, connectivity="full", return_table=True, backend="cpu")
    for device_stack in (cupy.asarray(stack), torch.from_numpy(stack).cuda()):
        labels, t = cudacca.label_batch(device_stack, connectivity="full", return_table=True)
        np.testing.assert_array_equal(_to_numpy(labels), expected)
        for k in table:
            np.testing.assert_array_equal(_to_numpy(t[k]), table[k], err_msg=k)


@pytest.mark.parametrize("shape", [(64, 64), (1, 300), (300, 1), (256, 256), (257, 256), (512, 512), (513, 512),
                                   (17, 9, 5), (40, 40, 40), (64, 64, 64), (65, 64, 64)])
def test_small_image_paths_equal_the_cpu_engine(shape):
    """The CUDA engine's small-image paths (cuda/itkCCACudaEngineSmallImage.cu) against the CPU engine, on both
    sides of their thresholds: up to 2^16 pixels the label image and the basic sums come back through mapped
    memory (the sums only up to 4,096 components: the checkerboard has more), up to 2^18 one cooperative launch,
    beyond the general path. Three calls each: launched, captured as a graph, replayed."""
    spacing = (0.5, 2.0, 1.25)[: len(shape)]
    checkerboard = (np.indices(shape).sum(axis=0) % 2).astype(np.uint8)
    cases = [dict(image=random_image(shape, 0.5, 1, seed=sum(shape)), connectivity="face"),
             dict(image=random_image(shape, 0.6, 3, seed=7), connectivity="full"),
             dict(image=checkerboard, connectivity="face"),
             dict(image=random_image(shape, 0.4, 2, seed=3), connectivity="face", min_size=3),
             dict(image=random_image(shape, 0.4, 2, seed=4), connectivity="full", keep_largest=2, sort=True),
             dict(image=random_image(shape, 0.5, 1, seed=5).astype(np.int16) * 3, background=3, dtype=np.int16),
             dict(image=random_image(shape, 0.5, 1, seed=6), connectivity="face", properties="all")]
    for case in cases:
        image = case.pop("image")
        expected, expected_table = cudacca.label(image, spacing=spacing, return_table=True, backend="cpu", **case)
        for _ in range(3):
            labels, table = cudacca.label(image, spacing=spacing, return_table=True, backend="cuda", **case)
            np.testing.assert_array_equal(labels, expected, err_msg=str(case))
            assert labels.dtype == expected.dtype
            assert list(table) == list(expected_table)
            for k in table:
                np.testing.assert_allclose(table[k], expected_table[k], rtol=1e-12, atol=1e-12, err_msg=f"{k} {case}")


def test_intensity_statistics_on_the_gpu_equal_the_cpu_engine():
    """Intensity statistics summed on the GPU (host arrays and CuPy arrays, including one large component
    of long runs and millions of tiny ones): equal to the CPU engine's to 1e-12 of the scale, min/max and labels
    exactly, and two GPU runs bit-identical (the chunks are joined in a fixed order)."""
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(8)
    cases = [((257, 263), 0.5, 1), ((40, 40, 41), 0.8, 2), ((1, 3001), 0.6, 1), ((2048, 2048), 1.0, 1),
             ((1024, 1024), 0.25, 1), ((64, 64, 64), 0.4, 1)]
    for shape, density, granularity in cases:
        image = random_image(shape, density, granularity, seed=sum(shape)) if density < 1 else np.ones(shape, np.uint8)
        for dtype in (np.float32, np.int16):
            if dtype is np.int16:
                intensity = rng.integers(-1024, 3000, size=shape).astype(dtype)
            else:
                intensity = rng.uniform(1, 1000, size=shape).astype(dtype)
            for connectivity in ("face", "full"):
                what = f"{shape} d={density} {dtype.__name__} {connectivity}"
                labels, table = cudacca.label(image, connectivity=connectivity, intensity=intensity,
                                              return_table=True, properties="all", backend="cpu")
                g_labels, g_table = cudacca.label(image, connectivity=connectivity, intensity=intensity,
                                                  return_table=True, properties="all", backend="cuda")
                assert cudacca.last_backend()[0] == "cuda"
                np.testing.assert_array_equal(g_labels, labels)
                d_labels, d_table = cudacca.label(cupy.asarray(image), connectivity=connectivity,
                                                  intensity=cupy.asarray(intensity), return_table=True,
                                                  properties="all")
                np.testing.assert_array_equal(d_labels.get(), labels)
                again = cudacca.label(image, connectivity=connectivity, intensity=intensity, return_table=True,
                                      properties="all", backend="cuda")[1]
                m = float(np.abs(intensity).max())
                for k in table:
                    if not (k.startswith("intensity") or k.startswith("weighted") or k.startswith("centroid_w")):
                        continue
                    ours = _to_numpy(g_table[k])
                    assert ours.tobytes() == _to_numpy(again[k]).tobytes(), f"{what}: {k} differs between runs"
                    np.testing.assert_array_equal(_to_numpy(d_table[k]), ours, err_msg=f"{what} cupy {k}")
                    if k in ("intensity_min", "intensity_max"):
                        np.testing.assert_array_equal(ours, table[k], err_msg=f"{what} {k}")
                    elif k in ("intensity_mean", "intensity_stddev"):
                        np.testing.assert_allclose(ours, table[k], rtol=1e-12, atol=1e-12 * m, err_msg=f"{what} {k}")
                    elif k in ("intensity_sum", "intensity_variance"):
                        np.testing.assert_allclose(ours, table[k], rtol=1e-11, atol=1e-12 * m * m, err_msg=f"{what} {k}")


def test_cupy_multilabel_equals_the_cpu_engine():
    """Multi-label input on the device: labels, table (with the class column) and the cleaned
    segmentation equal the CPU engine's; the class column and the cleaned image keep the input's dtype."""
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(5)
    for shape in [(257, 263), (45, 77), (40, 40, 41), (1, 301)]:
        for full in (False, True):
            on = random_image(shape, 0.8, 2, seed=sum(shape))
            classes = rng.choice(np.asarray([1, 2, 7, 200], np.uint8), size=shape)
            image = (classes * on).astype(np.uint8)
            connectivity = "full" if full else "face"
            labels, table = cudacca.label(image, connectivity=connectivity, multilabel=True, return_table=True,
                                          backend="cpu")
            d_labels, d_table = cudacca.label(cupy.asarray(image), connectivity=connectivity, multilabel=True,
                                              return_table=True)
            assert cudacca.last_backend()[0] == "cuda"
            np.testing.assert_array_equal(d_labels.get(), labels)
            assert d_table["class"].dtype == image.dtype
            for k in table:
                np.testing.assert_array_equal(_to_numpy(d_table[k]), table[k], err_msg=k)
            cleaned = cudacca.label(image, connectivity=connectivity, multilabel=True, per_class=True,
                                    keep_largest=1, class_values=True, backend="cpu")
            d_cleaned = cudacca.label(cupy.asarray(image), connectivity=connectivity, multilabel=True,
                                      per_class=True, keep_largest=1, class_values=True)
            assert d_cleaned.dtype == image.dtype
            np.testing.assert_array_equal(d_cleaned.get(), cleaned)
            # host arrays on the CUDA engine as well
            h_labels = cudacca.label(image, connectivity=connectivity, multilabel=True, backend="cuda")
            np.testing.assert_array_equal(h_labels, labels)


def test_dask_two_workers_share_one_gpu():
    """On one GPU: two Dask worker processes, each labelling its chunks with the CUDA engine on
    device 0 (the multi-GPU path, every worker its own engine and context), the result equal to the in-memory
    labeling."""
    distributed = pytest.importorskip("distributed")
    da = pytest.importorskip("dask.array")
    image = random_image((96, 80, 64), 0.4, 1, seed=23)
    expected, expected_table = cudacca.label(image, connectivity="full", return_table=True, backend="cpu")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            # backend="cuda": a worker without its GPU raises instead of falling back to the CPU engine
            with distributed.get_task_stream(client) as stream:
                labels, table = cudacca.label(da.from_array(image, chunks=(24, 40, 32)), connectivity="full",
                                              return_table=True, backend="cuda")
                computed = labels.compute()
            np.testing.assert_array_equal(computed, expected)
            for k in expected_table:
                np.testing.assert_allclose(np.asarray(table[k]), np.asarray(expected_table[k]), rtol=1e-12, err_msg=k)
            assert len({task["worker"] for task in stream.data}) == 2  # both workers labelled chunks
