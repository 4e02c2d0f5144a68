"""The public API: every exported name resolves, and importing the package stays light."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys

import pytest

import neardup


def test_every_public_name_resolves_from_its_home() -> None:
    names = set(neardup.__all__) - {"__version__"}
    assert names == set(neardup._MODULE_OF)
    for name in names:
        assert getattr(neardup, name) is not None
    assert set(dir(neardup)) == set(neardup.__all__)


@pytest.mark.subprocess
def test_importing_the_package_and_the_cli_loads_neither_numba_nor_pyarrow() -> None:
    code = (
        "import sys, neardup, neardup.cli.main\n"
        "print(sorted(m for m in ('numba', 'pyarrow', 'numpy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = neardup.no_such_thing  # type: ignore[attr-defined]


def test_dedup_of_texts_takes_the_algorithm_only_and_records_no_file_settings() -> None:
    """``neardup.dedup(texts)`` reads no file and writes none: no reading or writing setting
    is among its parameters or its config's, and its summary records none."""
    assert list(inspect.signature(neardup.dedup).parameters) == [
        "texts",
        "ids",
        "config",
        "fields",
        "encoder",
    ]
    algorithm = {f.name for f in dataclasses.fields(neardup.DedupConfig)}
    files = {
        f.name for spec in (neardup.ReadSpec, neardup.OutputSpec) for f in dataclasses.fields(spec)
    }
    assert len(files) == 10
    assert not algorithm & files
    params = neardup.dedup(["one two three four five six"]).summary.to_dict()["params"]
    assert not {"read", "output"} & set(params)
    assert set(params) <= algorithm
