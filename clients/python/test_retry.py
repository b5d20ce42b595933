"""SiloClient retries transient failures (fedscore_client, SiloClient.request): a connection
refused or dropped, 429, 502, 503 and 504 are retried with a doubling backoff (a retry-after is
waited out instead), each attempt signed afresh; other answers are not retried.

    python3 test_retry.py        (test/clients/python-retry.test.ts runs it)
"""

import http.server
import json
import socket
import threading
import unittest

from fedscore_client import FedscoreError, SiloClient, SiloKey

KEY = SiloKey.generate()


class Script(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next scripted (status, headers) — or drops the connection."""

    script: list = []
    nonces: list = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        Script.nonces.append(self.headers.get("x-fedscore-nonce"))
        status, headers = Script.script.pop(0) if Script.script else (200, {})
        if status == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        body = json.dumps({"consortium": "c1"} if status == 200 else {"code": f"E{status}", "message": "m"}).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve(port: int = 0) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Script)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Retries(unittest.TestCase):
    def setUp(self):
        Script.script = []
        Script.nonces = []
        self.waits = []
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.shutdown()
            s.server_close()

    def client(self, port: int, **kw) -> SiloClient:
        return SiloClient(f"http://127.0.0.1:{port}", "c1", 0, KEY, sleep=self.waits.append, **kw)

    def test_transient_answers_are_retried_with_backoff_and_fresh_signatures(self):
        server = serve()
        self.servers.append(server)
        Script.script = [(503, {}), (429, {"retry-after": "2"}), (502, {}), (504, {}), (200, {})]
        got = self.client(server.server_address[1]).consortium_config()
        self.assertEqual(got, {"consortium": "c1"})
        self.assertEqual(len(Script.nonces), 5)
        self.assertEqual(len(set(Script.nonces)), 5)  # each attempt signed afresh
        self.assertEqual(len(self.waits), 4)
        self.assertTrue(0.5 <= self.waits[0] <= 0.625, self.waits)  # backoff 0.5 s, up to 25 % jitter
        self.assertEqual(self.waits[1], 2.0)  # retry-after
        self.assertTrue(2.0 <= self.waits[2] <= 2.5, self.waits)
        self.assertTrue(4.0 <= self.waits[3] <= 5.0, self.waits)

    def test_gives_up_after_the_retries_with_the_last_answer(self):
        server = serve()
        self.servers.append(server)
        Script.script = [(503, {})] * 10
        with self.assertRaises(FedscoreError) as e:
            self.client(server.server_address[1], retries=2).consortium_config()
        self.assertEqual((e.exception.status, e.exception.code), (503, "E503"))
        self.assertEqual(len(Script.nonces), 3)

    def test_other_answers_are_not_retried(self):
        server = serve()
        self.servers.append(server)
        Script.script = [(400, {}), (200, {})]
        with self.assertRaises(FedscoreError) as e:
            self.client(server.server_address[1]).consortium_config()
        self.assertEqual(e.exception.status, 400)
        self.assertEqual((len(Script.nonces), self.waits), (1, []))

    def test_a_refused_connection_is_retried_until_the_service_is_up(self):
        port = free_port()
        started = []

        def wait(s: float) -> None:
            self.waits.append(s)
            if len(self.waits) == 2:  # the service comes up after two refused attempts
                started.append(serve(port))

        client = SiloClient(f"http://127.0.0.1:{port}", "c1", 0, KEY, sleep=wait)
        self.assertEqual(client.consortium_config(), {"consortium": "c1"})
        self.servers.extend(started)
        self.assertEqual((len(self.waits), len(Script.nonces)), (2, 1))

    def test_a_refused_connection_past_the_retries_is_raised(self):
        with self.assertRaises(OSError):
            self.client(free_port(), retries=1).consortium_config()
        self.assertEqual(len(self.waits), 1)

    def test_a_connection_dropped_before_the_answer_is_retried(self):
        server = serve()
        self.servers.append(server)
        Script.script = [("drop", {}), (200, {})]
        self.assertEqual(self.client(server.server_address[1]).consortium_config(), {"consortium": "c1"})
        self.assertEqual((len(Script.nonces), len(self.waits)), (2, 1))


if __name__ == "__main__":
    unittest.main()
