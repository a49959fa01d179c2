"""Shared fixtures: a small scenario (2 algorithms x 2 buffers x 2 replications, 3 flows of 4
exchanges; well under a second)."""

import pytest

SMALL = """name = "small"
seed = 11
replications = 2
[network]
preset = "nbiot"
buffer_bytes = [2500, 28200]
[[flows]]
count = 3
cc = ["default", "cocoa"]
exchanges = 4
"""


@pytest.fixture
def scenario(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(SMALL)
    return path
