"""The public API: every exported name resolves, and importing the package stays light."""

from __future__ import annotations

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
