"""moto's S3 server with one request at a time, for scripts/test-lake.sh.

moto (5.x) checks a PUT's If-Match / If-None-Match in its request handler and stores the object
later in the same handler, with no lock between the two, while its server (werkzeug, threaded)
runs requests on concurrent threads. Two conditional PUTs on the same ETag can then both pass
the check and both answer 200: a lost update that real S3 never shows (16 threads x 50
If-Match increments of one object ended at 799 with 800 wins). The lake's commit protocol
rests on a linearizable conditional write, so this launcher runs moto's own WSGI application
behind one lock: each request is handled whole, check and write together, before the next.

    python moto_serial.py HOST PORT
"""

import sys
import threading

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import run_simple


class Serial:
    """A WSGI application that runs the one it wraps for one request at a time."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        with self.lock:
            result = self.app(environ, start_response)
            try:
                return [b"".join(result)]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(host, port, Serial(app), threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
