#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""leanchan-proxy end to end, for one --channel design.

usage: proxy_test.py PROXY BACKEND CHANNEL

Starts leanchan-proxy-backend and leanchan-proxy on ephemeral ports (waiting
for their `ready` lines), then checks the contract: many keep-alive requests
answered right, pipelined ones in order; /admin/flap takes endpoint 0 out of
a zone of services and back; malformed requests and slow heads; a dead and a
slow backend; bad flags; the idle timeout; SIGTERM under load;
/admin/stats. Every process started must exit 0 (a sanitizer report makes it
fail). Prints "proxy_test[CHANNEL]: ok" at the end.
"""
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

PROXY, BACKEND, CHANNEL = sys.argv[1:4]
SERVICES = 1000
BODY = b"x" * 64
HEADER_TIMEOUT_MS = 300
STARTED = []


def fail(message):
    print(f"proxy_test[{CHANNEL}]: FAIL: {message}", flush=True)
    for proc in STARTED:
        if proc.poll() is None:
            proc.kill()
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def start(args, prefix, timeout=30):
    """Starts a program and returns it with the rest of its `ready` line."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    STARTED.append(proc)
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    check(ready, f"no ready line from {args}")
    line = proc.stdout.readline().decode()
    check(line.startswith(prefix), f"{args[0]}: expected '{prefix}...', got {line!r}")
    return proc, line[len(prefix):].strip()


def stop(proc, name, timeout=10):
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        fail(f"{name} did not exit within {timeout} s of SIGTERM")
    check(code == 0, f"{name} exited {code} after SIGTERM")


def start_backend(*extra):
    proc, ports = start([BACKEND, "--endpoints=2", *extra], "ready ports=")
    return proc, [int(p) for p in ports.split(",")]


def start_proxy(backend_ports, *extra, services=SERVICES):
    backends = ",".join(f"127.0.0.1:{p}" for p in backend_ports)
    proc, port = start([PROXY, "--listen=127.0.0.1:0", f"--backends={backends}",
                        f"--services={services}", f"--channel={CHANNEL}", "--threads=2",
                        f"--header-timeout-ms={HEADER_TIMEOUT_MS}", *extra], "ready port=")
    return proc, int(port)


def get(conn, path):
    conn.request("GET", path)
    response = conn.getresponse()
    return response, response.read()


def check_svc(conn, path, endpoints=("0", "1")):
    response, body = get(conn, path)
    check(response.status == 200, f"GET {path}: status {response.status}")
    endpoint = response.getheader("X-Endpoint")
    check(endpoint in endpoints, f"GET {path}: X-Endpoint {endpoint!r} not in {endpoints}")
    check(response.getheader("X-Path") == path,
          f"GET {path}: X-Path {response.getheader('X-Path')!r}")
    check(body == BODY, f"GET {path}: body {body[:80]!r}")
    return endpoint


def test_load(port, connections=4, per_connection=600):
    errors = []

    def client(index):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for i in range(per_connection):
                service = (index * 7919 + i) % SERVICES
                check_svc(conn, f"/svc/{service}/load/{index}/{i}?q={i}")
            conn.close()
        except Exception as error:  # reported by the main thread
            errors.append(f"client {index}: {error!r}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    check(not errors, "; ".join(errors))
    return connections * per_connection


def flap(port, first, count, endpoint, state):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", f"/admin/flap?first={first}&count={count}&endpoint={endpoint}"
                         f"&state={state}")
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


def test_flap(port):
    zone = range(100, 200)
    status, body = flap(port, 100, 100, 0, "down")
    check(status == 200 and body == b"applied 100", f"flap down: {status} {body!r}")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for service in zone:
        for i in range(2):
            check_svc(conn, f"/svc/{service}/zone/{i}", endpoints=("1",))
    seen = {check_svc(conn, f"/svc/{300 + i % 5}/outside/{i}") for i in range(20)}
    check(seen == {"0", "1"}, f"services outside the zone used only {seen}")
    status, body = flap(port, 100, 100, 0, "up")
    check(status == 200 and body == b"applied 100", f"flap up: {status} {body!r}")
    seen = {check_svc(conn, f"/svc/{150}/back/{i}") for i in range(20)}
    check(seen == {"0", "1"}, f"after flapping back up, service 150 used only {seen}")
    # Bad parameters.
    for query in ("first=0&count=1&endpoint=9&state=down", "first=0&count=1&endpoint=0",
                  f"first={SERVICES}&count=1&endpoint=0&state=up",
                  "first=0&count=1&endpoint=0&state=sideways"):
        conn2 = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn2.request("POST", "/admin/flap?" + query)
        response = conn2.getresponse()
        response.read()
        check(response.status == 400, f"flap {query}: status {response.status}, not 400")
        conn2.close()
    conn.close()


def test_other_paths(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for path, want in ((f"/svc/{SERVICES}/x", 404), ("/svc/abc/x", 404), ("/svc/-1/x", 404),
                       ("/nothing", 404), ("/", 404)):
        response, _ = get(conn, path)
        check(response.status == want, f"GET {path}: status {response.status}, not {want}")
    conn.request("PUT", "/svc/1/x", body=b"data")
    response = conn.getresponse()
    response.read()
    check(response.status == 405, f"PUT /svc/1/x: status {response.status}, not 405")
    check_svc(conn, "/svc/1/still-open")
    conn.close()


class Cut(Exception):
    """The connection closed before a whole response came; `started`: part of it did."""

    def __init__(self, started):
        super().__init__(started)
        self.started = started


def receive_response(sock, buffer):
    """One whole response from `sock`, after what `buffer` holds: (head, body, rest)."""
    started = bool(buffer)
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            raise Cut(started)
        buffer += chunk
        started = True
    head, _, buffer = buffer.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(buffer) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise Cut(True)
        buffer += chunk
    return head, buffer[:length], buffer[length:]


def test_pipelining(port, count=12):
    """Requests sent in one write are answered in order."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    paths = [f"/svc/{(i * 37) % SERVICES}/pipelined/{i}" for i in range(count)]
    sock.sendall(b"".join(f"GET {p} HTTP/1.1\r\nHost: p\r\n\r\n".encode() for p in paths))
    buffer = b""
    for path in paths:
        while b"\r\n\r\n" not in buffer:
            chunk = sock.recv(65536)
            check(chunk, f"pipelining: closed before the answer to {path}")
            buffer += chunk
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        headers = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get(b"content-length", b"0"))
        while len(buffer) < length:
            chunk = sock.recv(65536)
            check(chunk, f"pipelining: closed inside the answer to {path}")
            buffer += chunk
        body, buffer = buffer[:length], buffer[length:]
        check(head.startswith(b"HTTP/1.1 200"), f"pipelining {path}: {head[:40]!r}")
        check(headers.get(b"x-path") == path.encode(),
              f"pipelining: answer for {headers.get(b'x-path')!r} where {path} was due")
        check(body == BODY, f"pipelining {path}: body {body[:80]!r}")
    sock.close()
    return count


def read_until_closed(sock, limit=10.0):
    """Everything the peer sends until it closes (or resets) the connection."""
    sock.settimeout(limit)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    except socket.timeout:
        fail(f"connection not closed within {limit} s; got {data[:200]!r}")
    return data


def test_malformed(port):
    for request in (b"GARBAGE\r\n\r\n", b"GET /svc/1/x HTTP/1.1\r\nBad Header\r\n\r\n",
                    b"GET /svc/1/x HTTP/9.9\r\n\r\n", b"\x00\x01\x02\r\n\r\n"):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(request)
        data = read_until_closed(sock)
        check(data.startswith(b"HTTP/1.1 400"), f"malformed {request!r}: got {data[:100]!r}")
        sock.close()
    # A client still sending after its malformed head (a body, say) can send
    # it all and then read the 400: a close with unread input would reset
    # the connection under it.
    sock = socket.create_connection(("127.0.0.1", port))
    try:
        sock.sendall(b"GARBAGE\r\n\r\n" + b"x" * 8_000_000)
    except (ConnectionResetError, BrokenPipeError) as error:
        fail(f"malformed with more input: sending the rest failed: {error!r}")
    data = read_until_closed(sock)
    check(data.startswith(b"HTTP/1.1 400"), f"malformed with more input: got {data[:100]!r}")
    sock.close()
    # Half a head: closed after the header timeout.
    sock = socket.create_connection(("127.0.0.1", port))
    began = time.monotonic()
    sock.sendall(b"GET /svc/1/x HTTP/1.1\r\nHost: a\r\n")
    data = read_until_closed(sock)
    elapsed = time.monotonic() - began
    check(data == b"", f"half a head: got {data[:100]!r}")
    check(elapsed >= HEADER_TIMEOUT_MS / 1000 * 0.8,
          f"half a head: closed after {elapsed:.3f} s, before the header timeout")
    sock.close()
    # An idle connection outlives the header timeout (--idle-timeout-ms=0).
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.connect()
    time.sleep(2 * HEADER_TIMEOUT_MS / 1000)
    check_svc(conn, "/svc/2/after-idle")
    conn.close()


def test_stats(port, min_requests, min_events):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    response, body = get(conn, "/admin/stats")
    check(response.status == 200, f"/admin/stats: status {response.status}")
    check(response.getheader("Content-Type") == "application/json",
          f"/admin/stats: Content-Type {response.getheader('Content-Type')!r}")
    check(body.count(b"\n") <= 1 and body.strip().count(b"\n") == 0, "/admin/stats: not one line")
    stats = json.loads(body)
    fields = ["channel", "services", "connections", "requests", "heap_requested_bytes",
              "heap_per_service", "rss_bytes", "health_events", "service_entry_bytes"]
    check(list(stats) == fields, f"/admin/stats fields {list(stats)}")
    check(stats["channel"] == CHANNEL, f"channel {stats['channel']!r}")
    check(stats["services"] == SERVICES, f"services {stats['services']}")
    check(stats["connections"] >= 1, f"connections {stats['connections']}")
    check(stats["requests"] >= min_requests, f"requests {stats['requests']} < {min_requests}")
    check(stats["heap_requested_bytes"] > 0, f"heap_requested_bytes {stats['heap_requested_bytes']}")
    check(stats["heap_per_service"] > 0, f"heap_per_service {stats['heap_per_service']}")
    check(stats["rss_bytes"] > 0, f"rss_bytes {stats['rss_bytes']}")
    check(stats["health_events"] >= min_events, f"health_events {stats['health_events']}")
    conn.close()
    return stats


def dead_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    return port


def test_dead_and_slow_backend():
    proxy, port = start_proxy([dead_port()], "--probe-interval-ms=0",
                              "--upstream-timeout-ms=1000")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    response, _ = get(conn, "/svc/3/dead")
    check(response.status == 502, f"dead backend: status {response.status}, not 502")
    conn.close()
    stop(proxy, "proxy (dead backend)")
    # The active probe finds the dead endpoint down: then 503, no endpoint up.
    proxy, port = start_proxy([dead_port()], "--probe-interval-ms=50")
    deadline = time.monotonic() + 20
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        response, _ = get(conn, "/svc/3/probed")
        conn.close()
        if response.status == 503:
            break
        check(response.status == 502, f"dead backend, probing: status {response.status}")
        check(time.monotonic() < deadline, "the probe never marked the dead endpoint down")
        time.sleep(0.05)
    stop(proxy, "proxy (probed dead backend)")
    backend, ports = start_backend("--delay-ms=3000")
    proxy, port = start_proxy(ports, "--upstream-timeout-ms=300", "--probe-interval-ms=0")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    began = time.monotonic()
    response, _ = get(conn, "/svc/4/slow")
    elapsed = time.monotonic() - began
    check(response.status == 502, f"slow backend: status {response.status}, not 502")
    check(elapsed < 2.0, f"slow backend: 502 after {elapsed:.3f} s")
    conn.close()
    stop(proxy, "proxy (slow backend)")
    stop(backend, "backend (slow)")


def test_bad_flags(backend_ports):
    backends = f"--backends=127.0.0.1:{backend_ports[0]}"
    cases = [(["--bogus=1", backends], "--bogus"),
             (["--services=abc", backends], "--services"),
             (["--services=0", backends], "--services"),
             ([f"--channel=nope", backends], "--channel"),
             (["--threads=0", backends], "--threads"),
             (["--backends=nonsense"], "--backends"),
             (["--backends=127.0.0.1:99999"], "--backends"),
             (["--listen=127.0.0.1", backends], "--listen"),
             (["--upstream-timeout-ms=-5", backends], "--upstream-timeout-ms"),
             (["--header-timeout-ms", backends], "--header-timeout-ms"),
             ([backends, "stray"], "stray"),
             ([], "--backends")]
    for args, flag in cases:
        result = subprocess.run([PROXY, f"--channel={CHANNEL}", *args], capture_output=True,
                                timeout=30)
        err = result.stderr.decode()
        check(result.returncode == 2, f"{args}: exit {result.returncode}, not 2 ({err!r})")
        check(flag in err and err.count("\n") == 1, f"{args}: message {err!r} does not name {flag}")
    result = subprocess.run([PROXY, "--help"], capture_output=True, timeout=30)
    check(result.returncode == 0 and b"--channel" in result.stdout, "--help: not usage, exit 0")


def test_idle_timeout(backend_ports):
    proxy, port = start_proxy(backend_ports, "--probe-interval-ms=0", "--idle-timeout-ms=200")
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"GET /svc/5/idle HTTP/1.1\r\nHost: p\r\n\r\n")
    began = time.monotonic()
    data = read_until_closed(sock)
    elapsed = time.monotonic() - began
    check(data.startswith(b"HTTP/1.1 200") and data.endswith(BODY),
          f"idle timeout: the answer before closing was {data[:100]!r}")
    check(elapsed >= 0.15, f"idle timeout: closed after {elapsed:.3f} s, before 200 ms")
    sock.close()
    stop(proxy, "proxy (idle timeout)")


def test_sigterm(backend_ports):
    proxy, port = start_proxy(backend_ports, "--probe-interval-ms=0")
    clients = 4
    enough = threading.Barrier(clients + 1)
    problems = []
    counts = [0] * clients

    def one_response(sock, buffer):
        """(complete?, got any byte?, (rest, closes?)): reads one response."""
        try:
            head, body, rest = receive_response(sock, buffer)
        except Cut as cut:
            return False, cut.started, None
        if not head.startswith(b"HTTP/1.1 200") or body != BODY:
            problems.append(f"incomplete or not 200: {head[:60]!r}")
        closes = b"connection: close" in head.lower()
        return True, True, (rest, closes)

    def client(index):
        waited = False
        try:
            while True:
                try:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
                except OSError:
                    break  # the proxy no longer accepts: done
                buffer = b""
                try:
                    while True:
                        path = f"/svc/{(index * 31 + counts[index]) % SERVICES}/term"
                        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: p\r\n\r\n".encode())
                        complete, got_any, rest = one_response(sock, buffer)
                        if not complete:
                            if got_any:
                                problems.append(f"client {index}: a response cut short")
                            break
                        buffer, closes = rest
                        counts[index] += 1
                        if counts[index] == 20 and not waited:
                            waited = True
                            enough.wait(30)
                        if closes:
                            break
                except (ConnectionResetError, BrokenPipeError):
                    pass
                finally:
                    sock.close()
        except Exception as error:
            problems.append(f"client {index}: {error!r}")
        if not waited:
            enough.abort()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    try:
        enough.wait(60)
    except threading.BrokenBarrierError:
        fail(f"clients did not get going: {problems}")
    stop(proxy, "proxy (SIGTERM under load)", timeout=10)
    for thread in threads:
        thread.join(30)
        check(not thread.is_alive(), "a client still runs after the proxy exited")
    check(not problems, "; ".join(problems[:5]))


def read_response(sock, buffer, what):
    """One whole response from `sock` (after `buffer`): (head, body, rest)."""
    try:
        return receive_response(sock, buffer)
    except Cut as cut:
        fail(f"{what}: the connection closed {'inside' if cut.started else 'before'} the answer")


def test_sigterm_answers_what_was_read():
    """Three pipelined requests to a slow backend: the first answer comes
    300 ms after the proxy read all three, and a SIGTERM then still gets the
    other two answered, in order, before the proxy exits 0 within the
    upstream timeout and a second."""
    backend, ports = start_backend("--delay-ms=300")
    proxy, port = start_proxy(ports, "--probe-interval-ms=0", "--upstream-timeout-ms=2000")
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    paths = [f"/svc/{7 + i}/draining/{i}" for i in range(3)]
    sock.sendall(b"".join(f"GET {p} HTTP/1.1\r\nHost: p\r\n\r\n".encode() for p in paths))
    buffer = b""
    for index, path in enumerate(paths):
        head, body, buffer = read_response(sock, buffer, f"draining {path}")
        check(head.startswith(b"HTTP/1.1 200"), f"draining {path}: {head[:40]!r}")
        check(f"x-path: {path}".encode() in head.lower(), f"draining: {head!r} where {path} was due")
        check(body == BODY, f"draining {path}: body {body[:80]!r}")
        if index == 0:
            proxy.send_signal(signal.SIGTERM)  # the other two are read and not answered yet
    check(read_until_closed(sock) == b"", "draining: bytes after the last answer")
    sock.close()
    stop(proxy, "proxy (draining pipelined requests)", timeout=3)
    stop(backend, "backend (draining)")


# What a leanchan channel costs idle with Retention::kKeepNone: its control
# block alone (docs/memory.md).
LEANCHAN_IDLE_CHANNEL_BYTES = 64


def test_service_cost(backend_ports):
    """The heap a service costs, from two proxies that differ only in their
    service count (the fixed part cancels): the table's entry plus, for
    leanchan, exactly one idle channel's control block; for the other
    designs at least the entry."""
    heaps = {}
    for services in (1000, 3000):
        proxy, port = start_proxy(backend_ports, "--probe-interval-ms=0", services=services)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        _, body = get(conn, "/admin/stats")
        conn.close()
        stats = json.loads(body)
        heaps[services] = stats["heap_requested_bytes"]
        entry = stats["service_entry_bytes"]
        stop(proxy, f"proxy ({services} services)")
    per_service = (heaps[3000] - heaps[1000]) / 2000
    if CHANNEL == "leanchan":
        check(per_service == entry + LEANCHAN_IDLE_CHANNEL_BYTES,
              f"a service costs {per_service} bytes, not its entry ({entry}) "
              f"+ {LEANCHAN_IDLE_CHANNEL_BYTES}")
    else:
        check(per_service >= entry, f"a service costs {per_service} bytes, below its entry {entry}")


def main():
    os.environ.setdefault("TSAN_OPTIONS", "halt_on_error=1")
    began = time.monotonic()
    backend, ports = start_backend()
    proxy, port = start_proxy(ports, "--probe-interval-ms=100")
    requests = test_load(port)
    requests += test_pipelining(port)
    test_flap(port)
    test_other_paths(port)
    test_malformed(port)
    test_stats(port, requests + 242, 200)
    stop(proxy, "proxy")
    test_dead_and_slow_backend()
    test_bad_flags(ports)
    test_idle_timeout(ports)
    test_sigterm(ports)
    test_sigterm_answers_what_was_read()
    test_service_cost(ports)
    stop(backend, "backend")
    print(f"proxy_test[{CHANNEL}]: ok ({time.monotonic() - began:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
