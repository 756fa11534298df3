"""What ak.array accepts, how it normalises it, and what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import arktos as ak


@pytest.mark.parametrize(("given", "want"), [
    (np.arange(20, dtype=np.int64)[::3], np.arange(20, dtype=np.int64)[::3]),
    (np.asfortranarray(np.arange(12.0).reshape(3, 4))[:, 1], np.array([1.0, 5.0, 9.0])),
    (np.arange(5, dtype=">i4"), np.arange(5, dtype="<i4")),
    (np.array([1.5, -2.5], dtype=">f8")[::-1], np.array([-2.5, 1.5])),
    ([1, 2, 3], np.array([1, 2, 3])),
    ([True, False], np.array([True, False])),
    ([], np.array([], dtype=np.float64)),
    (7, np.array([7])),
    (2.5, np.array([2.5])),
    (np.uint16(9), np.array([9], dtype=np.uint16)),
    (np.array(3, dtype=np.int8), np.array([3], dtype=np.int8)),
], ids=["strided", "fortran-column", "big-endian", "big-endian-reversed", "list", "bool-list",
        "empty-list", "int", "float", "numpy-scalar", "0-d"])
def test_accepted_inputs(conn: ak.Connection, given, want: np.ndarray) -> None:
    got = conn.array(given).to_ndarray()
    assert got.dtype == want.dtype.newbyteorder("<")
    np.testing.assert_array_equal(got, want)


def test_big_endian_input_stores_little_endian_values(conn: ak.Connection) -> None:
    big = np.array([1, 256, -2], dtype=">i4")
    a = conn.array(big)
    assert a.dtype == np.dtype("<i4")
    assert a.to_ndarray().tobytes() == big.astype("<i4").tobytes()


def test_multi_dimensional_input_is_refused(conn: ak.Connection) -> None:
    with pytest.raises(ValueError, match=r"only 1-D arrays are supported.*x\.ravel\(\)"):
        conn.array(np.zeros((2, 2)))


def test_masked_input(conn: ak.Connection) -> None:
    """A masked array's masked elements are refused, not stored as the
    values under the mask (np.asarray keeps those); without any masked
    element it uploads as its data."""
    x = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])
    with pytest.raises(ValueError, match=r"1 masked elements.*x\.filled\(value\) or x\.compressed\(\)"):
        conn.array(x)
    assert np.array_equal(conn.array(x.filled(0)).to_ndarray(), [1, 0, 3])
    assert np.array_equal(conn.array(np.ma.masked_array([4, 5], mask=False)).to_ndarray(), [4, 5])


@pytest.mark.parametrize("data", [
    np.array([object()]), np.zeros(2, np.complex128), np.zeros(2, "M8[s]"),
    np.zeros(2, "m8[s]"), np.array([b"a"]), np.zeros(2, "V4"), np.zeros(2, np.float16),
], ids=["object", "complex", "datetime64", "timedelta64", "bytes", "void", "float16"])
def test_unsupported_dtypes_raise_type_error(conn: ak.Connection, data) -> None:
    before = conn.list_arrays()
    with pytest.raises(TypeError) as info:
        conn.array(data)
    message = str(info.value)
    assert str(np.asarray(data).dtype) in message
    assert "int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, bool" in message
    assert conn.list_arrays() == before


def test_named_upload(conn: ak.Connection) -> None:
    a = conn.array([1, 2], name="test_named_upload")
    assert a.name == "test_named_upload"
    assert conn.attach("test_named_upload").to_ndarray().tolist() == [1, 2]


def test_masked_operands(conn: ak.Connection) -> None:
    """Masked arrays given where an array is uploaded on the way (an
    operand, an index, a group-by's values) are refused as ak.array
    refuses them."""
    a = conn.array(np.arange(3))
    x = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])
    for use in (lambda: a + x, lambda: a[np.ma.masked_array([0, 1], mask=[1, 0])],
                lambda: ak.GroupBy(a).sum(x)):
        with pytest.raises(ValueError, match="masked elements"):
            use()
