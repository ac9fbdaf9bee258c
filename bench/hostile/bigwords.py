#!/usr/bin/env python3
"""A site with N pages of about 9.9 MB of distinct random words each
(under the crawler's default 10 MiB body limit), and 300 small pages.

  python3 bench/hostile/bigwords.py PORT N

/ links to /big/0 .. /big/N-1 and /small/0 .. /small/299. Used to measure
the crawl's memory and time on pages of many distinct words
(BENCHMARKS.md, "A page of random words"):

  /usr/bin/time -f '%e s %M KB' bin/crawler crawl --data DIR --delay 0 \
      --concurrency 1 --allow-private --quiet --timeout 60s http://127.0.0.1:PORT/
"""
import http.server
import random
import socketserver
import sys

PORT, N = int(sys.argv[1]), int(sys.argv[2])


def words(seed):
    r = random.Random(seed)
    out, n = [], 0
    while n < 9_900_000:
        w = "w%x" % r.getrandbits(40)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    last = {}

    def log_message(self, *args):
        pass

    def do_GET(self):
        p = self.path
        if p == "/":
            links = "".join("<a href='/big/%d'>b</a>" % i for i in range(N))
            links += "".join("<a href='/small/%d'>s</a>" % i for i in range(300))
            body = ("<html><title>index</title>%s</html>" % links).encode()
        elif p.startswith("/big/") and p[5:].isdigit() and int(p[5:]) < N:
            i = int(p[5:])
            if i not in Handler.last:
                Handler.last = {i: ("<html><title>big %d</title><p>%s</p></html>" % (i, words(i))).encode()}
            body = Handler.last[i]
        elif p.startswith("/small/"):
            body = ("<html><title>small</title><p>a small page %s</p></html>" % p).encode()
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


Server(("127.0.0.1", PORT), Handler).serve_forever()
