#!/usr/bin/env python3
"""check_bindings_abi.py - every binding's hand-written mirror of include/cudot.h must match the header.

The bindings reach the C ABI without the header (cgo with dlopen, syscall on Windows, ctypes, P/Invoke,
ccall), so each one repeats its parts by hand: the structs (cudot_config, cudot_array, cudot_arrays, cudot_rows),
the enums (statuses, element types, memory strategies), the integer #defines and the signatures of the
functions it calls. This script reads all of them from the header and from each binding's sources and
compares:
  - structs: every header struct has a mirror in every binding, with the same fields in the same order,
    each of a matching type (a field added to the header and missing from a binding is a failure);
  - enums and #defines: every header value exists in every binding under its name, with its value;
    a binding's extra enum member must be an alias of a header value (Python's "bool" is CUDOT_U8);
  - status-name tables written out by hand (Go, Julia) list the header's names in value order;
  - every function a binding declares exists in the header, with the same parameter and return types
    where the binding states them (cgo typedefs, ctypes, P/Invoke, ccall); Go on Windows calls through
    syscall with untyped words, so only its names are checked.
Types are compared as the C ABI sees them: fixed-width integers by width and sign, size_t as size_t, any
data pointer as a pointer (void * stands for any pointee, as C lets it), and pointer-sized integers
(Go's uintptr) for size_t or a pointer. ctypes has one type for c_size_t and c_uint64 on 64-bit
platforms (c_ulong or c_ulonglong), so Python's is read as either of them. Go's two mirrors (the cgo preamble of lib_unix.go, the Go
structs of context.go and lib_windows.go) are checked separately.

usage: scripts/check_bindings_abi.py [--header FILE] [--bindings DIR] [--self-test] [-q]

--self-test first shows that the check can fail: it runs it against modified copies of the header and
of the bindings (a field added to cudot_config, a status value changed, ...) in a temporary folder and
fails unless each change is caught by every mirror it concerns; then it runs the real check.
Exit status: 0 all match, 1 a mismatch (or a self-test change not caught), 2 a file cannot be read.
Needs only the Python standard library.
"""
import argparse
import ctypes
import importlib.util
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Unreadable(Exception):
    """A file the check needs is missing, or no longer has the shape this script reads."""


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise Unreadable(f"{path}: {e.strerror}") from None


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def norm(name):
    """The spelling-free key of a name: CUDOT_ERROR_INVALID_ARGUMENT, StatusInvalidArgument and
    INVALID_ARGUMENT all give 'invalidargument'."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def dtype_key(name):
    """Element-type names of the bindings (Float32, bfloat16, Uint8, _I8) as the header's (f32, bf16, u8, i8)."""
    key = norm(name)
    for long, short in (("bfloat", "bf"), ("float", "f"), ("uint", "u"), ("int", "i")):
        m = re.fullmatch(long + r"(\d+)", key)
        if m:
            return short + m.group(1)
    return key


def struct_key(name):
    """A mirror's struct name as the header's: cd_config, cArrays, NativeArray, _Config, Config -> config."""
    name = re.sub(r"^(cudot_|cd_|Native|_)", "", name)
    name = re.sub(r"^c(?=[A-Z])", "", name)
    return name.lower()


# ---- types, as the C ABI sees them -----------------------------------------------------------------
# Canonical spellings: u8 i8 u32 i32 u64 i64 size f64 char void, a struct's key (config, array, arrays),
# a leading '*' per pointer level, and 'word' for a pointer-sized integer of unstated meaning.

C_TYPES = {"uint32_t": "u32", "int32_t": "i32", "int64_t": "i64", "uint64_t": "u64", "uint8_t": "u8",
           "int8_t": "i8", "size_t": "size", "uintptr_t": "word", "double": "f64", "char": "char",
           "void": "void", "int": "i32", "unsigned": "u32", "cudot_status": "i32", "cudot_ctx": "void"}
C_QUALIFIERS = {"const", "volatile", "struct", "enum", "restrict"}


def c_type(tokens, structs):
    """The canonical type of C declaration tokens (identifiers and '*', the declared name removed)."""
    stars = tokens.count("*")
    words = [t for t in tokens if t != "*" and t not in C_QUALIFIERS]
    if len(words) != 1:
        return "?" + " ".join(tokens)
    word = words[0]
    base = C_TYPES.get(word) or (struct_key(word) if struct_key(word) in structs else "?" + word)
    return "*" * stars + base


def c_declarator(text, structs):
    """(name or None, canonical type) of one C parameter or field declaration."""
    tokens = re.findall(r"\w+|\*", text)
    idents = [t for t in tokens if t != "*" and t not in C_QUALIFIERS]
    name = None
    if len(idents) >= 2 and tokens[-1] != "*":
        name = tokens[-1]
        tokens = tokens[:-1]
    return name, c_type(tokens, structs)


def c_struct_fields(body, structs):
    """[(name, type)] of a C struct body; 'cudot_array x, y;' and 'void *a, *b;' declare several."""
    fields = []
    for decl in filter(None, (d.strip() for d in body.split(";"))):
        parts = [p.strip() for p in decl.split(",")]
        tokens = re.findall(r"\w+|\*", parts[0])
        name = tokens[-1]
        lead = 0  # the stars of the first declarator belong to it, not to the base type
        for t in reversed(tokens[:-1]):
            if t != "*":
                break
            lead += 1
        base = tokens[:len(tokens) - 1 - lead]
        fields.append((name, c_type(base + ["*"] * lead, structs)))
        for p in parts[1:]:
            t = re.findall(r"\w+|\*", p)
            fields.append((t[-1], c_type(base + ["*"] * t.count("*"), structs)))
    return fields


def c_params(text, structs):
    text = text.strip()
    if text in ("", "void"):
        return []
    return [c_declarator(p, structs)[1] for p in text.split(",")]


def compatible(want, got, under_pointer=False):
    """Whether a binding's type `got` passes what the header's `want` is, at the ABI level."""
    if want == got:
        return True
    if got == "u64|size" and want in ("u64", "size"):  # ctypes: c_uint64 is c_size_t (see the docstring)
        return True
    if not under_pointer and got == "word" and (want == "size" or want.startswith("*")):
        return True
    if want.startswith("*") and got.startswith("*"):
        return compatible(want[1:], got[1:], True)
    # Under a pointer, void stands for any pointee (void * passes a double *, byte * a void *).
    return under_pointer and "void" in (want, got) and not want.startswith("*") and not got.startswith("*")


SIZES = {"u8": 1, "i8": 1, "u32": 4, "i32": 4, "u64": 8, "i64": 8, "size": 8, "f64": 8, "word": 8, "u64|size": 8}


def layout(fields, structs):
    """(offsets, size, alignment) of a struct on the 64-bit platforms cudot supports."""
    offsets, offset, align = [], 0, 1
    for _, t in fields:
        if t.startswith("*"):
            size = a = 8
        elif t in structs:
            _, size, a = layout(structs[t], structs)
        else:
            size = a = SIZES[t]
        offset = (offset + a - 1) // a * a
        offsets.append(offset)
        offset += size
        align = max(align, a)
    return offsets, (offset + align - 1) // align * align, align


# ---- the header ----------------------------------------------------------------------------------

class Header:
    """What include/cudot.h declares: enums by group, integer #defines, structs, functions."""

    def __init__(self, path):
        raw = read(path)
        text = strip_c_comments(raw)
        self.path = path
        self.defines = {}
        for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(CUDOT_\w+)[ \t]+(.*)$", text, re.M):
            name, value = m.group(1), m.group(2).strip()
            v = re.fullmatch(r"\(?\s*(-?\d+)[uUlL]*\s*\)?", value)
            if v and not name.startswith("CUDOT_VERSION_"):
                self.defines[name] = int(v.group(1))
        self.enums = {}
        for m in re.finditer(r"\benum\s*(\w*)\s*\{(.*?)\}", text, re.S):
            members, value = {}, -1
            for entry in filter(None, (e.strip() for e in m.group(2).split(","))):
                name, _, expr = entry.partition("=")
                try:
                    value = int(expr.strip(), 0) if expr.strip() else value + 1
                except ValueError:
                    raise Unreadable(f"{path}: {name.strip()} = {expr.strip()} is not an integer this script reads") \
                        from None
                members[name.strip()] = value
            group = self._group(m.group(1), members)
            if group in self.enums:
                raise Unreadable(f"{path}: two enums of group {group}: teach {__file__} the new one")
            self.enums[group] = members
        for group in ("status", "dtype", "memory"):
            if group not in self.enums:
                raise Unreadable(f"{path}: no {group} enum found")
        self.structs = {}
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*\w+\s*;", text, re.S):
            self.structs[struct_key(m.group(1))] = None
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*\w+\s*;", text, re.S):
            self.structs[struct_key(m.group(1))] = c_struct_fields(m.group(2), self.structs)
        self.c_names = {struct_key(n): n for n in re.findall(r"typedef\s+struct\s+(\w+)\s*\{", text)}
        self.functions = {}
        for m in re.finditer(r"CUDOT_API\s+([^;(]*?)\b(cudot_\w+)\s*\(([^)]*)\)\s*;", text, re.S):
            ret = c_type(re.findall(r"\w+|\*", m.group(1)), self.structs)
            self.functions[m.group(2)] = (ret, c_params(m.group(3), self.structs))
        if not self.structs or not self.functions:
            raise Unreadable(f"{path}: no structs or no functions found")
        for name, fields in self.structs.items():
            for field, t in fields:
                base = t.lstrip("*")
                if base.startswith("?") or (base == t and base not in SIZES and base not in self.structs):
                    raise Unreadable(f"{path}: {name}.{field} has a type this script does not know ({t})")
        for name, (ret, params) in self.functions.items():
            if any(t.lstrip("*").startswith("?") for t in [ret] + params):
                raise Unreadable(f"{path}: {name} has a type this script does not know ({ret}, {params})")

    @staticmethod
    def _group(tag, members):
        if tag == "cudot_status":
            return "status"
        if tag == "" and all(n.startswith("CUDOT_MEMORY_") for n in members):
            return "memory"
        if tag == "" and all(re.fullmatch(r"CUDOT_(B?F|I|U)\d+", n) for n in members):
            return "dtype"
        if tag == "cudot_rows_layout":
            return "rows_layout"
        if tag == "cudot_mode":
            return "mode"
        # A new enum: every binding must then mirror it, and this script must learn how each one names it.
        return f"a new enum ({tag or ', '.join(members)}; teach {os.path.basename(__file__)} its group)"

    def key(self, group, name):
        if group == "status":
            return norm(re.sub(r"^CUDOT_(ERROR_)?", "", name))
        if group == "memory":
            return norm(name[len("CUDOT_MEMORY_"):])
        if group == "rows_layout":
            return norm(name[len("CUDOT_ROWS_"):])
        if group == "mode":
            return norm(name[len("CUDOT_MODE_"):])
        return norm(name[len("CUDOT_"):])

    def status_names(self):
        return [n for n, _ in sorted(self.enums["status"].items(), key=lambda kv: kv[1])]


# ---- the mirrors ---------------------------------------------------------------------------------

class Mirror:
    """One binding's copy of (part of) the header. None means "not declared here": not checked."""

    def __init__(self, name, structs=None, enums=None, defines=None, functions=None, names_only=None,
                 status_tables=(), offsets=None):
        self.name = name
        self.structs = structs        # {key: (where, [(field, type)])}
        self.enums = enums            # {group: {key: value}}
        self.defines = defines        # {key: value}
        self.functions = functions    # {cudot name: [(where, ret, [param types]), one per declaration]}
        self.names_only = names_only  # {cudot name: where}: functions called without stated types
        self.status_tables = status_tables  # [(where, first value, [names])]
        self.offsets = offsets        # {key: (size, [offsets])} measured by the binding's own tools


def compare(header, mirror):
    """The mismatches between the header and one mirror, as lines of text."""
    bad = []
    if mirror.structs is not None:
        for key, fields in header.structs.items():
            c_name = header.c_names[key]
            if key not in mirror.structs:
                bad.append(f"no mirror of {c_name}")
                continue
            where, got = mirror.structs[key]
            want_s = ", ".join(f"{n} {t}" for n, t in fields)
            got_s = ", ".join(f"{n} {t}" for n, t in got)
            if len(got) != len(fields) or any(norm(a) != norm(b) or not compatible(t, u)
                                             for (a, t), (b, u) in zip(fields, got)):
                bad.append(f"{c_name} in {where}: has ({got_s}); the header has ({want_s})")
        if mirror.offsets:
            for key, (size, offsets) in mirror.offsets.items():
                if key in header.structs:
                    want_offsets, want_size, _ = layout(header.structs[key], header.structs)
                    if (size, offsets) != (want_size, want_offsets):
                        bad.append(f"{header.c_names[key]}: {size} bytes with fields at {offsets}; the header "
                                   f"lays it out as {want_size} bytes with fields at {want_offsets}")
    if mirror.enums is not None:
        for group, members in header.enums.items():
            got = mirror.enums.get(group, {})
            for name, value in members.items():
                k = header.key(group, name)
                if k not in got:
                    bad.append(f"{group}: no {name} (= {value})")
                elif got[k] != value:
                    bad.append(f"{group}: {name} is {got[k]}, the header says {value}")
            keys = {header.key(group, n) for n in members}
            for k, value in got.items():
                if k not in keys and value not in members.values():
                    bad.append(f"{group}: {k} = {value} is not in the header")
    if mirror.defines is not None:
        for name, value in header.defines.items():
            k = norm(name[len("CUDOT_"):])
            if k not in mirror.defines:
                bad.append(f"no {name} (= {value})")
            elif mirror.defines[k] != value:
                bad.append(f"{name} is {mirror.defines[k]}, the header says {value}")
    for where, first, names in mirror.status_tables:
        want = [n for n in header.status_names() if header.enums["status"][n] >= first]
        if names != want:
            bad.append(f"the status names in {where} are {names}; the header's, from value {first}, are {want}")
    for name, uses in (mirror.functions or {}).items():
        if name not in header.functions:
            bad.append(f"{uses[0][0]} declares {name}, which the header lacks")
            continue
        want_ret, want_params = header.functions[name]
        for where, ret, params in uses:
            if not compatible(want_ret, ret) or len(params) != len(want_params) or not all(
                    compatible(w, g) for w, g in zip(want_params, params)):
                bad.append(f"{name} in {where}: ({', '.join(params)}) -> {ret}; the header has "
                           f"({', '.join(want_params)}) -> {want_ret}")
    for name, where in (mirror.names_only or {}).items():
        if name not in header.functions:
            bad.append(f"{where} calls {name}, which the header lacks")
    return bad


def need(found, what, where):
    if not found:
        raise Unreadable(f"{where}: found no {what} (the file changed shape: update {os.path.basename(__file__)})")
    return found


# ---- Go ------------------------------------------------------------------------------------------

GO_TYPES = {"uint32": "u32", "int32": "i32", "int64": "i64", "uint64": "u64", "uint8": "u8", "int8": "i8",
            "uintptr": "word", "float64": "f64", "unsafe.Pointer": "*void"}


def go_int(text):
    return int(text, 0)


def go_mirrors(root, header):
    d = os.path.join(root, "go")
    unix_path = os.path.join(d, "lib_unix.go")
    unix = read(unix_path)
    m = re.search(r"/\*(.*?)\*/\s*import \"C\"", unix, re.S)
    preamble = strip_c_comments(need(m, "cgo preamble", unix_path).group(1))
    cgo_structs = {}
    for m in re.finditer(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", preamble, re.S):
        key = struct_key(m.group(2))
        if key in header.structs:
            cgo_structs[key] = ("lib_unix.go " + m.group(2), c_struct_fields(m.group(1), header.structs))
    typedefs = {m.group(2): (c_type(re.findall(r"\w+|\*", m.group(1)), header.structs),
                             c_params(m.group(3), header.structs))
                for m in re.finditer(r"typedef\s+([^;()]+?)\s*\(\s*\*\s*(cd_\w+_fn)\s*\)\s*\(([^)]*)\)\s*;", preamble)}
    functions = {}
    for m in re.finditer(r"static\s+(cd_\w+_fn)\s+p_(\w+)\s*;", preamble):
        if m.group(1) not in typedefs:
            raise Unreadable(f"{unix_path}: p_{m.group(2)} has the unknown type {m.group(1)}")
        ret, params = typedefs[m.group(1)]
        functions["cudot_" + m.group(2)] = [(f"lib_unix.go {m.group(1)}", ret, params)]
    need(functions, "function pointer (static cd_*_fn p_*)", unix_path)

    go_structs = {}
    sources = {}
    for name in ("context.go", "lib_windows.go"):
        text = read(os.path.join(d, name))
        sources[name] = text
        for m in re.finditer(r"^type\s+(\w+)\s+struct\s*\{(.*?)^\}", text, re.S | re.M):
            key = struct_key(m.group(1))
            if key not in header.structs:
                continue
            fields = []
            for line in m.group(2).splitlines():
                line = line.split("//")[0].strip()
                if not line:
                    continue
                names, _, t = line.rpartition(" ")
                t = GO_TYPES.get(t) or (struct_key(t) if struct_key(t) in header.structs else "?" + t)
                fields += [(n.strip(), t) for n in names.split(",")]
            go_structs[key] = (f"{name} {m.group(1)}", fields)
    procs = {n: "lib_windows.go" for n in re.findall(r"\"(cudot_\w+)\"", sources["lib_windows.go"])}
    need(procs, "FindProc names", "lib_windows.go")

    # Constants: typed ones (Status, DType, Memory, rowsLayout) are the enums, untyped ones the #defines.
    groups = {"Status": "status", "DType": "dtype", "Memory": "memory", "rowsLayout": "rows_layout", "Mode": "mode"}
    enums, defines, tables = {g: {} for g in groups.values()}, {}, []
    for name in sorted(os.listdir(d)):
        if not name.endswith(".go") or name.endswith("_test.go"):
            continue
        text = read(os.path.join(d, name))
        blocks = re.findall(r"^const\s*\((.*?)^\)", text, re.S | re.M)
        lines = [l for b in blocks for l in b.splitlines()] + re.findall(r"^const\s+([^(].*)$", text, re.M)
        for line in lines:
            m = re.match(r"\s*(\w+)\s*(\w+)?\s*=\s*(-?(?:0x[0-9a-fA-F]+|\d+))\b", line.split("//")[0])
            if not m:
                continue
            ident, typ, value = m.group(1), m.group(2), go_int(m.group(3))
            if typ in groups:
                group = groups[typ]
                key = dtype_key(ident) if group == "dtype" else norm(re.sub(r"^(Status|rows|Mode)", "", ident))
                enums[group][key] = value
            elif typ is None:
                defines[norm(ident)] = value
        m = re.search(r"var\s+statusNames\s*=\s*\[\.\.\.\]string\s*\{(.*?)\}", text, re.S)
        if m:
            tables.append((f"{name} statusNames", 0, re.findall(r"\"(\w+)\"", m.group(1))))
    need(tables, "statusNames table", d)
    return [Mirror("go (cgo preamble, lib_unix.go)", structs=cgo_structs, functions=functions),
            Mirror("go (Go structs, context.go and lib_windows.go)", structs=go_structs, names_only=procs),
            Mirror("go (constants)", enums=enums, defines=defines, status_tables=tables)]


# ---- Python --------------------------------------------------------------------------------------

def python_mirror(root, header):
    d = os.path.join(root, "python", "cudot")
    lib_path = os.path.join(d, "_lib.py")
    read(lib_path)
    # _lib.py imports only the standard library (setup.py loads it alone too): load it and read its
    # ctypes structures and declared signatures as ctypes itself has them.
    sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
    spec = importlib.util.spec_from_file_location("cudot_abi_check_lib", lib_path)
    lib = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lib)
    structure_types = {name: obj for name, obj in vars(lib).items()
                       if isinstance(obj, type) and issubclass(obj, ctypes.Structure)}
    keys = {obj: struct_key(name) for name, obj in structure_types.items()}
    # On 64-bit platforms ctypes.c_size_t and ctypes.c_uint64 are one type: either C type matches it.
    size_t = "u64|size" if ctypes.c_size_t is ctypes.c_uint64 else "size"
    scalars = {ctypes.c_uint64: "u64", ctypes.c_uint32: "u32", ctypes.c_int32: "i32", ctypes.c_int64: "i64",
               ctypes.c_size_t: size_t,
               ctypes.c_void_p: "*void", ctypes.c_double: "f64", ctypes.c_char_p: "*char", ctypes.c_uint8: "u8",
               ctypes.c_int8: "i8", ctypes.c_char: "char"}

    def py_type(t):
        if t is None:
            return "void"
        if t in scalars:
            return scalars[t]
        if t in keys:
            return keys[t]
        if issubclass(t, ctypes._Pointer):
            return "*" + py_type(t._type_)
        return "?" + t.__name__

    structs, offsets = {}, {}
    for name, obj in structure_types.items():
        key = struct_key(name)
        if key in header.structs:
            structs[key] = (f"_lib.py {name}", [(f, py_type(t)) for f, t, *_ in obj._fields_])
            offsets[key] = (ctypes.sizeof(obj), [getattr(obj, f).offset for f, *_ in obj._fields_])

    class Recorder:
        def __init__(self):
            self.functions = {}

        def __getattr__(self, name):
            return self.functions.setdefault(name, type("Fn", (), {})())

    rec = Recorder()
    lib._declare(rec)
    functions = {name: [("_lib.py _declare", py_type(fn.restype), [py_type(a) for a in fn.argtypes])]
                 for name, fn in rec.functions.items()}
    need(functions, "signatures in _declare", lib_path)

    errors = read(os.path.join(d, "_errors.py"))
    m = need(re.search(r"class Status\(enum\.IntEnum\):(.*?)\n\n", errors, re.S), "class Status", "_errors.py")
    status = {norm(n): int(v) for n, v in re.findall(r"^\s+(\w+)\s*=\s*(-?\d+)", m.group(1), re.M)}
    types_src = read(os.path.join(d, "_types.py"))
    dtypes = {dtype_key(n): int(v) for n, v in re.findall(r"ElementType\(\"(\w+)\",\s*(\d+)", types_src)}
    context = read(os.path.join(d, "_context.py"))
    m = need(re.search(r"^MEMORY_NAMES\s*=\s*\(([^)]*)\)", context, re.M), "MEMORY_NAMES", "_context.py")
    memory = {norm(n): i for i, n in enumerate(re.findall(r"\"(\w+)\"", m.group(1)))}
    defines = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".py"):
            text = read(os.path.join(d, name))
            for n, v in re.findall(r"^(_?[A-Z][A-Z0-9_]*)\s*=\s*(-?\d+)\b(?!\s*[*+/-])", text, re.M):
                defines[norm(n)] = int(v)
    layouts = {norm(n): int(v) for n, v in re.findall(r"^ROWS_(\w+)\s*=\s*(\d+)", read(lib_path), re.M)}
    modes = {norm(n): int(v) for n, v in re.findall(r"^MODE_(\w+)\s*=\s*(\d+)", read(lib_path), re.M)}
    return [Mirror("python (cudot/_lib.py, _errors.py, _types.py, _context.py)", structs=structs,
                   enums={"status": status, "dtype": dtypes, "memory": memory, "rows_layout": layouts,
                          "mode": modes},
                   defines=defines,
                   functions=functions, offsets=offsets)]


# ---- C# ------------------------------------------------------------------------------------------

CS_TYPES = {"uint": "u32", "int": "i32", "long": "i64", "ulong": "u64", "byte": "u8", "sbyte": "i8",
            "double": "f64", "IntPtr": "*void", "UIntPtr": "size", "void": "void"}


def cs_type(text, header):
    text = text.strip()
    modifier = re.match(r"(out|ref|in)\s+", text)
    stars = 1 if modifier else 0
    if modifier:
        text = text[modifier.end():]
    text = re.sub(r"\[[^\]]*\]\s*", "", text)  # attributes such as [MarshalAs(...)]
    tokens = text.split()
    t = tokens[0] if tokens else ""
    stars += t.count("*")
    t = t.rstrip("*")
    base = CS_TYPES.get(t) or (struct_key(t) if struct_key(t) in header.structs else "?" + t)
    return "*" * stars + base


def csharp_mirror(root, header):
    d = os.path.join(root, "csharp", "src")
    texts = {name: strip_c_comments(read(os.path.join(d, name)))
             for name in sorted(os.listdir(d)) if name.endswith(".cs")}
    structs, functions, enums, defines = {}, {}, {}, {}
    groups = {"Status": "status", "DType": "dtype", "Memory": "memory", "RowsLayout": "rows_layout", "Mode": "mode"}
    for name, text in texts.items():
        sequential = r"\[StructLayout\(LayoutKind\.Sequential\)\]\s*(?:\w+\s+)*struct\s+(\w+)\s*\{(.*?)\}"
        for m in re.finditer(sequential, text, re.S):
            key = struct_key(m.group(1))
            if key not in header.structs:
                continue
            fields = []
            for decl in re.findall(r"public\s+([^;]+);", m.group(2)):
                t, _, names = decl.strip().partition(" ")
                fields += [(n.strip(), cs_type(t, header)) for n in names.split(",")]
            structs[key] = (f"{name} {m.group(1)}", fields)
        for m in re.finditer(r"static\s+extern\s+(?:unsafe\s+)?([\w\*]+)\s+(cudot_\w+)\s*\(([^)]*)\)", text):
            params = [cs_type(" ".join(p.split()[:-1]), header) for p in m.group(3).split(",") if p.strip()]
            functions.setdefault(m.group(2), []).append((f"{name} DllImport", cs_type(m.group(1), header), params))
        for m in re.finditer(r"(?:public|internal)\s+enum\s+(\w+)\s*\{(.*?)\}", text, re.S):
            group = groups.get(m.group(1))
            if group:
                members = re.findall(r"(\w+)\s*=\s*(-?\d+)", m.group(2))
                enums[group] = {(dtype_key(n) if group == "dtype" else norm(n)): int(v) for n, v in members}
        for n, v in re.findall(r"public\s+const\s+(?:int|uint|long|ulong)\s+(\w+)\s*=\s*(-?\d+)[uUlL]*\s*;", text):
            defines[norm(n)] = int(v)
    need(functions, "DllImport of cudot_*", d)
    return [Mirror("csharp (src/Native.cs, Types.cs, constants)", structs=structs, enums=enums,
                   defines=defines, functions=functions)]


# ---- Julia ---------------------------------------------------------------------------------------

JL_TYPES = {"UInt32": "u32", "Int32": "i32", "Int64": "i64", "UInt64": "u64", "UInt8": "u8", "Int8": "i8",
            "Csize_t": "size", "Cint": "i32", "Cuint": "u32", "Cdouble": "f64", "Float64": "f64",
            "Cvoid": "void", "Cstring": "*char", "Cchar": "char", "UInt": "word"}


def jl_type(text, header):
    text = text.strip()
    m = re.fullmatch(r"(Ptr|Ref)\{(.*)\}", text)
    if m:
        return "*" + jl_type(m.group(2), header)
    return JL_TYPES.get(text) or (struct_key(text) if struct_key(text) in header.structs else "?" + text)


def jl_split(text):
    """Top-level comma-separated items (commas inside {} stay)."""
    items, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    return [i.strip() for i in items if i.strip()]


def julia_mirror(root, header):
    d = os.path.join(root, "julia", "src")
    texts = {name: re.sub(r"#[^\n]*", "", read(os.path.join(d, name)))
             for name in sorted(os.listdir(d)) if name.endswith(".jl")}
    structs, functions, names, defines, tables = {}, {}, {}, {}, []
    enums = {"status": {}, "dtype": {}, "memory": {}, "rows_layout": {}, "mode": {}}

    def use(name, where, ret, params):  # every call is checked: two calls of one function may differ
        functions.setdefault("cudot_" + name, []).append(
            (where, jl_type(ret, header), [jl_type(p, header) for p in params]))

    for name, text in texts.items():
        for m in re.finditer(r"^struct\s+(\w+)\s*\n(.*?)^end", text, re.S | re.M):
            key = struct_key(m.group(1))
            if key in header.structs:
                fields = [(f, jl_type(t, header)) for f, t in re.findall(r"^\s*(\w+)::(\S+)\s*$", m.group(2), re.M)]
                structs[key] = (f"{name} {m.group(1)}", fields)
        for m in re.finditer(r"ccall\(\s*h\.(\w+)\s*,\s*([\w{}]+)\s*,\s*\(([^()]*)\)", text):
            use(m.group(1), f"{name} ccall(h.{m.group(1)})", m.group(2), jl_split(m.group(3)))
        for m in re.finditer(r"_c_(\w+)\([^)]*\)\s*=\s*ccall\(f,\s*([\w{}]+),\s*\(([^()]*)\)", text):
            use(m.group(1), f"{name} _c_{m.group(1)}", m.group(2), jl_split(m.group(3)))
        for m in re.finditer(r"_c_(\w+)\([^)]*\)\s*=\s*@ccall\s+gc_safe=true\s+\$f\((.*?)\)::(\w+)", text, re.S):
            params = [p.split("::", 1)[1] for p in jl_split(m.group(2))]
            use(m.group(1), f"{name} _c_{m.group(1)} (@ccall)", m.group(3), params)
        for n in re.findall(r":(cudot_\w+)", text):
            names[n] = f"{name} dlsym"
        for n, v in re.findall(r"^const\s+(\w+)\s*=\s*(?:Int32\(|UInt32\()?\s*(-?\d+)\s*\)?\s*$", text, re.M):
            if n == "OK" or n.startswith("ERROR_"):
                enums["status"][norm(re.sub(r"^ERROR_", "", n))] = int(v)
            elif re.fullmatch(r"_(B?F|I|U)\d+", n):
                enums["dtype"][dtype_key(n)] = int(v)
            elif n.startswith("_ROWS_"):
                enums["rows_layout"][norm(n[len("_ROWS_"):])] = int(v)
            elif n.startswith("_MODE_"):
                enums["mode"][norm(n[len("_MODE_"):])] = int(v)
            else:
                defines[norm(n)] = int(v)
        m = re.search(r"^const\s+_MEMORY\s*=\s*\(([^)]*)\)", text, re.M)
        if m:
            enums["memory"] = {norm(s): i for i, s in enumerate(re.findall(r":(\w+)", m.group(1)))}
        m = re.search(r"^const\s+_STATUS_NAMES\s*=\s*\(([^)]*)\)", text, re.M)
        if m:
            tables.append((f"{name} _STATUS_NAMES", 1, re.findall(r":(\w+)", m.group(1))))
    need(functions, "ccall of a cudot function", d)
    need(tables, "_STATUS_NAMES", d)
    return [Mirror(JULIA, structs=structs, enums=enums, defines=defines,
                   functions=functions, names_only=names, status_tables=tables)]


# ---- running it ----------------------------------------------------------------------------------

def check(header_path, bindings, show="all"):
    """{mirror name: [mismatches]} for every mirror. show: "all" prints a line per mirror, "fail" the
    mismatches only, "none" nothing."""
    header = Header(header_path)
    results = {}
    for make in (go_mirrors, python_mirror, csharp_mirror, julia_mirror):
        for mirror in make(bindings, header):
            results[mirror.name] = compare(header, mirror)
    for name, bad in results.items():
        if bad and show != "none":
            print(f"FAIL {name}:")
            for line in bad:
                print(f"       {line}")
        elif show == "all":
            print(f"ok   {name}")
    return results


GO_CGO, GO_GO, GO_CONST = ("go (cgo preamble, lib_unix.go)", "go (Go structs, context.go and lib_windows.go)",
                           "go (constants)")
PYTHON = "python (cudot/_lib.py, _errors.py, _types.py, _context.py)"
CSHARP = "csharp (src/Native.cs, Types.cs, constants)"
JULIA = "julia (src/Cudot.jl, src/arrays.jl, src/rows.jl, src/context_rows.jl)"
STRUCT_MIRRORS = (GO_CGO, GO_GO, PYTHON, CSHARP, JULIA)
CONSTANT_MIRRORS = (GO_CONST, PYTHON, CSHARP, JULIA)
SIGNATURE_MIRRORS = (GO_CGO, PYTHON, CSHARP, JULIA)

# (what, file under the copy, (old, new), the mirrors that must each report it). Header changes first.
HEADER_CHANGES = [
    ("a field added at the end of cudot_config", "cudot.h",
     ("    int32_t  reserved; /* must be 0 */", "    int32_t  reserved; /* must be 0 */\n    int32_t added_option;"),
     STRUCT_MIRRORS),
    ("a field added after cudot_config.rows", "cudot.h",
     ("    uint64_t rows;", "    uint64_t rows;\n    int32_t added_option;"), STRUCT_MIRRORS),
    ("a field added in the middle of cudot_config", "cudot.h",
     ("    uint32_t wait_ms;", "    uint32_t wait_ms;\n    int32_t added_option;"), STRUCT_MIRRORS),
    ("the type of cudot_config.rows changed", "cudot.h", ("    uint64_t rows;", "    uint32_t rows;"), STRUCT_MIRRORS),
    ("a field added at the end of cudot_rows", "cudot.h",
     ("    int32_t reserved;      /* must be 0 */\n} cudot_rows;",
      "    int32_t reserved;      /* must be 0 */\n    int32_t added_option;\n} cudot_rows;"), STRUCT_MIRRORS),
    ("the type of cudot_rows.mode changed", "cudot.h",
     ("    int32_t mode;          /* a cudot_mode: every row's", "    int64_t mode;          /* a cudot_mode: every row's"),
     STRUCT_MIRRORS),
    ("a field added in the middle of cudot_arrays", "cudot.h",
     ("    void *x_ready;      /* NULL", "    void *added_ready;\n    void *x_ready;      /* NULL"), STRUCT_MIRRORS),
    ("the type of cudot_array.stride changed", "cudot.h",
     ("    int64_t stride;", "    int32_t stride;"), STRUCT_MIRRORS),
    ("a status value changed", "cudot.h",
     ("CUDOT_ERROR_INTERNAL = 6", "CUDOT_ERROR_INTERNAL = 7"), CONSTANT_MIRRORS),
    ("a status added", "cudot.h",
     ("CUDOT_ERROR_INTERNAL = 6 ", "CUDOT_ERROR_INTERNAL = 6, CUDOT_ERROR_ADDED = 7 "), CONSTANT_MIRRORS),
    ("an element type's value changed", "cudot.h", ("CUDOT_U8 = 6", "CUDOT_U8 = 7"), CONSTANT_MIRRORS),
    ("a memory strategy added", "cudot.h",
     ("    CUDOT_MEMORY_HOST = 4\n", "    CUDOT_MEMORY_HOST = 4,\n    CUDOT_MEMORY_ADDED = 5\n"), CONSTANT_MIRRORS),
    ("a #define's value changed", "cudot.h",
     ("#define CUDOT_TILE_ELEMENTS 8192", "#define CUDOT_TILE_ELEMENTS 4096"), CONSTANT_MIRRORS),
    ("a #define added", "cudot.h",
     ("#define CUDOT_DEVICE_NONE (-2)", "#define CUDOT_DEVICE_NONE (-2)\n#define CUDOT_ADDED_LIMIT 7"),
     CONSTANT_MIRRORS),
    ("a parameter's type changed", "cudot.h",
     ("cudot_dot_n(cudot_ctx *ctx, size_t n, double *result)",
      "cudot_dot_n(cudot_ctx *ctx, uint32_t n, double *result)"),
     SIGNATURE_MIRRORS),
    ("a function renamed", "cudot.h",
     ("cudot_get_memory(const cudot_ctx *ctx", "cudot_get_placement(const cudot_ctx *ctx"),
     SIGNATURE_MIRRORS + (GO_GO,)),
]
BINDING_CHANGES = [
    ("Python's Config without wait_ms", "python/cudot/_lib.py", ("(\"wait_ms\", ctypes.c_uint32), ", ""), (PYTHON,)),
    ("Python's Config without rows", "python/cudot/_lib.py", (", (\"rows\", ctypes.c_uint64)", ""), (PYTHON,)),
    ("Go's cgo cd_config without rows", "go/lib_unix.go",
     (" uint64_t rows; int32_t mode; int32_t reserved; } cd_config;", " int32_t mode; int32_t reserved; } cd_config;"),
     (GO_CGO,)),
    ("Go's cgo cd_config without mode", "go/lib_unix.go", (" int32_t mode; int32_t reserved; } cd_config;",
                                                           " int32_t reserved; } cd_config;"), (GO_CGO,)),
    ("Go's config without mode", "go/context.go", ("\tmode                          int32\n", ""), (GO_GO,)),
    ("Julia's _Config without mode", "julia/src/Cudot.jl", ("    mode::Int32", ""), (JULIA,)),
    ("Python's Config without mode", "python/cudot/_lib.py",
     ("(\"rows\", ctypes.c_uint64), (\"mode\", ctypes.c_int32),", "(\"rows\", ctypes.c_uint64),"), (PYTHON,)),
    ("C#'s NativeConfig without Mode", "csharp/src/Native.cs", ("        public int Mode; ", "        "), (CSHARP,)),
    ("Go's cgo cd_rows without mode", "go/lib_unix.go", ("\tint32_t mode, reserved;\n} cd_rows;", "\tint32_t reserved;\n} cd_rows;"),
     (GO_CGO,)),
    ("Go's cRows without mode", "go/lib_windows.go", ("\tmode, reserved         int32\n}", "\treserved               int32\n}"),
     (GO_GO,)),
    ("C#'s NativeRows without Mode", "csharp/src/Native.cs",
     ("        public int Mode, Reserved; // a Mode: every row's", "        public int Reserved; // a Mode: every row's"), (CSHARP,)),
    ("Julia's _Rows without mode", "julia/src/arrays.jl",
     ("    mode::Int32                  # _MODE_CANONICAL, or _MODE_EXACT (exact=true; since 1.14)\n", ""), (JULIA,)),
    ("Python's Rows without mode", "python/cudot/_lib.py",
     ("(\"y_ready\", ctypes.c_void_p), (\"mode\", ctypes.c_int32), (\"reserved\", ctypes.c_int32)]",
      "(\"y_ready\", ctypes.c_void_p), (\"reserved\", ctypes.c_int32)]"), (PYTHON,)),
    ("Go's config without rows", "go/context.go", ("\trows                          uint64\n", ""), (GO_GO,)),
    ("C#'s NativeConfig without Rows", "csharp/src/Native.cs", ("        public ulong Rows;", ""), (CSHARP,)),
    ("Julia's _Config without rows", "julia/src/Cudot.jl", ("    rows::UInt64", ""), (JULIA,)),
    ("Python's cudot_dot_each_row signature", "python/cudot/_lib.py",
     ("\"cudot_dot_each_row\": (c_int, [c_void_p, c_size_t, c_size_t,",
      "\"cudot_dot_each_row\": (c_int, [c_void_p, c_size_t, ctypes.c_uint32,"), (PYTHON,)),
    ("Julia's cudot_dot_each_row signature", "julia/src/context_rows.jl",
     ("(Ptr{Cvoid}, Csize_t, Csize_t, Ptr{Cdouble}), p, rows", "(Ptr{Cvoid}, Csize_t, Cuint, Ptr{Cdouble}), p, rows"),
     (JULIA,)),
    ("Go's cgo cudot_dot_each_row signature", "go/lib_unix.go",
     ("(*cd_dot_each_row_fn)(void *, size_t, size_t, double *)", "(*cd_dot_each_row_fn)(void *, size_t, uint32_t, double *)"),
     (GO_CGO,)),
    ("C#'s cudot_get_rows signature", "csharp/src/Native.cs",
     ("cudot_get_rows(IntPtr ctx, out UIntPtr rows, out UIntPtr n)", "cudot_get_rows(IntPtr ctx, out UIntPtr rows, out uint n)"),
     (CSHARP,)),
    ("Go's cgo cd_config without wait_ms", "go/lib_unix.go", (" uint32_t wait_ms; uint64_t rows; int32_t mode;",
                                                              " uint64_t rows; int32_t mode;"), (GO_CGO,)),
    ("Go's config without waitMS", "go/context.go", ("\twaitMS                        uint32\n", ""), (GO_GO,)),
    ("C#'s NativeConfig without WaitMs", "csharp/src/Native.cs", ("        public uint WaitMs;", ""), (CSHARP,)),
    ("Julia's _Config without wait_ms", "julia/src/Cudot.jl", ("    wait_ms::UInt32", ""), (JULIA,)),
    ("Go's StatusCUDA value", "go/errors.go", ("StatusCUDA            Status = 5", "StatusCUDA            Status = 9"),
     (GO_CONST,)),
    ("C#'s Status.Cuda value", "csharp/src/Types.cs", ("Cuda = 5,", "Cuda = 9,"), (CSHARP,)),
    ("Julia's status-name table", "julia/src/Cudot.jl", (":CUDOT_ERROR_CUDA,", ":CUDOT_ERROR_GPU,"), (JULIA,)),
    ("Python's cudot_dot_n signature", "python/cudot/_lib.py",
     ("\"cudot_dot_n\": (c_int, [c_void_p, c_size_t,", "\"cudot_dot_n\": (c_int, [c_void_p, ctypes.c_int32,"),
     (PYTHON,)),
    ("C#'s cudot_dot_n signature", "csharp/src/Native.cs",
     ("cudot_dot_n(IntPtr ctx, UIntPtr n,", "cudot_dot_n(IntPtr ctx, int n,"),
     (CSHARP,)),
]


def self_test(header_path, bindings, quiet=False):
    """Run each change on a fresh copy; return the changes some concerned mirror did not report."""
    missed = []
    with tempfile.TemporaryDirectory(prefix="cudot-abi-selftest-") as tmp:
        for what, target, (old, new), mirrors in HEADER_CHANGES + BINDING_CHANGES:
            work = os.path.join(tmp, "case")
            shutil.rmtree(work, ignore_errors=True)
            os.makedirs(work)
            copy_header = os.path.join(work, "cudot.h")
            shutil.copy(header_path, copy_header)
            copy_bindings = os.path.join(work, "bindings")
            for lang, sub in (("go", ""), ("python", "cudot"), ("csharp", "src"), ("julia", "src")):
                src = os.path.join(bindings, lang, sub)
                shutil.copytree(src, os.path.join(copy_bindings, lang, sub),
                                ignore=shutil.ignore_patterns("*_test.go", "__pycache__", "testdata", "example",
                                                              "internal"))
            path = copy_header if target == "cudot.h" else os.path.join(copy_bindings, target)
            text = read(path)
            if text.count(old) != 1:
                missed.append(f"{what}: the text to change ({old!r}) is not in {target} exactly once")
                continue
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.replace(old, new))
            try:
                results = check(copy_header, copy_bindings, show="none")
            except Unreadable as e:
                missed.append(f"{what}: the check could not read the copy ({e})")
                continue
            silent = [m for m in mirrors if not results.get(m)]
            others = [m for m, bad in results.items() if bad and m not in mirrors]
            if silent:
                missed.append(f"{what}: not reported by {', '.join(silent)}")
            elif others:
                missed.append(f"{what}: also reported by {', '.join(others)}, which it does not concern")
            else:
                if not quiet:
                    print(f"ok   self-test: {what}: reported by {len(mirrors)} mirror(s)")
    return missed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--header", default=os.path.join(ROOT, "include", "cudot.h"))
    parser.add_argument("--bindings", default=os.path.join(ROOT, "bindings"))
    parser.add_argument("--self-test", action="store_true", help="first show that changes are caught")
    parser.add_argument("-q", "--quiet", action="store_true", help="print mismatches only")
    args = parser.parse_args()
    try:
        if args.self_test:
            missed = self_test(args.header, args.bindings, args.quiet)
            for line in missed:
                print(f"FAIL self-test: {line}")
            if missed:
                print("check_bindings_abi: the self-test shows changes the check would miss")
                return 1
        results = check(args.header, args.bindings, show="fail" if args.quiet else "all")
    except Unreadable as e:
        print(f"check_bindings_abi: {e}")
        return 2
    if any(results.values()):
        print("check_bindings_abi: a binding's mirror differs from include/cudot.h (above)")
        return 1
    header = Header(args.header)
    sizes = ", ".join(f"{header.c_names[k]} {layout(f, header.structs)[1]} bytes" for k, f in header.structs.items())
    print(f"check_bindings_abi: {len(results)} mirrors match include/cudot.h ({sizes} on 64-bit platforms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
