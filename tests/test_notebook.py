"""examples/quickstart.ipynb runs as written, in a Jupyter kernel (nbclient), and
shows what it says: the verdict banner and figures of one audit, a table of three
epsilons whose overclaiming generator is a VIOLATION, and the trade-off plot."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"


@pytest.mark.slow
def test_quickstart_notebook_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """About 30 s on 2 CPU cores (a kernel, three audits of 30 rounds per world)."""
    # The kernel imports this repository's dpaudit, whatever is installed.
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), path) if p))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    banner, table = html[0], html[1]
    assert "verdict" in banner and banner.count("<svg") >= 2
    assert table.count("<tr") == 4  # the header and three audits
    assert "VIOLATION" in table and "CONSISTENT" in table
    assert any("image/svg+xml" in o.get("data", {}) for o in outputs)
    assert (tmp_path / "quickstart" / "overclaim.html").is_file()
