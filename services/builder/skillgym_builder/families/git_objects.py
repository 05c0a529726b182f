"""A git repository written byte for byte without the git program: objects (blobs, trees,
commits) go into one pack with its v2 index, refs into ``packed-refs``, and the checked-out
tree into a v2 index file whose stat fields are zero (git re-hashes those files once and
refreshes them). Everything here is a pure function of its input, so an instance's repository
is identical on every build."""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass

OBJECT_TYPES = {"commit": 1, "tree": 2, "blob": 3}
FILE_MODE = 0o100644


def object_id(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


@dataclass(frozen=True)
class Person:
    name: str
    email: str
    timestamp: int  # unix seconds
    offset: str  # "+0200"

    def line(self) -> str:
        return f"{self.name} <{self.email}> {self.timestamp} {self.offset}"


class ObjectStore:
    """The objects of one repository, by id (content addressed: adding twice is harmless)."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[str, bytes]] = {}

    def add(self, kind: str, data: bytes) -> str:
        oid = object_id(kind, data)
        self.objects.setdefault(oid, (kind, data))
        return oid

    def tree(self, files: dict[str, bytes]) -> str:
        """The id of the tree holding ``files`` (path -> content, all regular files)."""
        children: dict[str, dict[str, bytes]] = {}
        entries: list[tuple[bytes, bytes]] = []
        for path, data in files.items():
            head, sep, rest = path.partition("/")
            if sep:
                children.setdefault(head, {})[rest] = data
            else:
                entries.append((head.encode(), b"100644 " + head.encode() + b"\0" + bytes.fromhex(self.add("blob", data))))
        for name, sub in children.items():
            # git orders a subtree as if its name ended with "/"
            entries.append(((name + "/").encode(), b"40000 " + name.encode() + b"\0" + bytes.fromhex(self.tree(sub))))
        return self.add("tree", b"".join(entry for _, entry in sorted(entries)))

    def commit(self, tree: str, parents: list[str], author: Person, committer: Person, message: str) -> str:
        lines = [f"tree {tree}", *(f"parent {p}" for p in parents), f"author {author.line()}",
                 f"committer {committer.line()}"]
        return self.add("commit", ("\n".join(lines) + "\n\n" + message.rstrip("\n") + "\n").encode())


def _pack_header(kind: int, size: int) -> bytes:
    first = (kind << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(first | 0x80)
        first, size = size & 0x7F, size >> 7
    out.append(first)
    return bytes(out)


def pack(store: ObjectStore) -> tuple[str, bytes, bytes]:
    """(pack name, ``.pack`` bytes, ``.idx`` bytes) holding every object undeltified."""
    ids = sorted(store.objects)
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(ids)))
    offsets, crcs = {}, {}
    for oid in ids:
        kind, data = store.objects[oid]
        record = _pack_header(OBJECT_TYPES[kind], len(data)) + zlib.compress(data, 6)
        offsets[oid], crcs[oid] = len(body), zlib.crc32(record)
        body += record
    checksum = hashlib.sha1(body).digest()
    packed = bytes(body) + checksum
    fanout = [sum(1 for oid in ids if int(oid[:2], 16) <= byte) for byte in range(256)]
    idx = bytearray(b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout))
    idx += b"".join(bytes.fromhex(oid) for oid in ids)
    idx += b"".join(struct.pack(">I", crcs[oid]) for oid in ids)
    idx += b"".join(struct.pack(">I", offsets[oid]) for oid in ids)
    idx += checksum
    idx += hashlib.sha1(idx).digest()
    return checksum.hex(), packed, bytes(idx)


def index_file(store: ObjectStore, files: dict[str, bytes]) -> bytes:
    """A v2 index of ``files`` as checked out, stat data left zero."""
    entries = bytearray()
    for path in sorted(files, key=lambda p: p.encode()):
        name = path.encode()
        oid = store.add("blob", files[path])
        entry = struct.pack(">10I", 0, 0, 0, 0, 0, 0, FILE_MODE, 0, 0, len(files[path])) + bytes.fromhex(oid)
        entry += struct.pack(">H", min(len(name), 0xFFF)) + name
        entries += entry + b"\0" * (8 - len(entry) % 8)
    body = b"DIRC" + struct.pack(">II", 2, len(files)) + bytes(entries)
    return body + hashlib.sha1(body).digest()


CONFIG = """[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
\tlogallrefupdates = true
[gc]
\tauto = 0
"""


def repository(store: ObjectStore, refs: dict[str, str], current: str, checkout: dict[str, bytes],
               prefix: str) -> tuple[dict[str, bytes], list[str]]:
    """(workspace files, protected paths): the work tree of ``checkout`` and its ``.git`` with
    ``current`` (a branch name under refs/heads) checked out. The pack is protected: the
    history it holds must never change."""
    git = f"{prefix}/.git"
    index = index_file(store, checkout)
    name, packed, idx = pack(store)
    others = sorted((ref, oid) for ref, oid in refs.items() if ref != f"refs/heads/{current}")
    files = {f"{prefix}/{path}": data for path, data in checkout.items()}
    files.update({
        f"{git}/HEAD": f"ref: refs/heads/{current}\n".encode(),
        f"{git}/config": CONFIG.encode(),
        f"{git}/description": b"Unnamed repository; edit this file 'description' to name the repository.\n",
        f"{git}/info/exclude": b"# git ls-files --others --exclude-from=.git/info/exclude\n",
        f"{git}/refs/heads/{current}": (refs[f"refs/heads/{current}"] + "\n").encode(),
        f"{git}/packed-refs": ("# pack-refs with: peeled fully-peeled sorted \n"
                               + "".join(f"{oid} {ref}\n" for ref, oid in others)).encode(),
        f"{git}/index": index,
        f"{git}/objects/pack/pack-{name}.pack": packed,
        f"{git}/objects/pack/pack-{name}.idx": idx,
    })
    return files, [f"{git}/objects/pack/pack-{name}.pack", f"{git}/objects/pack/pack-{name}.idx"]
