"""spec.py: a batch's spec, bench/specs/NAME.toml, and the settings it runs with.

A spec is data:

    description = "one line: what the batch measures"
    workload = "http"             # the plug-in that measures it (workloads/)
    out = "bench/results/%Y%m%d-%H%M%S"   # its folder (strftime), unless OUT
    guard = true                  # the quiet-host guard before it starts
    base = "OTHER"                # optional: OTHER's settings and quick under these
    [settings]                    # every setting it takes, with its default
    GUESTS = "linux uk native"
    REPS = 5
    [quick]                       # what QUICK=1 changes
    REPS = 1

A setting is overridden by the environment variable of its name (make passes
the variables a user gave: `make bench REPS=3`) and then by a NAME=VALUE
word on bench/run's command line. A name the spec does not list is refused,
so a typo never runs a batch with the default. Values are kept as strings;
the workload reads them through the typed getters below, which refuse a bad
value with a message naming the setting.
"""
import os
import time
import tomllib

SPEC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "specs")
ROOT = os.path.dirname(os.path.dirname(SPEC_DIR))

# Settings every guarded spec takes (runner/guard.py), and those of any spec.
GUARD_SETTINGS = {"MAX_LOAD": "1.0", "FORCE": "0", "LOADAVG_FILE": "/proc/loadavg"}
COMMON_SETTINGS = {"OUT": "", "QUICK": "0"}


class SpecError(Exception):
    """A spec or a setting that cannot run: said in one line, exit 2."""


def names():
    return sorted(f[:-5] for f in os.listdir(SPEC_DIR) if f.endswith(".toml"))


def _read(name):
    path = os.path.join(SPEC_DIR, name + ".toml")
    if not name.replace("-", "").isalnum() or not os.path.isfile(path):
        raise SpecError(f"no spec '{name}' (bench/run --list: {' '.join(names())})")
    with open(path, "rb") as f:
        try:
            return path, tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise SpecError(f"{path}: {e}") from None


def describe(name):
    return _merged(name)[1].get("description", "")


def _text(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


class Spec:
    """A spec with its settings resolved: .name, .workload, .description,
    .guard (bool), .out (the folder), .settings (name -> string), .given
    (the names the user set)."""

    def __init__(self, name, path, data, environ, words):
        self.name, self.path = name, path
        self.description = data.get("description", "")
        self.workload = data.get("workload")
        if not self.workload:
            raise SpecError(f"{path}: no workload")
        self.guard = bool(data.get("guard", True))
        defaults = dict(COMMON_SETTINGS)
        if self.guard:
            defaults.update(GUARD_SETTINGS)
        defaults.update({k: _text(v) for k, v in data.get("settings", {}).items()})
        self.settings, self.given = dict(defaults), set()
        for k in defaults:
            if k in environ and environ[k] != "":
                self.settings[k] = environ[k]
                self.given.add(k)
        overrides = {}
        for w in words:
            k, eq, v = w.partition("=")
            if not eq or not k:
                raise SpecError(f"'{w}': settings are NAME=VALUE")
            if k not in defaults:
                raise SpecError(f"spec {name} has no setting {k} (its settings: {' '.join(sorted(defaults))})")
            overrides[k] = v
        self.settings.update(overrides)
        self.given |= set(overrides)
        if self.settings["QUICK"] not in ("", "0"):
            for k, v in data.get("quick", {}).items():
                if k not in self.given:
                    self.settings[k] = _text(v)
        out_pattern = data.get("out", "bench/results/" + name + "-%Y%m%d-%H%M%S")
        self.out = self.settings["OUT"] or time.strftime(out_pattern)

    # ---- typed getters: each refuses a bad value, naming the setting ----
    def str(self, k):
        return self.settings[k]

    def quick(self):
        return self.settings["QUICK"] not in ("", "0")

    def int(self, k, lo, hi):
        v = self.settings[k]
        if not v.isdigit() or not lo <= int(v) <= hi:
            raise SpecError(f"{k} must be a whole number in {lo}..{hi}, not '{v}'")
        return int(v)

    def number(self, k):
        v = self.settings[k]
        try:
            f = float(v)
        except ValueError:
            f = -1.0
        if f < 0 or v.strip() != v or not v:
            raise SpecError(f"{k} must be a number, not '{v}'")
        return f

    def choice(self, k, allowed):
        v = self.settings[k]
        if v not in allowed:
            raise SpecError(f"{k} must be {' or '.join(allowed)}, not '{v}'")
        return v

    def words(self, k, allowed=None, what="value"):
        ws = self.settings[k].replace(",", " ").split()
        for w in ws:
            if allowed is not None and w not in allowed:
                raise SpecError(f"unknown {what} '{w}' in {k} ({', '.join(allowed)})")
        return ws


def _merged(name, seen=()):
    """A spec's data with its base's (base = "NAME") under it: settings and
    quick merged key by key, everything else the spec's own or the base's."""
    path, data = _read(name)
    base = data.get("base")
    if not base:
        return path, data
    if base in seen or base == name:
        raise SpecError(f"{path}: base '{base}' loops")
    _, under = _merged(base, seen + (name,))
    out = dict(under)
    out.update({k: v for k, v in data.items() if k not in ("settings", "quick", "base")})
    for table in ("settings", "quick"):
        out[table] = dict(under.get(table, {}))
        out[table].update(data.get(table, {}))
    return path, out


def load(name, words, environ=None):
    path, data = _merged(name)
    return Spec(name, path, data, os.environ if environ is None else environ, words)
