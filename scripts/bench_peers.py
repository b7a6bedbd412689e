"""Driver of scripts/bench-peers.sh: two nginx upload sinks, then ingestbench and peers at the
same concurrency and count, measured with GNU time (CPU seconds, peak RSS). Results:
results/peers.json and results/peers.md (docs/performance.md shows the latter).

Sinks: `direct` is the simplest possible one (one nginx worker answering 201 itself after
reading the body; no proxy tier), where the client's own cost shows most; `proxied` reads
every body in full and passes it to a second server, as a load balancer does, which slows the
sink and hides part of the client's cost. The targets are judged on the direct sink."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / ".bench"
TOOLS = Path(os.environ.get("TOOLS_DIR", Path.home() / ".cache/ingestbench/tools")) / "bin"
QUICK = os.environ.get("QUICK") == "1"
# Each comparison is repeated, tools interleaved, and the median taken: this kind of machine
# is noisy from one run to the next.
REPEAT = int(os.environ.get("REPEAT", "1" if QUICK else "5"))
# INGESTBENCH_WORKER_RUNTIMES=0 (workers on the main tokio runtime, the model before one
# runtime per core) is passed through, to measure one model against the other.
HTTP, HTTPS, UP = 19080, 19443, 19081
DHTTP, DHTTPS = 19090, 19453
SAME_BYTES = 11180
BIN = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "peak/ingestbench"
# BASELINE=path/to/an/older/ingestbench: that build runs beside this one in the same interleaved
# rounds ("ingestbench, baseline"), and the checks add this build's rate and CPU against it.
BASELINE = os.environ.get("BASELINE")
SIZES = {"small": 10 * 1024, "large": 3 * 1024 * 1024}


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), check=True, text=True, capture_output=True, **kw)


def have(tool):
    return shutil.which(tool) or (TOOLS / tool).exists()


def tool(name):
    return str(TOOLS / name) if (TOOLS / name).exists() else shutil.which(name)


def install(name):
    """Installs a missing peer; returns a reason when it cannot."""
    if have(name):
        return None
    TOOLS.mkdir(parents=True, exist_ok=True)
    try:
        if name == "wrk":
            if os.geteuid() != 0:
                return "not installed (apt-get install wrk)"
            sh("DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk")
        elif name == "oha":
            print("installing oha (cargo install oha --locked, several minutes)", file=sys.stderr)
            sh(["cargo", "install", "oha", "--locked", "--root", str(TOOLS.parent)], timeout=1800)
        elif name == "hey":
            sh(["go", "install", "github.com/rakyll/hey@latest"], env={**os.environ, "GOBIN": str(TOOLS)}, timeout=600)
        elif name == "k6":
            print("installing k6 (go install go.k6.io/k6@latest, about 2 minutes)", file=sys.stderr)
            sh(["go", "install", "go.k6.io/k6@latest"], env={**os.environ, "GOBIN": str(TOOLS)}, timeout=1200)
        elif name == "locust":
            venv = TOOLS.parent / "locust-venv"
            sh([sys.executable, "-m", "venv", str(venv)])
            sh([str(venv / "bin/pip"), "install", "-q", "locust"], timeout=600)
            (TOOLS / "locust").symlink_to(venv / "bin/locust")
        else:
            return "unknown"
    except Exception as e:  # a peer we cannot get is skipped, not fatal
        return f"install failed: {e}"
    return None if have(name) else "install failed"


def nginx_up():
    (LAB / "tmp").mkdir(parents=True, exist_ok=True)
    tls = LAB / "tls"
    tls.mkdir(exist_ok=True)
    if not (tls / "cert.pem").exists():
        # A CA and a server certificate signed by it (rustls refuses a CA as the end entity).
        sh(f"cd {tls} && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30 -subj '/CN=bench CA' "
           f"-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null && "
           f"openssl req -newkey rsa:2048 -nodes -keyout key.pem -out server.csr -subj /CN=localhost 2>/dev/null && "
           f"printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > ext.cnf && "
           f"openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cert.pem -days 30 -extfile ext.cnf 2>/dev/null")
    folder = '{"entry":{"id":"p","name":"home","nodeType":"cm:folder","isFolder":true,"isFile":false}}'
    sink = '{"entry":{"id":"sink"}}'
    locs = f"""
    location ~ /nodes/[^/]+$ {{ default_type application/json; return 200 '{folder}'; }}
    location / {{ proxy_pass http://sink; }}"""
    conf = f"""user root;
worker_processes 2;
pid {LAB}/nginx.pid;
error_log {LAB}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {LAB}/tmp/body; proxy_temp_path {LAB}/tmp/proxy; fastcgi_temp_path {LAB}/tmp/f;
  uwsgi_temp_path {LAB}/tmp/u; scgi_temp_path {LAB}/tmp/s;
  client_max_body_size 0; client_body_buffer_size 4m; keepalive_requests 10000000;
  proxy_http_version 1.1; proxy_set_header Connection "";
  # The front server reads every request body in full (proxy_request_buffering on) before it
  # passes the request on; the back server answers 201 with a tiny Alfresco-shaped entry.
  upstream sink {{ zone sink 64k; server 127.0.0.1:{UP}; keepalive 512; }}
  server {{ listen 127.0.0.1:{UP}; keepalive_requests 10000000; location / {{ default_type application/json; return 201 '{sink}'; }} }}
  server {{ listen 127.0.0.1:{HTTP}; {locs} }}
  server {{ listen 127.0.0.1:{HTTPS} ssl; ssl_certificate {tls}/cert.pem; ssl_certificate_key {tls}/key.pem; {locs} }}
}}
"""
    direct_locs = f"""
    location ~ /nodes/[^/]+$ {{ default_type application/json; return 200 '{folder}'; }}
    location / {{ default_type application/json; return 201 '{sink}'; }}"""
    direct = f"""user root;
worker_processes 1;
pid {LAB}/nginx-direct.pid;
error_log {LAB}/nginx-direct-error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {LAB}/tmp/dbody; proxy_temp_path {LAB}/tmp/dproxy; fastcgi_temp_path {LAB}/tmp/df;
  uwsgi_temp_path {LAB}/tmp/du; scgi_temp_path {LAB}/tmp/ds;
  client_max_body_size 0; keepalive_requests 10000000;
  server {{ listen 127.0.0.1:{DHTTP}; {direct_locs} }}
  server {{ listen 127.0.0.1:{DHTTPS} ssl; ssl_certificate {tls}/cert.pem; ssl_certificate_key {tls}/key.pem; {direct_locs} }}
}}
"""
    (LAB / "nginx.conf").write_text(conf)
    (LAB / "nginx-direct.conf").write_text(direct)
    nginx_down()
    for c in ("nginx.conf", "nginx-direct.conf"):
        sh(["nginx", "-p", str(LAB), "-c", str(LAB / c)])
    time.sleep(0.3)


def nginx_down():
    for c, pid in (("nginx.conf", "nginx.pid"), ("nginx-direct.conf", "nginx-direct.pid")):
        if (LAB / pid).exists():
            subprocess.run(["nginx", "-p", str(LAB), "-c", str(LAB / c), "-s", "stop"], capture_output=True)
            time.sleep(0.3)


def url(https, sink):
    if https:
        return f"https://localhost:{DHTTPS if sink == 'direct' else HTTPS}"
    return f"http://127.0.0.1:{DHTTP if sink == 'direct' else HTTP}"


LAST = {}


def timed(cmd, env=None):
    """Runs cmd under GNU time: (stdout, wall s, cpu s, peak RSS KiB); the user/system split
    of the last command is kept in LAST."""
    tf = LAB / "time.txt"
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", str(tf)] + cmd, text=True, capture_output=True, env={**os.environ, **(env or {})})
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[0]} failed: {p.stderr[-500:]}")
    u, s, m = tf.read_text().split()[-3:]
    LAST.update(user_s=float(u), sys_s=float(s))
    return p.stdout, wall, float(u) + float(s), int(m)


def host_speed():
    """A fixed CPU workload and a fixed memory copy, timed at the start of every round: this
    kind of machine runs everything slower at some hours (the same binaries 30-40 % apart),
    so a result says how fast the host was while it was taken. (SHA-256 MB/s, copy GB/s)"""
    data = bytes(32 << 20)
    t = time.perf_counter()
    hashlib.sha256(data).digest()
    sha = len(data) / 1e6 / (time.perf_counter() - t)
    a = bytearray(b"\x01") * (128 << 20)
    c = bytearray(len(a))
    c[:] = a  # touch the pages first
    t = time.perf_counter()
    c[:] = a
    c[:] = a
    copy = 2 * len(a) / 1e9 / (time.perf_counter() - t)
    return {"sha256_mb_s": round(sha), "copy_gb_s": round(copy, 2)}


def multipart(size):
    """The exact request ingestbench sends for one document of `size` (basic profile): its
    multipart body and Content-Type, caught by a one-shot server that answers as the sink
    does. oha and wrk then post these bytes with this header ("same multipart"), so a row
    differs from ingestbench's only in the client. Returns (body file, content type)."""
    import http.server
    import threading
    got = {}
    folder = b'{"entry":{"id":"p","name":"home","nodeType":"cm:folder","isFolder":true,"isFile":false}}'

    class Catch(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self, code, data):
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.answer(200, folder)

        def do_POST(self):
            data = self.rfile.read(int(self.headers["Content-Length"]))
            ctype = self.headers.get("Content-Type", "")
            if ctype.startswith("multipart/") and len(data) > size:
                got["body"], got["ctype"] = data, ctype
            self.answer(201, b'{"entry":{"id":"sink"}}')

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Catch)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        subprocess.run([str(BIN), "run", "--url", f"http://127.0.0.1:{srv.server_address[1]}", "--auth", "basic", "--warmup", "0", "--docs", "1",
                        "--threads", "1", "--runs", "1", "--quiet", "--profile", "basic", "--small-size", str(size), "--size", "small",
                        "--results-dir", str(LAB / "results"), "--password-file", str(LAB / "pw")], check=True, capture_output=True)
    finally:
        srv.shutdown()
    f = LAB / f"multipart-{size}.bin"
    f.write_bytes(got["body"])
    return f, got["ctype"]


def body(size):
    f = LAB / f"body-{size}.bin"
    if not f.exists():
        f.write_bytes(os.urandom(size))
    return f


def ingestbench(n, c, size, https=False, sink="proxied", env=None, binary=None):
    # No warm-up: the peers have none, and its uploads would count in the CPU but not the rate.
    cmd = [str(binary or BIN), "run", "--url", url(https, sink), "--auth", "basic", "--warmup", "0", "--docs", str(n), "--threads", str(c), "--runs", "1",
           "--quiet", "--json", "--profile", "basic", "--small-size", str(size), "--large-size", str(size), "--size", "small",
           "--results-dir", str(LAB / "results"), "--password-file", str(LAB / "pw")]
    if https:
        cmd += ["--ca-cert", str(LAB / "tls/ca.pem")]
    out, wall, cpu, rss = timed(cmd, env)
    r = json.loads(out)
    return {"rate": r["docs_per_sec"], "mb_s": r["mb_per_sec"], "n": r["docs_ok"], "failed": r["docs_failed"], "cpu_s": cpu, "rss_kib": rss, "wall_s": wall}


def ingestbench_baseline(n, c, size, https=False, sink="proxied"):
    """The build named by BASELINE, with the same arguments."""
    return ingestbench(n, c, size, https, sink, binary=BASELINE)


def ingestbench_shared_runtime(n, c, size, https=False, sink="proxied"):
    """The model before one runtime per core: every worker on the main (work-stealing) runtime."""
    return ingestbench(n, c, size, https, sink, {"INGESTBENCH_WORKER_RUNTIMES": "0"})


def ingestbench_per_cpu_runtimes(n, c, size, https=False, sink="proxied"):
    """Every small upload's worker dealt over one runtime per CPU, as for a remote target (a
    sink on this host gets half of them by default)."""
    return ingestbench(n, c, size, https, sink, {"INGESTBENCH_WORKER_RUNTIMES": str(len(os.sched_getaffinity(0)))})


def oha(n, c, size, https=False, sink="proxied", same=None):
    # The body is random bytes of `size` (the MB/s is of those bytes), or with `same` (a
    # multipart() pair) ingestbench's own request body and Content-Type.
    data, ctype = same or (body(size), None)
    cmd = [tool("oha"), "-n", str(n), "-c", str(c), "-m", "POST", "-D", str(data), "--no-tui", "--output-format", "json", url(https, sink) + "/upload"]
    if ctype:
        cmd[1:1] = ["-T", ctype]
    if https:
        cmd[1:1] = ["--cacert", str(LAB / "tls/ca.pem")]
    out, wall, cpu, rss = timed(cmd)
    r = json.loads(out)
    rate = r["summary"]["requestsPerSec"]
    return {"rate": rate, "mb_s": rate * size / 1e6, "n": n, "failed": 0, "cpu_s": cpu, "rss_kib": rss, "wall_s": wall}


def wrk(seconds, c, size, sink="proxied", same=None):
    data, ctype = same or (body(size), "application/octet-stream")
    lua = LAB / f"post-{Path(data).stem}.lua"
    lua.write_text(f'wrk.method="POST"; wrk.body=io.open("{data}","rb"):read("*a"); wrk.headers["Content-Type"]="{ctype}"\n')
    out, wall, cpu, rss = timed([tool("wrk"), "-t2", f"-c{c}", f"-d{seconds}s", "-s", str(lua), url(False, sink) + "/upload"])
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    n = int(re.search(r"(\d+) requests in", out).group(1))
    return {"rate": rate, "mb_s": rate * size / 1e6, "n": n, "failed": 0, "cpu_s": cpu, "rss_kib": rss, "wall_s": wall}


def hey(n, c, size):
    out, wall, cpu, rss = timed([tool("hey"), "-n", str(n), "-c", str(c), "-m", "POST", "-D", str(body(size)), f"http://127.0.0.1:{HTTP}/upload"])
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return {"rate": rate, "mb_s": rate * size / 1e6, "n": n, "failed": 0, "cpu_s": cpu, "rss_kib": rss, "wall_s": wall}


def k6(n, c, size):
    js = LAB / f"k6-{size}.js"
    js.write_text(f"""import http from 'k6/http';
const body = open('{body(size)}', 'b');
export const options = {{ scenarios: {{ s: {{ executor: 'shared-iterations', vus: {c}, iterations: {n}, maxDuration: '10m' }} }} }};
export default function () {{ http.post('http://127.0.0.1:{HTTP}/upload', body, {{ headers: {{ 'Content-Type': 'application/octet-stream' }} }}); }}
""")
    out_json = LAB / "k6-summary.json"
    _, wall, cpu, rss = timed([tool("k6"), "run", "--no-usage-report", "--quiet", "--summary-export", str(out_json), str(js)])
    m = json.loads(out_json.read_text())["metrics"]
    rate = m["http_reqs"]["rate"]
    return {"rate": rate, "mb_s": rate * size / 1e6, "n": int(m["http_reqs"]["count"]), "failed": 0, "cpu_s": cpu, "rss_kib": rss, "wall_s": wall}


def locust(seconds, c, size):
    lf = LAB / "locustfile.py"
    lf.write_text(f"""from locust import FastHttpUser, constant, task
BODY = open('{body(size)}', 'rb').read()
class Upload(FastHttpUser):
    wait_time = constant(0)
    @task
    def upload(self):
        self.client.post('/upload', data=BODY, headers={{'Content-Type': 'application/octet-stream'}})
""")
    prefix = LAB / "locust"
    _, wall, cpu, rss = timed([tool("locust"), "-f", str(lf), "--headless", "-u", str(c), "-r", str(c), "-t", f"{seconds}s", "--host",
                              f"http://127.0.0.1:{HTTP}", "--csv", str(prefix), "--only-summary", "--loglevel", "ERROR"])
    import csv
    if not Path(f"{prefix}_stats.csv").exists():
        raise RuntimeError("locust wrote no statistics")
    with open(f"{prefix}_stats.csv") as f:
        agg = next(r for r in csv.DictReader(f) if r["Name"] == "Aggregated")
    n = int(agg["Request Count"])
    rate = float(agg["Requests/s"])
    return {"rate": rate, "mb_s": rate * size / 1e6, "n": n, "failed": int(agg["Failure Count"]), "cpu_s": cpu, "rss_kib": rss, "wall_s": wall}


def curl_loop(n, size):
    script = f'for i in $(seq {n}); do curl -s -o /dev/null -X POST --data-binary @{body(size)} http://127.0.0.1:{HTTP}/upload; done'
    out, wall, cpu, rss = timed(["bash", "-c", script])
    return {"rate": n / wall, "mb_s": n * size / wall / 1e6, "n": n, "failed": 0, "cpu_s": cpu, "rss_kib": rss, "wall_s": wall}


def speed_line(speeds):
    """The host's speed over the rounds, for comparing one result file with another."""
    if not speeds:
        return "Host speed: not measured (no comparison ran)."
    sha = [x["sha256_mb_s"] for x in speeds]
    cp = [x["copy_gb_s"] for x in speeds]
    return (f"Host speed at the start of each of {len(speeds)} rounds: SHA-256 {min(sha)}-{max(sha)} MB/s, "
            f"memory copy {min(cp)}-{max(cp)} GB/s (compare results taken at similar speeds).")


def main():
    LAB.mkdir(exist_ok=True)
    (LAB / "pw").write_text("sink\n")
    if not shutil.which("nginx"):
        sys.exit("bench-peers: nginx is missing (apt-get install nginx)")
    if not Path("/usr/bin/time").exists():
        sys.exit("bench-peers: GNU time is missing (apt-get install time)")
    subprocess.run(["cargo", "build", "--profile", "peak", "--features", "jemalloc,aws-lc", "--locked", "-q"], cwd=ROOT, check=True)
    os.environ["PATH"] = f"{TOOLS}:{os.environ['PATH']}"
    # PEERS=oha,wrk limits the peers (the rest are named as not selected).
    chosen = os.environ.get("PEERS", "oha,wrk,hey,k6,locust").split(",")
    skipped = {p: "not selected (PEERS)" for p in ("oha", "wrk", "hey", "k6", "locust") if p not in chosen}
    skipped.update({p: why for p in chosen if p not in skipped and (why := install(p))})
    nginx_up()
    small, large = SIZES["small"], SIZES["large"]
    n32 = 20000 if QUICK else 50000
    # The direct sink's comparison takes more uploads so that fixed start-up costs (ingestbench
    # reads the sink's process tree for its server CPU, ~14 ms more than oha's start) stay
    # under 1 % of the CPU per upload it reports: at this machine's fast hours (110,000
    # uploads/s) 150,000 uploads took 1.3 s and 35 ms of fixed CPU was 2.7 % of it.
    n_direct = 20000 if QUICK else 400000
    rows = []
    speeds = []

    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2]

    # ONLY=direct,large runs just the scenarios whose names contain one of these words.
    only = [w for w in os.environ.get("ONLY", "").split(",") if w]

    def compare(scenario, entries, repeat=REPEAT):
        """entries: (tool name, function, args); run `repeat` rounds, tools interleaved."""
        if only and not any(w in scenario for w in only):
            return
        got = {name: [] for name, _, _ in entries}
        for _ in range(repeat):
            speeds.append(host_speed())
            for name, f, args in entries:
                if name.split(",")[0] not in skipped:
                    r = f(*args)
                    r["cpu_s_per_1000"] = 1000 * r["cpu_s"] / max(r["n"], 1)
                    r["user_us"] = 1e6 * LAST["user_s"] / max(r["n"], 1)
                    r["sys_us"] = 1e6 * LAST["sys_s"] / max(r["n"], 1)
                    got[name].append(r)
        for name, _, _ in entries:
            if name.split(",")[0] in skipped:
                rows.append({"scenario": scenario, "tool": name, "skipped": skipped[name.split(",")[0]]})
                continue
            rs = got[name]
            r = dict(rs[0])
            for k in ("rate", "mb_s", "cpu_s_per_1000", "user_us", "sys_us", "cpu_s", "wall_s"):
                r[k] = median([x[k] for x in rs])
            r["rss_kib"] = max(x["rss_kib"] for x in rs)
            # Per round, for ratios taken round by round (the machine drifts between rounds).
            r["rounds"] = [{k: x[k] for k in ("rate", "mb_s", "cpu_s_per_1000")} for x in rs]
            r.update(scenario=scenario, tool=name, runs=len(rs))
            rows.append(r)
            print(f"{scenario:<28} {name:<12} {r['rate']:>10.1f}/s {r['mb_s']:>8.1f} MB/s  cpu/1000 {r['cpu_s_per_1000']:.3f} s  rss {r['rss_kib'] / 1024:.1f} MiB", file=sys.stderr)

    def with_baseline(entries):
        """Puts the BASELINE build right after this one, same arguments."""
        if not BASELINE:
            return entries
        i = next(i for i, e in enumerate(entries) if e[0] == "ingestbench")
        return entries[: i + 1] + [("ingestbench, baseline", ingestbench_baseline, entries[i][2])] + entries[i + 1 :]

    def add(scenario, tool_name, f, *args):
        compare(scenario, [(tool_name, f, args)], repeat=1)

    try:
        d = "direct"
        # ingestbench's request for a 10 KiB document (basic profile) is 11,345 bytes: the
        # multipart fields and metadata add ~1.1 KiB. "oha, same bytes" posts a body that makes
        # its request as long (oha's own headers are ~165 bytes), so what differs is the client.
        nd = n_direct
        same = multipart(small)
        compare("small, 32 conns, direct sink", with_baseline([("ingestbench", ingestbench, (nd, 32, small, False, d)),
                                                 ("ingestbench, shared runtime", ingestbench_shared_runtime, (nd, 32, small, False, d)),
                                                 ("ingestbench, runtime per CPU", ingestbench_per_cpu_runtimes, (nd, 32, small, False, d)), ("oha", oha, (nd, 32, small, False, d)),
                                                 ("oha, same bytes", oha, (nd, 32, SAME_BYTES, False, d)),
                                                 ("oha, same multipart", oha, (nd, 32, small, False, d, same)), ("wrk", wrk, (5, 32, small, d)),
                                                 ("wrk, same multipart", wrk, (5, 32, small, d, same))]))
        # Large bodies go to the proxied sink, which reads every body before it answers: nginx's
        # `return` answers before the body has arrived, and oha then reconnects per upload.
        compare("large 3 MiB, HTTPS, 8 conns", with_baseline([("ingestbench", ingestbench, (300 if QUICK else 1000, 8, large, True)),
                                                              ("oha", oha, (300 if QUICK else 1000, 8, large, True))]))
        compare("small, 32 connections", [("ingestbench", ingestbench, (n32, 32, small)), ("oha", oha, (n32, 32, small)), ("wrk", wrk, (5, 32, small)), ("hey", hey, (n32, 32, small)),
                                           ("k6", k6, (n32 // 5, 32, small)), ("locust", locust, (8, 32, small))], repeat=min(REPEAT, 3))
        compare("small, 1 connection", with_baseline([("ingestbench", ingestbench, (5000, 1, small)), ("oha", oha, (5000, 1, small))]), repeat=min(REPEAT, 3))
        add("small, 1 connection", "bash+curl", curl_loop, 200, small)
        s = "large, 100 threads (RSS)"
        add(s, "ingestbench", ingestbench, 1000, 100, large)
        s = "small, 100 threads, 1,000 docs"
        add(s, "ingestbench", ingestbench, 1000, 100, small)
        s = "small, 100 threads, 100,000 docs"
        add(s, "ingestbench", ingestbench, 100000, 100, small)
    finally:
        nginx_down()

    def get(scn, t):
        return next((r for r in rows if r["scenario"] == scn and r["tool"] == t and "skipped" not in r), None)

    checks = []

    def ratio(label, a, b, key, want, op):
        """a's over b's: the median of the per-round ratios when both ran in the same
        interleaved rounds (drift between rounds cancels), else the ratio of the medians."""
        if a and b:
            ra, rb = a.get("rounds", []), b.get("rounds", [])
            if len(ra) > 1 and len(ra) == len(rb):
                v = median([x[key] / y[key] for x, y in zip(ra, rb)])
            else:
                v = a[key] / b[key]
            checks.append({"target": label, "ratio": round(v, 3), "want": want, "met": op(v)})

    scn = "small, 32 conns, direct sink"
    ib32, oha32, wrk32 = get(scn, "ingestbench"), get(scn, "oha"), get(scn, "wrk")
    ratio("small @32: docs/s vs wrk req/s", ib32, wrk32, "rate", ">= 0.9", lambda v: v >= 0.9)
    ratio("small @32: docs/s vs oha req/s", ib32, oha32, "rate", ">= 1.0", lambda v: v >= 1.0)
    ratio("small @32: CPU per upload vs oha", ib32, oha32, "cpu_s_per_1000", "<= 1.0", lambda v: v <= 1.0)
    ratio("small @32: docs/s vs wrk posting the same multipart", ib32, get(scn, "wrk, same multipart"), "rate", ">= 0.9", lambda v: v >= 0.9)
    ratio("small @32: docs/s vs oha posting the same multipart", ib32, get(scn, "oha, same multipart"), "rate", ">= 1.0", lambda v: v >= 1.0)
    ratio("small @32: CPU per upload vs oha posting the same multipart", ib32, get(scn, "oha, same multipart"), "cpu_s_per_1000", "<= 1.0", lambda v: v <= 1.0)
    same = get(scn, "oha, same bytes")
    ratio("small @32: docs/s vs oha sending as many bytes", ib32, same, "rate", ">= 1.0", lambda v: v >= 1.0)
    ratio("small @32: CPU per upload vs oha sending as many bytes", ib32, same, "cpu_s_per_1000", "<= 1.0", lambda v: v <= 1.0)
    ratio("1 connection: docs/s vs bash+curl", get("small, 1 connection", "ingestbench"), get("small, 1 connection", "bash+curl"), "rate", ">= 50", lambda v: v >= 50)
    scn = "large 3 MiB, HTTPS, 8 conns"
    ratio("large HTTPS @8: MB/s vs oha", get(scn, "ingestbench"), get(scn, "oha"), "mb_s", ">= 1.0", lambda v: v >= 1.0)
    if BASELINE:
        for scn in ("small, 32 conns, direct sink", "large 3 MiB, HTTPS, 8 conns", "small, 1 connection"):
            new, old = get(scn, "ingestbench"), get(scn, "ingestbench, baseline")
            ratio(f"{scn}: docs/s vs the baseline build", new, old, "rate", "0.95 - 1.05 (noise)", lambda v: v >= 0.95)
            ratio(f"{scn}: CPU per upload vs the baseline build", new, old, "cpu_s_per_1000", "<= 1.05", lambda v: v <= 1.05)
    big = get("large, 100 threads (RSS)", "ingestbench")
    if big:
        checks.append({"target": "peak RSS, 100 threads, large (MiB)", "ratio": round(big["rss_kib"] / 1024, 1), "want": "<= 64", "met": big["rss_kib"] / 1024 <= 64})
    a, b = get("small, 100 threads, 1,000 docs", "ingestbench"), get("small, 100 threads, 100,000 docs", "ingestbench")
    ratio("RSS 100k docs vs 1k docs", b, a, "rss_kib", "0.9 - 1.1", lambda v: 0.9 <= v <= 1.1)

    out = {"host": os.uname().nodename, "cpus": os.cpu_count(), "quick": QUICK, "host_speed_rounds": speeds, "rows": rows, "checks": checks, "skipped": skipped}
    (ROOT / "results").mkdir(exist_ok=True)
    (ROOT / "results/peers.json").write_text(json.dumps(out, indent=2))
    md = [f"Medians of {REPEAT} interleaved rounds on the direct sink and for large HTTPS (at most 3 for the other comparisons) where several tools are compared "
          "(ratios between two tools: the median of their per-round ratios); "
          "direct sink: one nginx worker answering 201 itself; proxied: nginx reading each body and passing it on.", "",
          speed_line(speeds), "",
          "| scenario | tool | uploads/s | MB/s | CPU s / 1000 uploads | user µs / upload | system µs / upload | peak RSS MiB |",
          "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "skipped" in r:
            md.append(f"| {r['scenario']} | {r['tool']} | skipped: {r['skipped']} | | | | | |")
        else:
            md.append(f"| {r['scenario']} | {r['tool']} | {r['rate']:.0f} | {r['mb_s']:.1f} | {r['cpu_s_per_1000']:.3f} | {r['user_us']:.1f} | {r['sys_us']:.1f} | {r['rss_kib'] / 1024:.1f} |")
    md += ["", "| target | measured | wanted | met |", "|---|---:|---|---|"]
    md += [f"| {c['target']} | {c['ratio']} | {c['want']} | {'yes' if c['met'] else '**no**'} |" for c in checks]
    (ROOT / "results/peers.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
