import sys
from pathlib import Path

import pytest

# test helpers (small real models) live beside the tests
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def fixture_corpus(tmp_path_factory) -> Path:
    """The data factory's fixture corpus (a dozen utterances), built once per test session; tests only read it."""
    from sonare.data.fixture import build_fixture

    out = tmp_path_factory.mktemp("fixture-corpus")
    build_fixture(out, workers=1)
    return out
