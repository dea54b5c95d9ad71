"""A real headless browser for the report tests: Chromium from the Debian packages
(``.ci/browser-up.sh`` installs ``chromium`` and ``chromium-driver``) driven by Selenium (the
``test`` extra). A test that needs it skips, saying so, only where no Chromium is installed.

* :func:`headless_chromium` — a started browser (``--headless=new``, console log collected);
* :func:`open_page` — load a local file and wait for it to finish loading;
* :func:`severe_console` — the console messages at level SEVERE (errors) since the last call;
* :func:`broken_images` — the ``<img>`` elements of the page that did not load (naturalWidth 0);
* :func:`check_snakemake_report` — every result of ``snakemake --report``'s page: its caption
  shown, an image shown in the content pane, a table's download and its caption's table.
"""

from __future__ import annotations

import base64
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
DRIVER = ("chromedriver",)


def _which(names: tuple[str, ...]) -> str | None:
    return next((p for p in map(shutil.which, names) if p), None)


@contextmanager
def headless_chromium(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A headless Chromium under Selenium; skips the test when no Chromium is installed."""
    binary, driver_path = _which(CHROMIUM), _which(DRIVER)
    if binary is None or driver_path is None:
        pytest.skip(
            "no Chromium installed (needs chromium and chromedriver on PATH: "
            "`.ci/browser-up.sh`, i.e. apt-get install chromium chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in (
        "--headless=new",
        "--no-sandbox",  # root in CI containers
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-extensions",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver: Any, path: Path, timeout: float = 30) -> None:
    """Load the local file ``path`` and wait for the document (and its images) to load."""
    driver.get(Path(path).resolve().as_uri())
    _wait(driver, "return document.readyState === 'complete'", timeout, f"{path} to load")


def _wait(driver: Any, script: str, timeout: float, what: str, *args: Any) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script, *args)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def severe_console(driver: Any) -> list[str]:
    """The browser console's messages at level SEVERE (JavaScript errors, failed loads)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def broken_images(driver: Any) -> list[str]:
    """The images of the page that did not load: ``alt`` (or the start of ``src``) of each
    ``<img>`` that is not complete or has naturalWidth 0."""
    return driver.execute_script(
        "return [...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
        ".map(i => i.alt || i.src.slice(0, 60))"
    )


def _words(text: str, n: int) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", text).split()[:n])


def check_snakemake_report(driver: Any, page: Path, files: Path) -> dict[str, dict]:
    """Open ``snakemake --report``'s page and go through every result of its embedded data as
    a reader does: its entry in the side panel must show the caption (the first words of the
    caption's text), an image must be shown in the content pane by the eye button and load, a
    table's button must download the file (``files``: the run folder, to compare bytes) and a
    table its caption includes must show. No console errors. Returns the results."""
    open_page(driver, page)
    _wait(driver, "return typeof app !== 'undefined' && typeof results !== 'undefined'", 30, "app")
    results: dict[str, dict] = driver.execute_script("return results")
    assert results, f"{page}: no results"
    for path, result in results.items():
        assert result.get("caption", "").strip(), f"{path}: no caption"
        driver.execute_script("app.showResultInfo(arguments[0])", path)
        want = _words(result["caption"], 8)
        shown = _wait(
            driver,
            "const t = [...document.querySelectorAll('.prose')].map(e => e.innerText).join(' ');"
            "return t.split(/\\s+/).join(' ').includes(arguments[0]) ? t : null",
            10,
            f"the caption of {path} in the side panel",
            want,
        )
        assert shown, path
        button = driver.execute_script(
            "return [...document.querySelectorAll('a')].find(a => a.querySelector('svg') &&"
            " a.closest('li') && a.closest('li').innerText.includes(arguments[0]))",
            result["labels"] and list(result["labels"].values())[-1] or path,
        )
        assert button is not None, f"{path}: no view button beside it"
        if result["mime_type"].startswith("image/"):
            button.click()
            ok = _wait(
                driver,
                "const i = [...document.images].find(i => i.src === arguments[0]);"
                "return i && i.complete && i.naturalWidth > 0 ? i.naturalWidth : null",
                15,
                f"{path} in the content pane",
                result["data_uri"],
            )
            assert ok > 0, path
        else:  # a table: the button downloads the embedded file
            href = button.get_attribute("href")
            assert href.startswith("data:") and ";base64," in href, (path, href[:80])
            data = base64.b64decode(href.split(";base64,", 1)[1])
            assert data == (files / path).read_bytes(), path
            tables = driver.execute_script(
                "return [...document.querySelectorAll('.prose pre, .prose table')]"
                ".filter(e => e.offsetHeight > 0).map(e => e.innerText)"
            )
            if "<pre" in result["caption"] or "<table" in result["caption"]:
                assert tables and all(t.strip() for t in tables), f"{path}: its table is empty"
    assert severe_console(driver) == []
    return results
