"""A/B of float functions through two server builds (10^7 float64, --workers 1,
7 trials, numpy single-threaded beside each): p50/p90 ms. Usage:
.venv/bin/python bench/ops/transcendental_ab.py (old build at /tmp/srv-old)."""
import subprocess, time, sys, numpy as np, arktos as ak, os
def run(binary, port):
    srv = subprocess.Popen([binary, "--addr", f"tcp://127.0.0.1:{port}", "--workers", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.7)
    c = ak.Connection(f"tcp://127.0.0.1:{port}")
    rng = np.random.default_rng(1)
    xs = rng.uniform(0, 5, 10**7); ys = rng.uniform(0, 3, 10**7)
    x, y = c.array(xs), c.array(ys)
    out = {}
    for name, f, g in [("exp", lambda: ak.exp(x), lambda: np.exp(xs)), ("sinh", lambda: ak.sinh(x), lambda: np.sinh(xs)),
                       ("x**y", lambda: x ** y, lambda: xs ** ys), ("x**3.0", lambda: x ** 3.0, lambda: xs ** 3.0),
                       ("logaddexp", lambda: np.logaddexp(x, y), lambda: np.logaddexp(xs, ys)), ("log", lambda: ak.log(x), lambda: np.log(xs))]:
        ts, tn = [], []
        for r in range(7):
            t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
            t = time.perf_counter(); g(); tn.append(time.perf_counter() - t)
        out[name] = (np.percentile(ts, 50), np.percentile(ts, 90), np.percentile(tn, 50))
    c.close(); srv.terminate(); srv.wait()
    return out
print("load", os.getloadavg())
for label, b, p in [("old", "/tmp/srv-old", 5735), ("new", "/work/main/bin/arktos-server", 5736), ("old", "/tmp/srv-old", 5735), ("new", "/work/main/bin/arktos-server", 5736)]:
    o = run(b, p)
    print(label, "  ".join(f"{k} {v[0]*1e3:.0f}/{v[1]*1e3:.0f} (np {v[2]*1e3:.0f})" for k, v in o.items()), flush=True)
print("load", os.getloadavg())
