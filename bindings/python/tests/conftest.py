import gc

import pytest

from support import open_count


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test must leave no native context behind once its objects are gone."""
    before = open_count()
    yield
    gc.collect()
    assert open_count() == before
