#!/usr/bin/env python3
"""Independent reader of a TensorBoard event file, used by tensorboard_test.cc.

Pure Python 3 (no TensorFlow, no protobuf): reads TFRecord framing, verifies both masked
CRC-32C values of every record with its own CRC-32C, and parses tensorflow.Event by hand
from the protobuf wire format. Prints one JSON object per event on stdout:
  {"wall_time": float, "step": int, "file_version": str?, "session_status": int?,
   "scalars": [[tag, value], ...]}
where a non-finite value is printed as the string "nan", "inf" or "-inf".
Exits 1 with a message on stderr for any malformed byte (bad CRC, truncated record,
bad wire type). `--selftest` checks the CRC-32C against published vectors.

References: tensorflow/core/lib/io/record_writer.cc (framing),
tensorflow/core/util/event.proto, https://protobuf.dev/programming-guides/encoding/,
RFC 3720 appendix B.4 (CRC-32C test vectors).
"""
import json
import math
import struct
import sys


def _make_table():
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _make_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


class FormatError(Exception):
    pass


def read_varint(buf, pos):
    result, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise FormatError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise FormatError("varint too long")


def fields(buf):
    """Yields (field_number, wire_type, value) for one message; value is int or bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise FormatError("field number 0")
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            size, pos = read_varint(buf, pos)
            value, pos = buf[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise FormatError("unsupported wire type %d" % wire)
        if pos > len(buf):
            raise FormatError("field %d runs past the end of its message" % number)
        yield number, wire, value


def expect_wire(number, wire, want):
    if wire != want:
        raise FormatError("field %d has wire type %d, expected %d" % (number, wire, want))


def json_float(v):
    return v if math.isfinite(v) else str(v)


def parse_value(buf):
    tag, value = None, None
    for number, wire, v in fields(buf):
        if number == 1:
            expect_wire(number, wire, 2)
            tag = v.decode("utf-8")
        elif number == 2:
            expect_wire(number, wire, 5)
            value = struct.unpack("<f", v)[0]
    if tag is None or value is None:
        raise FormatError("Summary.Value without tag or simple_value")
    return [tag, json_float(value)]


def parse_event(buf):
    event = {"wall_time": None, "step": 0, "scalars": []}
    for number, wire, v in fields(buf):
        if number == 1:
            expect_wire(number, wire, 1)
            event["wall_time"] = struct.unpack("<d", v)[0]
        elif number == 2:
            expect_wire(number, wire, 0)
            event["step"] = v - (1 << 64) if v >= (1 << 63) else v
        elif number == 3:
            expect_wire(number, wire, 2)
            event["file_version"] = v.decode("utf-8")
        elif number == 5:
            expect_wire(number, wire, 2)
            for n2, w2, v2 in fields(v):
                if n2 == 1:
                    expect_wire(n2, w2, 2)
                    event["scalars"].append(parse_value(v2))
        elif number == 6:
            expect_wire(number, wire, 2)
            for n2, w2, v2 in fields(v):
                if n2 == 1:
                    expect_wire(n2, w2, 0)
                    event["session_status"] = v2
    if event["wall_time"] is None:
        raise FormatError("event without wall_time")
    return event


def read_records(data):
    pos, index = 0, 0
    while pos < len(data):
        if len(data) - pos < 12:
            raise FormatError("record %d: truncated header" % index)
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if masked(crc32c(header)) != length_crc:
            raise FormatError("record %d at byte %d: length CRC mismatch" % (index, pos))
        body_start = pos + 12
        body_end = body_start + length
        if body_end + 4 > len(data):
            raise FormatError("record %d: truncated data" % index)
        body = data[body_start:body_end]
        (data_crc,) = struct.unpack("<I", data[body_end:body_end + 4])
        if masked(crc32c(body)) != data_crc:
            raise FormatError("record %d at byte %d: data CRC mismatch" % (index, pos))
        yield body
        pos = body_end + 4
        index += 1


def selftest():
    checks = [
        (b"123456789", 0xE3069283),
        (bytes(32), 0x8A9136AA),
        (b"\xff" * 32, 0x62A8AB43),
        (bytes(range(32)), 0x46DD794E),
    ]
    for data, want in checks:
        got = crc32c(data)
        if got != want:
            raise FormatError("crc32c self-test failed: %08x != %08x" % (got, want))


def main(argv):
    if len(argv) != 2:
        print("usage: read_tfevents.py (--selftest | EVENT_FILE)", file=sys.stderr)
        return 2
    try:
        selftest()
        if argv[1] == "--selftest":
            print("ok")
            return 0
        with open(argv[1], "rb") as f:
            data = f.read()
        events = [parse_event(body) for body in read_records(data)]
    except (FormatError, UnicodeDecodeError) as e:
        print("read_tfevents.py: %s: %s" % (argv[1], e), file=sys.stderr)
        return 1
    for event in events:
        print(json.dumps(event))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
