"""The install matrix's session fixtures: one wheel of the checkout, one fresh virtualenv per flavour
(``venvs.py`` says how they are built)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from venvs import FLAVOURS, Venv, build_wheel, create


@pytest.fixture(scope="session")
def gpufabric_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def venvs(gpufabric_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Venv]]:
    root = tmp_path_factory.mktemp("venvs")
    with ThreadPoolExecutor(max_workers=len(FLAVOURS)) as pool:
        futures = {
            name: pool.submit(create, name, extras, gpufabric_wheel, root)
            for name, extras in FLAVOURS.items()
        }
        built = {name: future.result() for name, future in futures.items()}
    yield built
    shutil.rmtree(root, ignore_errors=True)  # a torch venv is ~1 GB
