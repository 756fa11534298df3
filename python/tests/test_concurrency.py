"""Many clients at once, and a client that dies mid-upload."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np

import arktos as ak

N_THREADS = 8


def test_threads_with_own_connections_get_their_own_data(server) -> None:
    barrier = threading.Barrier(N_THREADS)
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            rng = np.random.default_rng(index)
            with server.connect() as conn:
                barrier.wait()
                for round_ in range(4):
                    want = rng.integers(-2**62, 2**62, 50_000 + 10_000 * index + round_)
                    a = conn.array(want)
                    assert np.array_equal(a.to_ndarray(), want)
                    a.delete()
        except BaseException as err:  # reported below, from the main thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(N_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_threads_sharing_one_connection_are_serialised(conn: ak.Connection) -> None:
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            for _ in range(5):
                want = np.full(1000 + index, index, np.int32)
                assert np.array_equal(conn.array(want).to_ndarray(), want)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import arktos as ak
    conn = ak.Connection(sys.argv[1], timeout=60)
    data = np.ones(int(sys.argv[2]), np.uint8)
    print("ready", flush=True)
    conn.array(data)
    print("done", flush=True)
""")


def test_client_killed_mid_upload_leaves_nothing(server, conn: ak.Connection) -> None:
    before = conn.mem_info()
    child = subprocess.Popen([sys.executable, "-c", CHILD, server.url, str(512 << 20)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.1)  # a 512 MiB upload takes ~1 s here
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    time.sleep(0.5)
    assert conn.mem_info() == before
    assert conn.array([1, 2]).to_ndarray().tolist() == [1, 2]
