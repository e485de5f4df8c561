"""The HTML report renders in a real browser (headless Chromium) to a non-blank page."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

CHROMIUM = next(
    (
        p
        for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))
        if p
    ),
    None,
)


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium, chromium-browser or google-chrome binary on PATH "
    "(install it, e.g. `apt-get install chromium`, to run the browser test)",
)
def test_report_renders_in_headless_chromium(
    full_audit_dir: Path, violation_html: str, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    page.write_text(violation_html, encoding="utf-8")
    shot = tmp_path / "report.png"
    assert CHROMIUM is not None
    completed = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1280,2000",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shot.is_file(), completed.stderr[-2000:]
    pixels = np.asarray(image.imread(shot), dtype=np.float64)
    assert pixels.shape[:2] == (2000, 1280)
    assert pixels.var() > 0.0
    # The verdict banner's red is on the page (not only white background).
    rgb = pixels[..., :3]
    red = (rgb[..., 0] > 0.7) & (rgb[..., 1] < 0.3) & (rgb[..., 2] < 0.3)
    assert red.sum() > 1000
    assert "VIOLATION" in violation_html
