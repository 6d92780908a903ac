import logging
import re
import sys
from functools import wraps

log = logging.getLogger(__name__)
WORD = re.compile(r"\w+")


def retry(times=3, exceptions=(Exception,)):
    def deco(fn):
        @wraps(fn)
        def inner(*args, **kwargs):
            last = None
            for attempt in range(times):
                try:
                    return fn(*args, **kwargs)
                except exceptions as e:
                    last = e
                    log.warning("attempt %d failed: %s", attempt, e)
            raise last
        return inner
    return deco


def words(text):
    return [w.lower() for w in WORD.findall(text)]


def count(text):
    counts = {}
    for w in words(text):
        counts[w] = counts.get(w, 0) + 1
    return counts


class Timer:
    def __init__(self, name):
        self.name = name
        self.elapsed = None

    def __enter__(self):
        import time
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc):
        import time
        self.elapsed = time.monotonic() - self.start
        print(self.name, "took", self.elapsed, file=sys.stderr)
        return False


def chunks(xs, n):
    if n <= 0:
        raise ValueError("n must be positive")
    for i in range(0, len(xs), n):
        yield xs[i:i + n]


def flatten(xss):
    out = []
    for xs in xss:
        out.extend(xs)
    return out


def first(xs, pred=lambda x: True):
    for x in xs:
        if pred(x):
            return x
    return None


if __name__ == "__main__":
    with Timer("count"):
        print(count(sys.stdin.read()))
