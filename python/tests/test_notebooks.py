"""Every notebook in notebooks/ runs cleanly, at a small size, against a real server.

The kernel gets ARKTOS_URL (the shared test server), ARKTOS_NB_SIZE (small)
and MPLBACKEND=Agg through its environment. Stored notebooks carry no outputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, SERVER_BIN

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
#: ARKTOS_NB_SIZE per notebook in the tests (each runs in well under 20 s).
SMALL = {"quickstart.ipynb": 200_000, "taxi_groupby.ipynb": 300_000,
         "transfer_benchmark.ipynb": 4 << 20}


def test_notebooks_are_there() -> None:
    assert {path.name for path in NOTEBOOKS} >= set(SMALL)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_stored_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, \
                f"{path.name}: clear outputs before committing (jupyter nbconvert --clear-output --inplace)"


@pytest.mark.timeout(90)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_notebook_runs(path: Path, server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARKTOS_URL", server.url)
    monkeypatch.setenv("ARKTOS_NB_SIZE", str(SMALL.get(path.name, 100_000)))
    monkeypatch.setenv("ARKTOS_SERVER_BIN", str(SERVER_BIN))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("ARKTOS_PROGRESS", "0")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=60, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError with the failing cell and traceback
    errors = [out for cell in nb.cells for out in cell.get("outputs", [])
              if out.get("output_type") == "error"]
    assert not errors
