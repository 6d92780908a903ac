"""A small key-value store used as a cross-check fixture."""
import json
import os
import threading
from collections import defaultdict


class StoreError(Exception):
    pass


class Store:
    def __init__(self, path, autosave=True):
        self.path = path
        self.autosave = autosave
        self.data = {}
        self.lock = threading.Lock()
        self.listeners = defaultdict(list)
        if os.path.exists(path):
            self.load()

    def load(self):
        with open(self.path) as fh:
            self.data = json.load(fh)
        print("loaded", len(self.data), "keys")

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(self.data, fh, indent=2)
        os.replace(tmp, self.path)

    def get(self, key, default=None):
        with self.lock:
            return self.data.get(key, default)

    def put(self, key, value):
        if not isinstance(key, str):
            raise StoreError("keys must be strings, not %r" % (key,))
        with self.lock:
            old = self.data.get(key)
            self.data[key] = value
        for cb in self.listeners[key]:
            cb(key, old, value)
        if self.autosave:
            self.save()

    def delete(self, key):
        with self.lock:
            if key not in self.data:
                raise KeyError(key)
            del self.data[key]

    def watch(self, key, cb):
        self.listeners[key].append(cb)
        return lambda: self.listeners[key].remove(cb)

    def keys(self, prefix=""):
        return sorted(k for k in self.data if k.startswith(prefix))


def merge(a, b):
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


def main(argv):
    if len(argv) < 2:
        print("usage: store PATH [KEY [VALUE]]")
        return 2
    store = Store(argv[1])
    if len(argv) == 2:
        for k in store.keys():
            print(k, store.get(k))
        return 0
    if len(argv) == 3:
        print(store.get(argv[2]))
        return 0
    store.put(argv[2], argv[3])
    return 0
