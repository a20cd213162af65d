# SPDX-License-Identifier: GPL-2.0-or-later
#
# vmcuboot: the virtual Halo's MCUboot: the image format (header, TLV areas, the SHA-256 TLV) and
# the two slots of a single-image swap setup with MCUboot's decision at every boot (MCUboot's
# design document; halo-protocol.md "MCUboot image"). vsmp.py serves them over SMP; the virtual
# Frame (--halo) boots them. Test-only; written from the format facts, no code copied.
#
# - slot 0 runs, slot 1 takes uploads; at a boot a pending test is swapped in unconfirmed, a
#   permanent one confirmed, a running image still unconfirmed is swapped back (revert).
# - an image's behaviour (normal, crash, invalid, silent) models builds that do not boot or
#   whose Lua does not answer (VirtualFrame1.FailNextBoot, SilenceNextImage).
# - the slots persist in a folder (slot0.bin, slot1.bin, state.json): a new process is a power-on.

import hashlib
import json
import os
import struct

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


class Mcuboot:
    """The two slots and MCUboot's swap state, persisted in `folder`. `counters` is the owner's
    Counter (the virtual Frame's Stats): boot_* here, smp_* in vsmp."""

    def __init__(self, folder, initial_version, counters, slot_size=0x100000):
        self.folder, self.counters, self.slot_size = folder, counters, slot_size
        self.self_confirm = False
        self.armed = "normal"           # behaviour of the next image swapped in for a test
        self.silence_next = False
        self.log = []                   # what the boots did, for SlotState
        os.makedirs(folder, exist_ok=True)
        if not self._load():
            payload = hashlib.sha256(b"vsmp initial image " + initial_version.encode()).digest() * 128
            self.slots = [self.record(build_image(initial_version, payload)), None]
            self.pending = None         # None, "test" or "perm": slot 1 marked for the next boot
            self.confirmed = True       # slot 0's image_ok
            self.save()

    # --- persistence (the slots' flash and their trailers)
    def _path(self, name):
        return os.path.join(self.folder, name)

    def record(self, data, behaviour="normal"):
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
                    slots.append(self.record(f.read(), meta.get("behaviour", "normal")))
            if slots[0] is None:
                return False
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return False
        self.slots, self.pending, self.confirmed = slots, state.get("pending"), bool(state.get("confirmed", True))
        return True

    def save(self):
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
        """SlotState's slots and swap state (vsmp adds the upload and the counters)."""
        slots = []
        for img, rec in zip(self.images(), [r for r in self.slots if r is not None]):
            slots.append(dict(img, hash=img["hash"].hex(), behaviour=rec["behaviour"],
                              size=len(rec["data"])))
        return {"slots": slots, "swap_type": self.swap_type(), "running_version": self.running_version(),
                "self_confirm": self.self_confirm, "armed": self.armed, "silence_next": self.silence_next,
                "boots": list(self.log[-20:])}

    # --- what img_mgmt writes (the slots' flash and trailers)
    def mark_pending(self, permanent):
        """Slot 1 swaps in at the next boot: for a test, or for good."""
        self.pending = "perm" if permanent else "test"
        self.save()

    def confirm(self):
        """The running image's image_ok: no revert at the next boot."""
        self.confirmed = True
        self.save()

    def erase(self, slot):
        self.slots[slot] = None
        self.save()

    def store(self, data):
        """A finished upload in slot 1; False (slot 1 left empty) if it is not an MCUboot image."""
        try:
            self.slots[1] = self.record(data)
        except ImageError:
            self.slots[1] = None
        self.save()
        return self.slots[1] is not None

    # --- MCUboot at a boot
    def boot(self):
        """One reset: MCUboot's decision, then the image runs (and may confirm itself). Returns
        what happened, in words (also kept for SlotState)."""
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
        self.save()
        self.log.append(what)
        return what
