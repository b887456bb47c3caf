"""A safe, exact byte encoding of the results the store keeps (no pickle).

A stored result is a tree of ``None``, ``bool``, ``int``, ``float``, ``str``, numpy scalars,
numpy arrays, lists, tuples and dicts. Numeric arrays are kept as their raw bytes with dtype and
shape, so a decoded array is bit-identical to the one encoded (the resumed audit must equal the
uninterrupted one to the last bit); arrays of Python objects (text labels) are kept element by
element with their types. Anything else is refused with a ``TypeError`` — never pickled, so
opening a store can never run code.

Layout: 8 bytes (little-endian length of the JSON header), the header, then the array bytes.
"""

from __future__ import annotations

import json
import struct

import numpy as np

__all__ = ["pack", "unpack", "packable"]


def _enc(o, buffers: list, offset: list):
    if o is None or isinstance(o, bool | str):
        return o
    if isinstance(o, np.generic):
        if o.dtype == object:
            raise TypeError(f"cannot store a numpy object scalar {o!r}")
        return {"$g": o.dtype.str, "v": _enc(o.item(), buffers, offset)}
    if isinstance(o, int):
        return o
    if isinstance(o, float):
        return {"$f": o.hex()}  # exact, NaN and infinities included
    if isinstance(o, np.ndarray):
        if o.dtype == object:
            return {"$o": [_enc(v, buffers, offset) for v in o.ravel().tolist()],
                    "shape": list(o.shape)}
        if o.dtype.hasobject or o.dtype.names is not None:
            raise TypeError(f"cannot store an array of dtype {o.dtype}")
        raw = np.ascontiguousarray(o).tobytes()
        buffers.append(raw)
        start = offset[0]
        offset[0] += len(raw)
        return {"$a": o.dtype.str, "shape": list(o.shape), "at": start, "n": len(raw)}
    if isinstance(o, list):
        return {"$l": [_enc(v, buffers, offset) for v in o]}
    if isinstance(o, tuple):
        return {"$t": [_enc(v, buffers, offset) for v in o]}
    if isinstance(o, dict):
        return {"$d": [[_enc(k, buffers, offset), _enc(v, buffers, offset)]
                       for k, v in o.items()]}
    raise TypeError(f"cannot store a value of type {type(o).__name__}")


def _dec(o, body: memoryview):
    if not isinstance(o, dict):
        return o
    if "$f" in o:
        return float.fromhex(o["$f"])
    if "$g" in o:
        return np.dtype(o["$g"]).type(_dec(o["v"], body))
    if "$a" in o:
        dtype = np.dtype(o["$a"])
        raw = body[o["at"]:o["at"] + o["n"]]
        return np.frombuffer(raw, dtype=dtype).reshape(o["shape"]).copy()
    if "$o" in o:
        out = np.empty(len(o["$o"]), dtype=object)
        out[:] = [_dec(v, body) for v in o["$o"]]
        return out.reshape(o["shape"])
    if "$l" in o:
        return [_dec(v, body) for v in o["$l"]]
    if "$t" in o:
        return tuple(_dec(v, body) for v in o["$t"])
    if "$d" in o:
        return {_dec(k, body): _dec(v, body) for k, v in o["$d"]}
    raise ValueError(f"unknown stored value {o!r}")


def pack(obj) -> bytes:
    """``obj`` as bytes; :func:`unpack` gives it back exactly.

    Raises
    ------
    TypeError
        A value that is not a tree of scalars, numpy arrays, lists, tuples and dicts.

    Examples
    --------
    >>> import numpy as np
    >>> a = (np.array([0.1, np.nan]), ["x", 2], {"k": np.int64(3)})
    >>> b = unpack(pack(a))
    >>> b[0].tobytes() == a[0].tobytes(), b[1], b[2]
    (True, ['x', 2], {'k': np.int64(3)})
    """
    buffers: list[bytes] = []
    header = json.dumps(_enc(obj, buffers, [0]), separators=(",", ":")).encode()
    return struct.pack("<Q", len(header)) + header + b"".join(buffers)


def unpack(data: bytes):
    """The object :func:`pack` encoded."""
    view = memoryview(data)
    (n,) = struct.unpack("<Q", view[:8])
    header = json.loads(bytes(view[8:8 + n]))
    return _dec(header, view[8 + n:])


def packable(values) -> bool:
    """Whether every element of an object array (labels) can be stored exactly."""
    try:
        _enc(np.asarray(values, dtype=object), [], [0])
    except TypeError:
        return False
    return True
