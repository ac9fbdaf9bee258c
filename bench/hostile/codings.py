#!/usr/bin/env python3
"""A site whose pages name one Content-Encoding N times over.

  python3 bench/hostile/codings.py PORT N [CODING]

/ links to /p0 .. /p19; each answers 100 bytes with
"Content-Encoding: CODING, CODING, ..." (N times; deflate by default).
robots.txt is a 404. Used to measure what a crawl pays for a header that
names thousands of codings (BENCHMARKS.md, "A header of 7,000 codings"):

  /usr/bin/time -f '%e s %U+%S cpu %M KB' bin/crawler crawl --data DIR \\
      --delay 0 --concurrency 8 --allow-private --quiet http://127.0.0.1:PORT/
"""
import http.server
import socketserver
import sys

PORT, N = int(sys.argv[1]), int(sys.argv[2])
CODING = sys.argv[3] if len(sys.argv) > 3 else "deflate"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/":
            body = b"<html><body>" + b"".join(b'<a href="/p%d">p</a>' % i for i in range(20)) + b"</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
        elif self.path == "/robots.txt":
            body = b""
            self.send_response(404)
        else:
            body = b"x" * 100
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Encoding", ", ".join([CODING] * N))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


Server(("127.0.0.1", PORT), Handler).serve_forever()
