# SPDX-License-Identifier: GPL-2.0-or-later
#
# vsmp: the virtual Halo's MCUmgr (SMP) server over MCUboot image slots, as Zephyr's mcumgr and
# MCUboot behave (halo-protocol.md "Firmware update"; Zephyr's SMP protocol and img_mgmt docs;
# MCUboot's design document). Used by virtual_frame.py --halo, which owns the GATT side, the
# reset (links drop, back after a delay) and the Lua VM. Test-only; written from the protocol
# facts, no code copied.
#
# - Frames: 8-byte header (op bits 0-2, SMP version bits 3-4, flags, length u16 BE, group u16
#   BE, seq, id) + CBOR map. Requests may span several writes (joined by the header's length);
#   a frame longer than buf_size is dropped unanswered, as Zephyr's reassembly drops it.
# - Answers in the request's version: group errors as `rc` (v1, translated as Zephyr's
#   translate_error does) or `err {group, rc}` (v2); generic errors (unknown group/command,
#   undecodable request) as `rc` in both. Maps and arrays go out indefinite-length, as zcbor
#   encodes them without ZCBOR_CANONICAL.
# - Slots (single image, swap mode): slot 0 runs, slot 1 takes uploads. Upload session by
#   sha+len (RAM: lost at a reset, kept over a link drop). MCUboot at every boot: a pending
#   test is swapped in unconfirmed; a running unconfirmed image is swapped back (revert).
# - Slots persist in DIR (slot0.bin, slot1.bin, state.json): a new process is a power-on.

import hashlib
import json
import os
import struct

import cbor2

SMP_SERVICE = "8d53dc1d-1db7-4cd3-868b-8a527460aa84"
SMP_CHAR = "da2e7828-fbce-4e01-ae9e-261174997c48"

OP_READ, OP_READ_RSP, OP_WRITE, OP_WRITE_RSP = 0, 1, 2, 3
GROUP_OS, GROUP_IMAGE = 0, 1
OS_ECHO, OS_RESET, OS_PARAMS = 0, 5, 6
IMG_STATE, IMG_UPLOAD, IMG_ERASE = 0, 1, 5

# mcumgr_err_t
EOK, EUNKNOWN, ENOMEM, EINVAL, ENOENT, EBADSTATE, EMSGSIZE, ENOTSUP = 0, 1, 2, 3, 5, 6, 7, 8
UNSUPPORTED_TOO_NEW = 13
# img_mgmt_err_code_t (v2 `err.rc` in group 1)
IMG_HASH_NOT_FOUND, IMG_NO_FREE_SLOT, IMG_INVALID_SLOT = 8, 9, 14
IMG_INVALID_OFFSET, IMG_INVALID_LENGTH, IMG_INVALID_HEADER, IMG_INVALID_MAGIC = 20, 21, 22, 23
IMG_INVALID_HASH, IMG_CURRENT_IS_NEWER, IMG_ALREADY_PENDING = 24, 27, 28
IMG_TOO_LARGE, IMG_DATA_OVERRUN = 30, 31
# img_mgmt_translate_error_code: the v1 `rc` of each group-1 error
IMG_TO_V1 = {IMG_HASH_NOT_FOUND: EUNKNOWN, IMG_NO_FREE_SLOT: EBADSTATE, IMG_INVALID_SLOT: EINVAL,
             IMG_INVALID_OFFSET: EINVAL, IMG_INVALID_LENGTH: EINVAL, IMG_INVALID_HEADER: EINVAL,
             IMG_INVALID_MAGIC: EUNKNOWN, IMG_INVALID_HASH: EINVAL, IMG_CURRENT_IS_NEWER: EBADSTATE,
             IMG_ALREADY_PENDING: EBADSTATE, IMG_TOO_LARGE: EUNKNOWN, IMG_DATA_OVERRUN: EUNKNOWN}

IMAGE_MAGIC = 0x96F3B83D
TLV_INFO, TLV_PROT_INFO, TLV_SHA256 = 0x6907, 0x6908, 0x10
F_NON_BOOTABLE = 0x10
HEADER = struct.Struct("<IIHHIIBBHII")      # 32 bytes

BEHAVIOURS = ("normal", "crash", "invalid", "silent")


class ImageError(ValueError):
    pass


# --- versions and the MCUboot image format
def parse_version(text):
    """'0.8.7', '0.8.7+3' (imgtool) or '0.8.7.3' -> (major, minor, revision, build)."""
    main, plus, build = text.strip().partition("+")
    parts = main.split(".")
    if plus:
        parts.append(build)
    if not 1 <= len(parts) <= 4 or not all(p.isdigit() for p in parts):
        raise ValueError(f"{text!r} is not an MCUboot version (major.minor.revision[+build])")
    nums = [int(p) for p in parts] + [0] * (4 - len(parts))
    if nums[0] > 255 or nums[1] > 255 or nums[2] > 0xFFFF or nums[3] > 0xFFFFFFFF:
        raise ValueError(f"{text!r}: a field is out of range")
    return tuple(nums)


def version_text(v):
    """As img_mgmt_ver_str: major.minor.revision, and .build when it is not 0."""
    return f"{v[0]}.{v[1]}.{v[2]}" + (f".{v[3]}" if v[3] else "")


def parse_image(data):
    """An MCUboot image's {version, hash, flags, bootable, size}; ImageError if it is not one
    (bad magic, sizes past the data, no TLV area, no or two SHA-256 TLVs, a wrong hash)."""
    if len(data) < HEADER.size:
        raise ImageError("shorter than an image header")
    magic, _load, hdr_size, prot_size, img_size, flags, ma, mi, rev, build, _pad = HEADER.unpack_from(data)
    if magic != IMAGE_MAGIC:
        raise ImageError(f"bad magic 0x{magic:08x}")
    if hdr_size < HEADER.size:
        raise ImageError("header size below 32")
    end = hdr_size + img_size
    if end + prot_size + 4 > len(data):
        raise ImageError("sizes run past the data")
    off = end
    if prot_size:
        pmagic, ptot = struct.unpack_from("<HH", data, off)
        if pmagic != TLV_PROT_INFO or ptot != prot_size:
            raise ImageError("protected TLV area does not match the header")
        off += prot_size
    if off + 4 > len(data):
        raise ImageError("no TLV area")
    tmagic, ttot = struct.unpack_from("<HH", data, off)
    if tmagic != TLV_INFO:
        raise ImageError("no TLV area")
    tlv_end = off + ttot
    if tlv_end > len(data) or ttot < 4:
        raise ImageError("TLV area runs past the data")
    off += 4
    digest = None
    while off + 4 <= tlv_end:
        kind, length = struct.unpack_from("<HH", data, off)
        off += 4
        if off + length > tlv_end:
            raise ImageError("a TLV runs past its area")
        if kind == TLV_SHA256:
            if digest is not None:
                raise ImageError("two SHA-256 TLVs")
            if length != 32:
                raise ImageError("SHA-256 TLV of the wrong size")
            digest = bytes(data[off:off + 32])
        off += length
    if digest is None:
        raise ImageError("no SHA-256 TLV")
    if hashlib.sha256(bytes(data[:end + prot_size])).digest() != digest:
        raise ImageError("SHA-256 TLV does not match the image")
    return {"version": (ma, mi, rev, build), "hash": digest, "flags": flags,
            "bootable": not flags & F_NON_BOOTABLE, "size": tlv_end}


def build_image(version, payload, header_size=0x200):
    """A minimal unsigned MCUboot image (zeroed header padding, one SHA-256 TLV): the image a
    virtual Halo runs before any upload. Tests upload images made by imgtool instead."""
    v = parse_version(version) if isinstance(version, str) else version
    head = HEADER.pack(IMAGE_MAGIC, 0, header_size, 0, len(payload), 0, v[0], v[1], v[2], v[3], 0)
    body = head + bytes(header_size - HEADER.size) + payload
    digest = hashlib.sha256(body).digest()
    tlv = struct.pack("<HH", TLV_SHA256, 32) + digest
    return body + struct.pack("<HH", TLV_INFO, 4 + len(tlv)) + tlv


# --- CBOR out, as zcbor writes it (indefinite-length maps and arrays)
def _head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * size):
            return bytes([major << 5 | extra]) + n.to_bytes(size, "big")
    raise ValueError("integer too large")


def cbor_out(value):
    if value is True:
        return b"\xf5"
    if value is False:
        return b"\xf4"
    if value is None:
        return b"\xf6"
    if isinstance(value, int):
        return _head(0, value) if value >= 0 else _head(1, -1 - value)
    if isinstance(value, (bytes, bytearray)):
        return _head(2, len(value)) + bytes(value)
    if isinstance(value, str):
        raw = value.encode()
        return _head(3, len(raw)) + raw
    if isinstance(value, (list, tuple)):
        return b"\x9f" + b"".join(cbor_out(v) for v in value) + b"\xff"
    if isinstance(value, dict):
        return b"\xbf" + b"".join(cbor_out(k) + cbor_out(v) for k, v in value.items()) + b"\xff"
    raise TypeError(f"cannot encode {type(value).__name__}")


class _Err(Exception):
    """A group-1 error (img_mgmt_err_code_t) to answer with."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


class _Generic(Exception):
    """A generic mcumgr error (mcumgr_err_t) to answer with as `rc`."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


class Mcuboot:
    """The two slots and MCUboot's swap state, persisted in `folder`. `counters` is the owner's
    Counter (the virtual Frame's Stats), keys prefixed smp_/boot_."""

    def __init__(self, folder, initial_version, counters, slot_size=0x100000):
        self.folder, self.counters, self.slot_size = folder, counters, slot_size
        self.self_confirm = False
        self.armed = "normal"           # behaviour of the next image swapped in for a test
        self.silence_next = False
        self.upload = None              # RAM: {sha, len, off, data}
        self.log = []                   # what the boots did, for SlotState
        os.makedirs(folder, exist_ok=True)
        if not self._load():
            payload = hashlib.sha256(b"vsmp initial image " + initial_version.encode()).digest() * 128
            self.slots = [self._record(build_image(initial_version, payload)), None]
            self.pending = None         # None, "test" or "perm": slot 1 marked for the next boot
            self.confirmed = True       # slot 0's image_ok
            self._save()

    # --- persistence (the slots' flash and their trailers)
    def _path(self, name):
        return os.path.join(self.folder, name)

    def _record(self, data, behaviour="normal"):
        info = parse_image(data)
        return {"data": bytes(data), "info": info, "behaviour": behaviour}

    def _load(self):
        try:
            with open(self._path("state.json")) as f:
                state = json.load(f)
            slots = []
            for i in (0, 1):
                meta = state["slots"][i]
                if meta is None:
                    slots.append(None)
                    continue
                with open(self._path(f"slot{i}.bin"), "rb") as f:
                    slots.append(self._record(f.read(), meta.get("behaviour", "normal")))
            if slots[0] is None:
                return False
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return False
        self.slots, self.pending, self.confirmed = slots, state.get("pending"), bool(state.get("confirmed", True))
        return True

    def _save(self):
        for i, rec in enumerate(self.slots):
            path = self._path(f"slot{i}.bin")
            if rec is None:
                if os.path.exists(path):
                    os.remove(path)
            else:
                with open(path + ".tmp", "wb") as f:
                    f.write(rec["data"])
                os.replace(path + ".tmp", path)
        state = {"slots": [None if r is None else {"behaviour": r["behaviour"]} for r in self.slots],
                 "pending": self.pending, "confirmed": self.confirmed}
        with open(self._path("state.json") + ".tmp", "w") as f:
            json.dump(state, f)
        os.replace(self._path("state.json") + ".tmp", self._path("state.json"))

    # --- state
    def running(self):
        return self.slots[0]

    def running_version(self):
        return version_text(self.slots[0]["info"]["version"])

    def silent(self):
        return self.slots[0]["behaviour"] == "silent"

    def swap_type(self):
        if self.pending is not None and self.slots[1] is not None:
            return self.pending             # "test" or "perm"
        return "none" if self.confirmed else "revert"

    def slot1_in_use(self):
        """img_mgmt_slot_in_use(1): slot 1 is the next boot's slot (pending, or the revert)."""
        return self.swap_type() != "none"

    def slot_flags(self):
        kind = self.swap_type()
        flags = [{"active": True, "confirmed": kind != "revert", "pending": False, "permanent": False},
                 {"active": False, "confirmed": kind == "revert", "pending": kind in ("test", "perm"),
                  "permanent": kind == "perm"}]
        return flags

    def images(self):
        out = []
        for i, (rec, flags) in enumerate(zip(self.slots, self.slot_flags())):
            if rec is None:
                continue
            info = rec["info"]
            out.append({"slot": i, "version": version_text(info["version"]), "hash": info["hash"],
                        "bootable": info["bootable"], "pending": flags["pending"],
                        "confirmed": flags["confirmed"], "active": flags["active"],
                        "permanent": flags["permanent"]})
        return out

    def describe(self):
        """SlotState: the slots, the swap state, the upload in progress, the counters."""
        slots = []
        for img, rec in zip(self.images(), [r for r in self.slots if r is not None]):
            slots.append(dict(img, hash=img["hash"].hex(), behaviour=rec["behaviour"],
                              size=len(rec["data"])))
        up = self.upload
        return {"slots": slots, "swap_type": self.swap_type(), "running_version": self.running_version(),
                "self_confirm": self.self_confirm, "armed": self.armed, "silence_next": self.silence_next,
                "upload": None if up is None else {"off": up["off"], "len": up["len"], "sha": up["sha"].hex()},
                "counters": {k: int(v) for k, v in sorted(self.counters.items())
                             if k.startswith(("smp_", "boot_"))},
                "boots": list(self.log[-20:])}

    # --- MCUboot at a boot
    def boot(self):
        """One reset: MCUboot's decision, then the image runs (and may confirm itself). Returns
        what happened, in words (also kept for SlotState)."""
        self.upload = None              # the upload session lived in RAM
        self.counters["boot_count"] += 1
        kind = self.swap_type()
        if kind in ("test", "perm"):
            new = self.slots[1]
            behaviour = self.armed if self.armed != "normal" else new["behaviour"]
            if self.silence_next and behaviour == "normal":
                behaviour = "silent"
            self.armed, self.silence_next = "normal", False
            self.pending = None
            if behaviour == "invalid":
                # MCUboot validates slot 1 before the swap and erases an image it refuses.
                self.slots[1] = None
                self.counters["boot_refused"] += 1
                what = f"MCUboot refused {version_text(new['info']['version'])} in slot 1 (erased); " \
                       f"{self.running_version()} runs"
            else:
                new = dict(new, behaviour=behaviour)
                self.slots = [new, self.slots[0]]
                self.confirmed = kind == "perm"
                self.counters["boot_swaps"] += 1
                if behaviour == "crash":
                    # It faults before it could confirm; the watchdog resets; MCUboot reverts.
                    self.slots = [self.slots[1], self.slots[0]]
                    self.slots[1] = dict(self.slots[1], behaviour="crash")
                    self.confirmed = True
                    self.counters["boot_reverts"] += 1
                    what = f"{version_text(new['info']['version'])} did not boot; MCUboot reverted " \
                           f"to {self.running_version()}"
                else:
                    what = f"swapped in {self.running_version()} ({'permanent' if self.confirmed else 'test'})"
        elif kind == "revert":
            old = self.running_version()
            self.slots = [self.slots[1], self.slots[0]]
            self.confirmed = True
            self.counters["boot_reverts"] += 1
            what = f"{old} was not confirmed: MCUboot reverted to {self.running_version()}"
        else:
            what = f"{self.running_version()} runs"
        if self.self_confirm and not self.confirmed:
            self.confirmed = True
            self.counters["boot_self_confirms"] += 1
            what += "; it confirmed itself"
        self._save()
        self.log.append(what)
        return what

    # --- img_mgmt
    def state_write(self, req):
        hash_, confirm = req.get("hash", b""), req.get("confirm", False)
        if not isinstance(hash_, bytes) or not isinstance(confirm, bool):
            raise _Generic(EINVAL)
        if not hash_:
            if not confirm:
                raise _Err(IMG_INVALID_HASH)
            slot = 0
        elif len(hash_) != 32:
            raise _Err(IMG_INVALID_HASH)
        else:
            slot = next((i for i, r in enumerate(self.slots) if r is not None and r["info"]["hash"] == hash_), None)
            if slot is None:
                raise _Err(IMG_HASH_NOT_FOUND)
        kind = self.swap_type()
        if kind == "test":
            if (confirm and slot != 0) or (not confirm and slot == 0):
                raise _Err(IMG_ALREADY_PENDING)
        elif kind == "perm":
            if slot != 1:
                raise _Err(IMG_ALREADY_PENDING)
        elif kind == "revert":
            if not confirm:
                raise _Err(IMG_ALREADY_PENDING)
            if slot == 0:
                self.confirmed = True
                self.counters["smp_confirms"] += 1
        elif slot == 1:
            self.pending = "perm" if confirm else "test"
            self.counters["smp_tests" if not confirm else "smp_permanent"] += 1
        self._save()
        return self.state_read()

    def state_read(self):
        return {"images": self.images(), "splitStatus": 0}

    def erase(self, req):
        slot = req.get("slot", 1)
        if not isinstance(slot, int) or isinstance(slot, bool) or slot not in (0, 1):
            raise _Generic(EINVAL)
        if self.slots[slot] is not None and (slot == 0 or self.slot1_in_use()):
            raise _Err(IMG_NO_FREE_SLOT)
        self.slots[slot] = None
        self.upload = None
        self.counters["smp_erases"] += 1
        self._save()
        return {}

    def upload_chunk(self, req, running_version):
        """One upload request -> the response map. Zephyr's rules; the session is named by
        sha+len (a new request at off 0 with both the same resumes)."""
        c = self.counters
        c["smp_upload_requests"] += 1
        off, data = req.get("off"), req.get("data", b"")
        size, sha, image = req.get("len"), req.get("sha", b""), req.get("image", 0)
        upgrade = req.get("upgrade", False)
        if (off is not None and (not isinstance(off, int) or isinstance(off, bool) or off < 0)) \
                or not isinstance(data, bytes) or not isinstance(sha, bytes) or not isinstance(upgrade, bool) \
                or (size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0)) \
                or not isinstance(image, int) or isinstance(image, bool):
            raise _Generic(EINVAL)
        if off is None:
            raise _Err(IMG_INVALID_OFFSET)
        if off == 0:
            c["smp_off0_requests"] += 1
            if len(data) < HEADER.size:
                raise _Err(IMG_INVALID_HEADER)
            if size is None:
                raise _Err(IMG_INVALID_LENGTH)
            if struct.unpack_from("<I", data)[0] != IMAGE_MAGIC:
                raise _Err(IMG_INVALID_MAGIC)
            if len(sha) > 32:
                raise _Err(IMG_INVALID_HASH)
            if image != 0:
                raise _Err(IMG_INVALID_SLOT)
            up = self.upload
            if sha and up is not None and up["sha"] == sha and up["len"] == size:
                c["smp_resumes"] += 1
                return {"off": up["off"]}
            if self.slot1_in_use():
                raise _Err(IMG_NO_FREE_SLOT)
            if size > self.slot_size:
                raise _Err(IMG_TOO_LARGE)
            if upgrade:
                new = struct.unpack_from("<BBH", data, 20)
                if tuple(parse_version(running_version)[:3]) >= new:
                    raise _Err(IMG_CURRENT_IS_NEWER)
            if len(sha) == 32 and self.slots[1] is not None and len(self.slots[1]["data"]) == size \
                    and hashlib.sha256(self.slots[1]["data"]).digest() == sha:
                # CONFIG_IMG_ENABLE_IMAGE_CHECK: slot 1 holds it already
                c["smp_already_held"] += 1
                return {"off": size, "match": True}
            # a new session: slot 1 is erased, then written from 0
            self.slots[1] = None
            self._save()
            self.upload = {"sha": sha, "len": size, "off": 0, "data": bytearray()}
            c["smp_off0_writes"] += 1
        up = self.upload
        if up is None or off != up["off"]:
            c["smp_wrong_offset"] += 1
            return {"off": 0 if up is None else up["off"]}
        if off + len(data) > up["len"]:
            self.upload = None
            raise _Err(IMG_DATA_OVERRUN)
        up["data"] += data
        up["off"] += len(data)
        c["smp_bytes_written"] += len(data)
        if up["off"] < up["len"]:
            return {"off": up["off"]}
        # complete: slot 1 holds the file; it counts as an image if MCUboot's checks pass
        self.upload = None
        c["smp_uploads_completed"] += 1
        match = len(up["sha"]) == 32 and hashlib.sha256(bytes(up["data"])).digest() == up["sha"]
        try:
            self.slots[1] = self._record(up["data"])
        except ImageError:
            self.slots[1] = None
            c["smp_invalid_images"] += 1
        self._save()
        return {"off": up["len"], "match": match}


class SmpServer:
    """SMP frames in, responses out. `device` gives mcuboot (Mcuboot, its counters too), reset_requested()
    (called after a reset request was answered) and smp_held(n) (link-drop points)."""

    def __init__(self, device, buf_size=517, buf_count=4, legacy_rc=False):
        self.d, self.buf_size, self.buf_count, self.legacy_rc = device, buf_size, buf_count, legacy_rc
        self.pending = bytearray()      # a request arriving in several writes

    def lost(self):
        """The link dropped: a half-received request is gone."""
        self.pending.clear()

    def feed(self, data):
        """One write -> the responses to send (each one SMP frame)."""
        c = self.d.mcuboot.counters
        self.pending += data
        out = []
        while len(self.pending) >= 8:
            total = 8 + int.from_bytes(self.pending[2:4], "big")
            if total > self.buf_size:
                c["smp_oversize"] += 1      # does not fit the netbuf: dropped, no answer
                self.pending.clear()
                break
            if len(self.pending) < total:
                break
            frame = bytes(self.pending[:total])
            del self.pending[:total]
            rsp = self.handle(frame)
            if rsp is not None:
                out.append(rsp)
        return out

    def handle(self, frame):
        c = self.d.mcuboot.counters
        c["smp_requests"] += 1
        op, version = frame[0] & 0x07, (frame[0] >> 3) & 0x03
        group, seq, cmd = int.from_bytes(frame[4:6], "big"), frame[6], frame[7]
        if op not in (OP_READ, OP_WRITE):
            c["smp_ignored"] += 1
            return None
        if version > 1:
            body = {"rc": UNSUPPORTED_TOO_NEW}
            version = 1
        else:
            body = self._dispatch(op, version, group, cmd, frame[8:])
        payload = cbor_out(body)
        head = bytes([(version << 3) | (op + 1), 0]) + len(payload).to_bytes(2, "big") \
            + group.to_bytes(2, "big") + bytes([seq, cmd])
        return head + payload

    def _dispatch(self, op, version, group, cmd, raw):
        c = self.d.mcuboot.counters
        try:
            req = cbor2.loads(raw) if raw else {}
        except Exception:       # cbor2 raises several kinds on garbage: all are a bad request
            req = None
        if not isinstance(req, dict):
            c["smp_bad_requests"] += 1
            return {"rc": EINVAL}
        handler = {(GROUP_OS, OS_ECHO, OP_READ): self._echo, (GROUP_OS, OS_ECHO, OP_WRITE): self._echo,
                   (GROUP_OS, OS_RESET, OP_WRITE): self._reset, (GROUP_OS, OS_PARAMS, OP_READ): self._params,
                   (GROUP_IMAGE, IMG_STATE, OP_READ): lambda r: self.d.mcuboot.state_read(),
                   (GROUP_IMAGE, IMG_STATE, OP_WRITE): self.d.mcuboot.state_write,
                   (GROUP_IMAGE, IMG_UPLOAD, OP_WRITE): self._upload,
                   (GROUP_IMAGE, IMG_ERASE, OP_WRITE): self._erase}.get((group, cmd, op))
        if handler is None:
            c["smp_not_supported"] += 1
            return {"rc": ENOTSUP}
        try:
            return handler(req)
        except _Generic as e:
            c["smp_errors"] += 1
            return {"rc": e.code}
        except _Err as e:
            c["smp_errors"] += 1
            if version == 0:
                return {"rc": IMG_TO_V1.get(e.code, EUNKNOWN)}
            return {"err": {"group": group, "rc": e.code}}

    def _echo(self, req):
        text = req.get("d")
        if not isinstance(text, str):
            raise _Generic(EINVAL)
        return {"r": text}

    def _params(self, req):
        return {"buf_size": self.buf_size, "buf_count": self.buf_count}

    def _reset(self, req):
        if not isinstance(req.get("force", False), (bool, int)):
            raise _Generic(EINVAL)
        self.d.mcuboot.counters["smp_resets"] += 1
        self.d.reset_requested()
        return {"rc": 0} if self.legacy_rc else {}

    def _upload(self, req):
        body = self.d.mcuboot.upload_chunk(req, self.d.mcuboot.running_version())
        up = self.d.mcuboot.upload
        self.d.smp_held(up["off"] if up is not None else body.get("off", 0))
        return dict({"rc": 0}, **body) if self.legacy_rc else body

    def _erase(self, req):
        body = self.d.mcuboot.erase(req)
        return dict({"rc": 0}, **body) if self.legacy_rc else body
