import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402

from managers import Manager  # noqa: E402

TOKEN = "pyclient-token-0123456789abcdef"
#: the big Manager's block bound: round trips up to it, 8 x 32 MiB reads
BLOCK_MAX = 32 << 20
#: the small Manager's bounds (refusal rows): tiny DRAM, one request slot, a token
SMALL_BLOCK_MAX = 1 << 20


@pytest.fixture(scope="session")
def managers():
    """The session's two standalone Managers, started in parallel: ``big`` (no token, 32 MiB blocks, DRAM for the
    8 x 32 MiB rows) and ``small`` (a bearer token, 1 MiB blocks, 4 MiB DRAM, one request slot)."""
    from managers import work_dir
    import os
    token_file = os.path.join(work_dir(), "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    big = Manager("big", ["--block-bytes-max", "32MiB", "--dram", "768MiB"]).launch()
    small = Manager("small", ["--block-bytes-max", "1MiB", "--dram", "4MiB", "--http-token-file", token_file,
                              "--http-requests-in-flight-max", "1"]).launch()
    try:
        big.await_ready()
        small.await_ready()
        yield {"big": big, "small": small}
    finally:
        big.kill()
        small.kill()


@pytest.fixture(scope="session")
def big(managers):
    return managers["big"]


@pytest.fixture(scope="session")
def small(managers):
    return managers["small"]
