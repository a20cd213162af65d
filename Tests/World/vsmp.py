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
# - img_mgmt over vmcuboot.py's slots (slot 0 runs, slot 1 takes uploads): state, test/confirm,
#   erase, and the upload session named by sha+len (RAM: lost at a reset, kept over a link drop).

import hashlib
import struct

import cbor2

import vmcuboot  # beside this file: the image format and the slots

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


class ImgMgmt:
    """Zephyr's img_mgmt rules over the slots (`mcuboot`, a vmcuboot.Mcuboot); the upload session
    lives here, in RAM."""

    def __init__(self, mcuboot):
        self.mcu, self.counters = mcuboot, mcuboot.counters
        self.upload = None              # {sha, len, off, data}

    def booted(self):
        """A reset: the upload session is gone with the RAM."""
        self.upload = None

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
            slot = next((i for i, r in enumerate(self.mcu.slots) if r is not None and r["info"]["hash"] == hash_), None)
            if slot is None:
                raise _Err(IMG_HASH_NOT_FOUND)
        kind = self.mcu.swap_type()
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
                self.mcu.confirm()
                self.counters["smp_confirms"] += 1
        elif slot == 1:
            self.mcu.mark_pending(permanent=confirm)
            self.counters["smp_tests" if not confirm else "smp_permanent"] += 1
        return self.state_read()

    def state_read(self):
        return {"images": self.mcu.images(), "splitStatus": 0}

    def erase(self, req):
        slot = req.get("slot", 1)
        if not isinstance(slot, int) or isinstance(slot, bool) or slot not in (0, 1):
            raise _Generic(EINVAL)
        if self.mcu.slots[slot] is not None and (slot == 0 or self.mcu.slot1_in_use()):
            raise _Err(IMG_NO_FREE_SLOT)
        self.mcu.erase(slot)
        self.upload = None
        self.counters["smp_erases"] += 1
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
            if len(data) < vmcuboot.HEADER.size:
                raise _Err(IMG_INVALID_HEADER)
            if size is None:
                raise _Err(IMG_INVALID_LENGTH)
            if struct.unpack_from("<I", data)[0] != vmcuboot.IMAGE_MAGIC:
                raise _Err(IMG_INVALID_MAGIC)
            if len(sha) > 32:
                raise _Err(IMG_INVALID_HASH)
            if image != 0:
                raise _Err(IMG_INVALID_SLOT)
            up = self.upload
            if sha and up is not None and up["sha"] == sha and up["len"] == size:
                c["smp_resumes"] += 1
                return {"off": up["off"]}
            if self.mcu.slot1_in_use():
                raise _Err(IMG_NO_FREE_SLOT)
            if size > self.mcu.slot_size:
                raise _Err(IMG_TOO_LARGE)
            if upgrade:
                new = struct.unpack_from("<BBH", data, 20)
                if tuple(vmcuboot.parse_version(running_version)[:3]) >= new:
                    raise _Err(IMG_CURRENT_IS_NEWER)
            if len(sha) == 32 and self.mcu.slots[1] is not None and len(self.mcu.slots[1]["data"]) == size \
                    and hashlib.sha256(self.mcu.slots[1]["data"]).digest() == sha:
                # CONFIG_IMG_ENABLE_IMAGE_CHECK: slot 1 holds it already
                c["smp_already_held"] += 1
                return {"off": size, "match": True}
            # a new session: slot 1 is erased, then written from 0
            self.mcu.erase(1)
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
        if not self.mcu.store(up["data"]):
            c["smp_invalid_images"] += 1
        return {"off": up["len"], "match": match}


class SmpServer:
    """SMP frames in, responses out, over `mcuboot` (a vmcuboot.Mcuboot). `device` gives
    reset_requested() (called once a reset request was answered) and smp_held(n) (the upload
    holds n bytes: link-drop points)."""

    def __init__(self, device, mcuboot, buf_size=517, buf_count=4, legacy_rc=False):
        self.d, self.buf_size, self.buf_count, self.legacy_rc = device, buf_size, buf_count, legacy_rc
        self.mcu, self.counters, self.img = mcuboot, mcuboot.counters, ImgMgmt(mcuboot)
        self.pending = bytearray()      # a request arriving in several writes

    def booted(self):
        """The device reset: what lived in RAM is gone."""
        self.pending.clear()
        self.img.booted()

    def describe(self):
        """SlotState: vmcuboot's slots and swap state, the upload in progress, the counters."""
        up = self.img.upload
        return dict(self.mcu.describe(),
                    upload=None if up is None else {"off": up["off"], "len": up["len"], "sha": up["sha"].hex()},
                    counters={k: int(v) for k, v in sorted(self.counters.items())
                              if k.startswith(("smp_", "boot_"))})

    def lost(self):
        """The link dropped: a half-received request is gone."""
        self.pending.clear()

    def feed(self, data):
        """One write -> the responses to send (each one SMP frame)."""
        c = self.counters
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
        c = self.counters
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
        c = self.counters
        try:
            req = cbor2.loads(raw) if raw else {}
        except Exception:       # cbor2 raises several kinds on garbage: all are a bad request
            req = None
        if not isinstance(req, dict):
            c["smp_bad_requests"] += 1
            return {"rc": EINVAL}
        handler = {(GROUP_OS, OS_ECHO, OP_READ): self._echo, (GROUP_OS, OS_ECHO, OP_WRITE): self._echo,
                   (GROUP_OS, OS_RESET, OP_WRITE): self._reset, (GROUP_OS, OS_PARAMS, OP_READ): self._params,
                   (GROUP_IMAGE, IMG_STATE, OP_READ): lambda r: self.img.state_read(),
                   (GROUP_IMAGE, IMG_STATE, OP_WRITE): self.img.state_write,
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
        self.counters["smp_resets"] += 1
        self.d.reset_requested()
        return {"rc": 0} if self.legacy_rc else {}

    def _upload(self, req):
        body = self.img.upload_chunk(req, self.mcu.running_version())
        up = self.img.upload
        self.d.smp_held(up["off"] if up is not None else body.get("off", 0))
        return dict({"rc": 0}, **body) if self.legacy_rc else body

    def _erase(self, req):
        body = self.img.erase(req)
        return dict({"rc": 0}, **body) if self.legacy_rc else body
