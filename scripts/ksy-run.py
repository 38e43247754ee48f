#!/usr/bin/python3
"""Parses a byte stream with a .ksy from `framescope export --format kaitai`, without the Kaitai
compiler (neither Debian nor PyPI carries kaitai-struct-compiler): the .ksy is read as YAML and
its semantics are run here on the Kaitai runtime's stream (kaitaistruct.KaitaiStream reads every
primitive). It covers what the export writes: seq fields with integer types, contents, size
(a number or an expression), str, terminator/include, repeat eos/until, user types, instances
with value expressions (integers, field references, [], .size, .to_i, .to_i(16), arithmetic,
bit operations, comparisons, and/or/not, the ?: conditional).

    scripts/ksy-run.py FILE.ksy STREAM.bin   ->  prints the whole frames parsed, as JSON

A frame cut by the end of the stream is not counted; a frame whose contents (magic) differ stops
the run and is reported with its offset.
"""
import io
import json
import re
import sys

import yaml
from kaitaistruct import KaitaiStream


class Stop(Exception):
    pass


TOKEN = re.compile(r"\s*(0x[0-9a-fA-F]+|\d+|[A-Za-z_][A-Za-z0-9_]*|<<|>>|<=|>=|==|!=|[-+*/%&|^<>?:()\[\].,])")


def tokens(text):
    text = str(text)
    out, at = [], 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        m = TOKEN.match(text, at)
        if not m:
            raise ValueError(f"cannot read expression {text!r} at {at}")
        out.append(m.group(1))
        at = m.end()
    return out


class Expression:
    """Kaitai's expression grammar (the part the export uses), parsed into closures so that a
    conditional evaluates only the branch it takes, as Kaitai does."""

    BINARY = [["or"], ["and"], ["==", "!="], ["<", "<=", ">", ">="], ["|"], ["^"], ["&"], ["<<", ">>"], ["+", "-"], ["*", "/", "%"]]
    OPS = {
        "or": lambda a, b: a() or b(), "and": lambda a, b: a() and b(), "==": lambda a, b: a() == b(), "!=": lambda a, b: a() != b(),
        "<": lambda a, b: a() < b(), "<=": lambda a, b: a() <= b(), ">": lambda a, b: a() > b(), ">=": lambda a, b: a() >= b(),
        "|": lambda a, b: a() | b(), "^": lambda a, b: a() ^ b(), "&": lambda a, b: a() & b(), "<<": lambda a, b: a() << b(),
        ">>": lambda a, b: a() >> b(), "+": lambda a, b: a() + b(), "-": lambda a, b: a() - b(), "*": lambda a, b: a() * b(),
        "/": lambda a, b: a() // b(), "%": lambda a, b: a() % b(),
    }

    def __init__(self, text, scope):
        self.t, self.i, self.scope = tokens(text), 0, scope

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, expected=None):
        token = self.peek()
        if expected is not None and token != expected:
            raise ValueError(f"expected {expected} in {' '.join(self.t)}")
        self.i += 1
        return token

    def run(self):
        value = self.conditional()
        if self.peek() is not None:
            raise ValueError(f"left over: {self.t[self.i:]}")
        return value()

    def conditional(self):
        test = self.binary(0)
        if self.peek() != "?":
            return test
        self.take()
        yes = self.conditional()
        self.take(":")
        no = self.conditional()
        return lambda: yes() if test() else no()

    def binary(self, level):
        if level == len(self.BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self.BINARY[level]:
            op, a, b = self.OPS[self.take()], left, self.binary(level + 1)
            left = lambda op=op, a=a, b=b: op(a, b)
        return left

    def unary(self):
        if self.peek() == "-":
            self.take()
            inner = self.unary()
            return lambda: -inner()
        if self.peek() == "not":
            self.take()
            inner = self.unary()
            return lambda: not inner()
        return self.postfix(self.primary())

    def primary(self):
        token = self.take()
        if token == "(":
            value = self.conditional()
            self.take(")")
            return value
        if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", token):
            number = int(token, 0)
            return lambda: number
        if token in ("true", "false"):
            return lambda: token == "true"
        return lambda: self.scope(token)

    def postfix(self, value):
        while self.peek() in (".", "["):
            if self.take() == "[":
                index = self.conditional()
                self.take("]")
                value = lambda v=value, i=index: v()[i()]
                continue
            name = self.take()
            if name == "size":
                value = lambda v=value: len(v())
            elif name == "to_i":
                radix = lambda: 10
                if self.peek() == "(":
                    self.take()
                    radix = self.conditional()
                    self.take(")")
                value = lambda v=value, r=radix: int(v().strip(), r())
            else:
                value = lambda v=value, n=name: v().get(n)
        return value


class Node:
    """A parsed user type: its fields, and its instances evaluated on demand."""

    def __init__(self, spec, types, io, parent):
        self.spec, self.types, self.io, self.parent, self.fields = spec, types, io, parent, {}

    def get(self, name):
        if name in self.fields:
            return self.fields[name]
        instance = (self.spec.get("instances") or {}).get(name)
        if instance is None:
            raise KeyError(name)
        value = self.evaluate(instance["value"])
        self.fields[name] = value
        return value

    def evaluate(self, text, last=None):
        def scope(name):
            if name == "_":
                return last
            if name == "_io":
                return self.io
            return self.get(name)
        return Expression(text, scope).run()

    def parse(self):
        for field in self.spec.get("seq") or []:
            self.fields[field["id"]] = self.read(field)
        return self

    def read(self, field):
        repeat = field.get("repeat")
        if repeat == "eos":
            out = []
            while not self.io.is_eof():
                out.append(self.one(field))
            return out
        if repeat == "until":
            out = []
            while True:
                item = self.one(field)
                out.append(item)
                if self.evaluate(field["repeat-until"], last=item):
                    return out
        return self.one(field)

    def one(self, field):
        io = self.io
        if "contents" in field:
            want = bytes(field["contents"])
            at = io.pos()
            got = self.bytes(len(want))
            if got != want:
                raise Stop(f"contents {got.hex()} where {want.hex()} was expected at offset {at}")
            return got
        kind = field.get("type")
        if "terminator" in field:
            return self.terminated(field["terminator"], field.get("include", False))
        if "size" in field:
            size = field["size"] if isinstance(field["size"], int) else self.evaluate(field["size"])
            if size < 0:
                raise Stop(f"size {size} at offset {io.pos()}")
            data = self.bytes(size)
            return data.decode(field.get("encoding", "ascii")) if kind == "str" else data
        primitive = {"u1": 1, "u2be": 2, "u2le": 2, "u4be": 4, "u4le": 4, "u8be": 8, "u8le": 8}
        if kind in primitive:
            data = self.bytes(primitive[kind])
            return int.from_bytes(data, "little" if kind.endswith("le") else "big")
        if kind in self.types:
            return Node(self.types[kind], self.types, io, self).parse()
        raise ValueError(f"type {kind} is not one the export writes")

    def bytes(self, n):
        if self.io.size() - self.io.pos() < n:
            raise EOFError
        return self.io.read_bytes(n)

    def terminated(self, terminator, include):
        out = bytearray()
        while True:
            if self.io.is_eof():
                raise EOFError
            byte = self.io.read_u1()
            if byte == terminator:
                if include:
                    out.append(byte)
                return bytes(out)
            out.append(byte)


def frames(ksy, data):
    """Whole frames of `data`, and why parsing stopped (None: at the end)."""
    types = ksy.get("types") or {}
    stream = KaitaiStream(io.BytesIO(data))
    frame = ksy["seq"][0]
    count, stop = 0, None
    while not stream.is_eof():
        start = stream.pos()
        try:
            Node(types[frame["type"]], types, stream, None).parse()
            count += 1
        except EOFError:
            stop = f"frame cut by the end of the stream at offset {start}"
            break
        except Stop as s:
            stop = str(s)
            break
    return count, stop


def main():
    ksy = yaml.safe_load(open(sys.argv[1]))
    data = open(sys.argv[2], "rb").read()
    count, stop = frames(ksy, data)
    print(json.dumps({"frames": count, "stop": stop, "bytes": len(data)}))


if __name__ == "__main__":
    main()
