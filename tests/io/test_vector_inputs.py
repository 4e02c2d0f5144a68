"""Reading the vectors and bit strings of a join: .npy and Parquet, and one clear error per bad
input naming the file, the row or record, and what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.datasets import load_digits

from neardup.errors import InputError, ParameterError
from neardup.io import vectors as vectors_module
from neardup.io.records import Ids
from neardup.io.vectors import read_vectors


def _npy(tmp_path: Path, array: np.ndarray, name: str = "x.npy") -> Path:
    path = tmp_path / name
    np.save(path, array)
    return path


def _parquet(tmp_path: Path, columns: dict[str, Any], name: str = "x.parquet", **kw: Any) -> Path:
    path = tmp_path / name
    pq.write_table(pa.table(columns), path, **kw)
    return path


def _reference_words(bits: np.ndarray) -> list[list[int]]:
    """Bit j of a row as bit j % 64 of word j // 64, in plain Python integers."""
    words = []
    for row in bits.tolist():
        packed = [0] * (-(-len(row) // 64))
        for j, bit in enumerate(row):
            packed[j // 64] |= int(bit) << (j % 64)
        words.append(packed)
    return words


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    """Real data: sklearn's 1,797 handwritten digits, 64 pixel intensities 0..16 each."""
    data: np.ndarray = load_digits().data
    return data


# --- what comes back ----------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["cosine", "l2"])
def test_npy_float_vectors_come_back_as_float32_rows_numbered_from_0(
    tmp_path: Path, digits: np.ndarray, metric: str
) -> None:
    items = read_vectors(_npy(tmp_path, digits[1:]), metric)  # row 0 has no all-zero issue
    assert items.data.dtype == np.float32
    assert items.data.flags.c_contiguous
    np.testing.assert_array_equal(items.data, digits[1:].astype(np.float32))
    assert items.ids.tolist() == list(range(len(digits) - 1))
    assert items.dim == 64
    assert len(items) == len(digits) - 1


def test_fortran_ordered_npy_reads_as_the_same_c_contiguous_matrix(
    tmp_path: Path, digits: np.ndarray
) -> None:
    items = read_vectors(_npy(tmp_path, np.asfortranarray(digits)), "l2")
    assert items.data.flags.c_contiguous
    np.testing.assert_array_equal(items.data, digits.astype(np.float32))


def test_integer_counts_read_for_l1_as_int32(tmp_path: Path, digits: np.ndarray) -> None:
    for dtype in (np.uint8, np.int64):
        items = read_vectors(_npy(tmp_path, digits.astype(dtype)), "l1")
        assert items.data.dtype == np.int32
        np.testing.assert_array_equal(items.data, digits.astype(np.int32))


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int64])
def test_bits_are_packed_least_significant_first_64_to_a_word(tmp_path: Path, dtype: type) -> None:
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2, size=(50, 130)).astype(dtype)  # 130 bits: 3 words, 62 unused
    items = read_vectors(_npy(tmp_path, bits), "hamming")
    assert items.dim == 130
    assert items.data.dtype == np.uint64
    assert items.data.shape == (50, 3)
    assert items.data.tolist() == _reference_words(bits)


def test_hamming_distances_survive_packing_on_real_bit_strings(
    tmp_path: Path, digits: np.ndarray
) -> None:
    """Digits thresholded at 8 (dark pixels): popcounts of XORed words are the Hamming distances."""
    bits = digits[:200] > 8
    packed = read_vectors(_npy(tmp_path, bits), "hamming").data
    first, second = np.triu_indices(200, k=1)
    xored = packed[first] ^ packed[second]
    got = np.unpackbits(xored.view(np.uint8), axis=1).sum(axis=1)
    assert got.tolist() == (bits[first] != bits[second]).sum(axis=1).tolist()


def test_npy_is_checked_block_by_block_with_the_same_result(
    tmp_path: Path, digits: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _npy(tmp_path, digits[1:])
    whole = read_vectors(path, "cosine").data
    monkeypatch.setattr(vectors_module, "BLOCK_BYTES", 1000)  # 1 row of float64 per block
    np.testing.assert_array_equal(read_vectors(path, "cosine").data, whole)
    bad = digits.copy()
    bad[1500, 7] = np.nan
    with pytest.raises(InputError, match=r"row 1500, column 7 \(counting from 0\)"):
        read_vectors(_npy(tmp_path, bad, "bad.npy"), "l2")


@pytest.mark.parametrize(
    "vector_type",
    [pa.list_(pa.float32()), pa.large_list(pa.float64()), pa.list_(pa.float32(), 64)],
    ids=["list", "large_list", "fixed_size_list"],
)
def test_parquet_list_columns_read_in_batches_with_ids_as_given(
    tmp_path: Path, digits: np.ndarray, vector_type: pa.DataType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors_module, "BLOCK_BYTES", 4096)  # many record batches
    names = [f"digit-{i}" for i in range(len(digits))]
    path = _parquet(
        tmp_path,
        {"emb": pa.array(digits.tolist(), type=vector_type), "name": names},
        row_group_size=300,
    )
    items = read_vectors(path, "l2", vector_field="emb", id_field="name")
    np.testing.assert_array_equal(items.data, digits.astype(np.float32))
    assert isinstance(items.ids, Ids)
    assert list(items.ids) == names
    numbered = read_vectors(path, "l2", vector_field="emb")
    assert numbered.ids.tolist() == list(range(len(digits)))


def test_parquet_integer_ids_come_back_as_int64(tmp_path: Path) -> None:
    path = _parquet(tmp_path, {"vector": [[1, 0], [0, 1]], "id": pa.array([70, 3], pa.uint32())})
    items = read_vectors(path, "hamming", id_field="id")
    assert items.ids.dtype == np.int64
    assert items.ids.tolist() == [70, 3]
    assert items.data.tolist() == [[1], [2]]


# --- bad input: one line naming file, row and remedy ---------------------------------------


def _npy_error(tmp_path: Path, array: np.ndarray, metric: str) -> str:
    path = _npy(tmp_path, array, "in.npy")
    with pytest.raises(InputError) as info:
        read_vectors(path, metric)
    message = str(info.value)
    assert message.startswith(str(path))
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("array", "metric", "pieces"),
    [
        (np.array([[1.0, 2.0], [3.0, np.nan]]), "l2", ["row 1, column 1", "nan", "finite"]),
        (np.array([[1.0, 2.0], [np.inf, 1.0]]), "cosine", ["row 1, column 0", "inf", "repair"]),
        (np.array([[1e39, 1.0]]), "l2", ["row 0, column 0", "float32", "scale"]),
        (np.array([[1.0, 2.0], [0.0, 0.0]]), "cosine", ["row 1 ", "all zeros", "drop"]),
        (np.array([[1.5, 2.0]]), "l1", ["float64", "quantise", "np.rint"]),
        (np.array([[1, -2]]), "l1", ["row 0, column 1", "-2", "outside [0, 2147483647]"]),
        (np.array([[1, 2**31]]), "l1", ["row 0, column 1", "2147483648", "clip"]),
        (np.array([[0.0, 1.0]]), "hamming", ["float64", "bool or uint8"]),
        (np.array([[0, 1], [2, 1]], np.uint8), "hamming", ["row 1, column 0", "value is 2"]),
        (np.array([[1 + 2j]]), "l2", ["complex128", "float32"]),
        (np.arange(5.0), "l2", ["shape (5,)", "2-D", "reshape"]),
        (np.zeros((0, 3)), "l2", ["no rows"]),
        (np.zeros((3, 0)), "l2", ["dim 0"]),
    ],
    ids=[
        "nan",
        "inf",
        "overflow",
        "zero-cosine",
        "float-l1",
        "negative-l1",
        "huge-l1",
        "float-bits",
        "two-bits",
        "complex",
        "1-d",
        "no-rows",
        "dim-0",
    ],
)
def test_bad_npy_names_file_row_and_remedy(
    tmp_path: Path, array: np.ndarray, metric: str, pieces: list[str]
) -> None:
    message = _npy_error(tmp_path, array, metric)
    for piece in pieces:
        assert piece in message


def test_files_that_are_not_npy_arrays_are_named(tmp_path: Path) -> None:
    text = tmp_path / "v.npy"
    text.write_text("1 2 3\n")
    with pytest.raises(InputError, match=r"v\.npy: not a readable \.npy file .* numpy\.save"):
        read_vectors(text, "l2")
    pickled = _npy(tmp_path, np.array([[{"a": 1}]], dtype=object), "objects.npy")
    with pytest.raises(InputError, match=r"objects\.npy: not a readable \.npy file"):
        read_vectors(pickled, "l2")
    with pytest.raises(InputError, match=r"missing\.npy: no such file"):
        read_vectors(tmp_path / "missing.npy", "l2")
    with pytest.raises(InputError, match=r"v\.csv: cannot read l2 vectors .* \.npy .* Parquet"):
        read_vectors(tmp_path / "v.csv", "l2")


def test_parameters_that_do_not_apply_are_refused(tmp_path: Path) -> None:
    path = _npy(tmp_path, np.ones((2, 2)))
    with pytest.raises(ParameterError, match="apply to Parquet input"):
        read_vectors(path, "l2", id_field="id")
    with pytest.raises(ParameterError, match=r"metric 'jaccard' compares sets"):
        read_vectors(path, "jaccard")
    with pytest.raises(ParameterError, match="metric must be one of"):
        read_vectors(path, "manhattan")


@pytest.mark.parametrize(
    ("columns", "kwargs", "pieces"),
    [
        (
            {"vector": [[1.0, 2.0], [1.0, 2.0, 3.0]]},
            {},
            [":2: record 2", "has 3 values, but record 1 has 2", "same length"],
        ),
        (
            {"vector": pa.array([[1.0], None, [2.0]], pa.list_(pa.float64()))},
            {},
            [":2: record 2", "null", "give every row a vector"],
        ),
        (
            {"vector": pa.array([[1.0, 2.0], [3.0, None]], pa.list_(pa.float64()))},
            {},
            [":2: record 2, coordinate 1", "null", "fill it in"],
        ),
        ({"vector": [[1.0, float("nan")]]}, {}, [":1: record 1, coordinate 1", "nan"]),
        ({"vector": [[1.0]]}, {"vector_field": "emb"}, ["no column 'emb'", "--vector-field"]),
        ({"vector": [[1.0]]}, {"id_field": "key"}, ["no column 'key'", "--id-field"]),
        (
            {"vector": [[1.0], [2.0]], "id": pa.array(["a", None])},
            {"id_field": "id"},
            [":2: the id ('id') is null", "give every item an id"],
        ),
        (
            {"vector": [[1.0], [2.0], [3.0]], "id": ["a", "b", "a"]},
            {"id_field": "id"},
            [":3: the id 'a' ('id') was given before, at record 1", "its own id"],
        ),
        (
            {"vector": [[1.0]], "id": [1.5]},
            {"id_field": "id"},
            ["holds double, expected strings or integers", "--id-field"],
        ),
        ({"vector": [1.0, 2.0]}, {}, ["is double, expected a list of numbers", "--vector-field"]),
        ({"vector": [["a"]]}, {}, ["lists of string, expected numbers"]),
        ({"vector": pa.array([], pa.list_(pa.float64()))}, {}, ["no rows"]),
        ({"vector": pa.array([[], []], pa.list_(pa.float64()))}, {}, ["dim 0"]),
    ],
    ids=[
        "ragged",
        "null-row",
        "null-value",
        "nan",
        "no-vector-column",
        "no-id-column",
        "null-id",
        "repeated-id",
        "float-id",
        "not-a-list",
        "strings",
        "no-rows",
        "dim-0",
    ],
)
def test_bad_parquet_names_file_record_and_remedy(
    tmp_path: Path, columns: dict[str, Any], kwargs: dict[str, str], pieces: list[str]
) -> None:
    path = _parquet(tmp_path, columns, "in.parquet")
    with pytest.raises(InputError) as info:
        read_vectors(path, "l2", **kwargs)
    message = str(info.value)
    assert message.startswith(str(path))
    assert "\n" not in message
    for piece in pieces:
        assert piece in message


def test_ragged_parquet_is_found_in_a_later_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors_module, "BLOCK_BYTES", 64)
    rows = [[1.0, 2.0]] * 1000 + [[1.0]]
    path = _parquet(tmp_path, {"vector": rows}, row_group_size=100)
    with pytest.raises(InputError, match=r":1001: record 1001: the vector has 1 values"):
        read_vectors(path, "cosine")


def test_parquet_of_another_kind_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match=r"x\.parquet: not a readable Parquet file"):
        read_vectors(path, "l2")
    bits = _parquet(tmp_path, {"vector": [[0.0, 1.0]]}, "bits.parquet")
    with pytest.raises(
        InputError, match=r"hamming compares bit strings .* float64; store the bits as bool"
    ):
        read_vectors(bits, "hamming")
