#!/usr/bin/env python3
"""HTTPie's cookie handling under the same flood as courier-cookie-bench.

HTTPie keeps a session's cookies in requests' RequestsCookieJar (an http.cookiejar.CookieJar):
each response's Set-Cookie goes in through requests.cookies.extract_cookies_to_jar (the
CookieJar policy checks, as requests runs them after every response), and a session file is
loaded with requests.cookies.create_cookie + jar.set_cookie for each stored cookie (HTTPie's
sessions.py). This script times both, in CPU seconds (user + system of this process):

  store:  20 hosts x 500 cookies, one Set-Cookie per response (10,000 responses)
  load:   a 3,000-cookie session (20 hosts x 150), as HTTPie reads a session file
  lookup: Cookie headers built from the 3,000-cookie jar (as each request does); 100 of them
          by default (the jar walks every domain per request: 10,000 would take minutes)

Prints one line per case: `name cpu_seconds count` (for lookup: `lookup cpu_seconds requests`). Note: the standard library's CookieJar
keeps every cookie (no per-domain or total cap), so its store does no eviction.
"""
import resource
import sys
import urllib.request

import requests
from requests.cookies import RequestsCookieJar, create_cookie, extract_cookies_to_jar, get_cookie_header

try:
    import httpie  # noqa: F401  (present when `pip install httpie` ran: the jar HTTPie uses)
    HTTPIE = getattr(httpie, "__version__", "?")
except ImportError:
    HTTPIE = "not installed"


def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class FakeHeaders:
    """What requests' MockResponse reads from a urllib3 response: get_all."""

    def __init__(self, fields):
        self.fields = fields

    def get_all(self, name, default=None):
        values = [value for key, value in self.fields if key.lower() == name.lower()]
        return values or default


class FakeOriginal:
    def __init__(self, fields):
        self.msg = FakeHeaders(fields)


class FakeResponse:
    """The part of requests.Response that extract_cookies_to_jar reads."""

    def __init__(self, fields):
        self._original_response = FakeOriginal(fields)


def store(hosts=20, per_host=500):
    jar = RequestsCookieJar()
    start = cpu()
    for host in range(hosts):
        url = "http://host%d.example/" % host
        for index in range(per_host):
            request = requests.Request("GET", url).prepare()
            extract_cookies_to_jar(jar, request, FakeResponse([("Set-Cookie", "c%d=%d-%d" % (index, host, index))]))
    return cpu() - start, len(jar)


def load(hosts=20, per_host=150):
    stored = [
        ("c%d" % index, {"value": "v%d" % index, "domain": "host%d.example" % host, "path": "/",
                         "expires": 2_000_000_000, "secure": False})
        for host in range(hosts) for index in range(per_host)
    ]
    start = cpu()
    jar = RequestsCookieJar()
    for name, fields in stored:
        jar.set_cookie(create_cookie(name, fields["value"], domain=fields["domain"], path=fields["path"],
                                     expires=fields["expires"], secure=fields["secure"]))
    return cpu() - start, len(jar), jar


def lookup(jar, count=100, hosts=20):
    start = cpu()
    total = 0
    for index in range(count):
        request = requests.Request("GET", "http://host%d.example/x" % (index % hosts)).prepare()
        header = get_cookie_header(jar, request) or ""
        total += header.count("=")
    if total != count * 150:
        raise SystemExit("lookup: expected 150 cookies per request, got %d in all" % total)
    return cpu() - start, count


def main():
    print("# python %s, requests %s, httpie %s" % (sys.version.split()[0], requests.__version__, HTTPIE))
    seconds, kept = store()
    print("store %.4f %d" % (seconds, kept))
    seconds, kept, jar = load()
    print("load %.4f %d" % (seconds, kept))
    seconds, requests_made = lookup(jar, count=int(sys.argv[1]) if len(sys.argv) > 1 else 100)
    print("lookup %.4f %d" % (seconds, requests_made))


if __name__ == "__main__":
    main()
