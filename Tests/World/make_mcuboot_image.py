#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make_mcuboot_image: real signed MCUboot images for the tests, made by MCUboot's own imgtool
# (PyPI imgtool, pinned in requirements.txt), as a Halo's zephyr.signed.bin is. Run it with the
# world's venv python:
#   make_mcuboot_image.py --out IMG.bin --version 0.8.8[+BUILD] [--size N] [--key KEY.pem]
#       [--unsigned] [--slot-size N] [--header-size N] [--pad] [--seed TEXT]
#   A payload of N bytes (default 24,000) that does not compress (SHA-256 blocks of the seed and
#   version), signed with KEY.pem (default: a throwaway ECDSA P-256 key made by `imgtool keygen`
#   next to IMG, IMG minus extension plus .key.pem; no key is committed) or not (--unsigned),
#   header 0x200 (zeroed, --pad-header), align 4, slot size 0x100000; --pad pads to the slot
#   with MCUboot's trailer, as a flashable image (an upload is normally not padded).
# Prints one JSON line: path, sha256 (of the file: the SMP upload's `sha`), size, version,
# hash (the image's SHA-256 TLV, the SMP image state's `hash`, as `imgtool verify` prints it),
# signed, key. Test-only tool.

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile


def imgtool():
    return [os.path.join(os.path.dirname(sys.executable), "imgtool")]


def run(args):
    out = subprocess.run(imgtool() + args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"make_mcuboot_image: imgtool {args[0]} failed: {out.stderr.strip() or out.stdout.strip()}")
    return out.stdout


def payload(size, seed, version):
    out, block = bytearray(), 0
    while len(out) < size:
        out += hashlib.sha256(f"{seed} {version} {block}".encode()).digest()
        block += 1
    return bytes(out[:size])


def main():
    p = argparse.ArgumentParser(description="Make a signed MCUboot image (imgtool) for the tests.")
    p.add_argument("--out", required=True)
    p.add_argument("--version", required=True, help="major.minor.revision[+build]")
    p.add_argument("--size", type=int, default=24000, help="payload bytes (default 24000)")
    p.add_argument("--key", help="PEM key to sign with (default: a new throwaway ECDSA P-256 key)")
    p.add_argument("--unsigned", action="store_true", help="no signature: the hash TLV only")
    p.add_argument("--slot-size", type=lambda t: int(t, 0), default=0x100000)
    p.add_argument("--header-size", type=lambda t: int(t, 0), default=0x200)
    p.add_argument("--pad", action="store_true", help="pad to the slot size with the trailer")
    p.add_argument("--seed", default="glassd test image", help="varies the payload")
    a = p.parse_args()
    if not re.fullmatch(r"\d+\.\d+\.\d+(\+\d+)?", a.version):
        p.error("--version must look like 0.8.8 or 0.8.8+2")
    if a.size < 1:
        p.error("--size must be at least 1")
    key = None
    if not a.unsigned:
        key = a.key or os.path.splitext(a.out)[0] + ".key.pem"
        if a.key is None:
            run(["keygen", "-k", key, "-t", "ecdsa-p256"])
    with tempfile.TemporaryDirectory() as work:
        raw = os.path.join(work, "zephyr.bin")
        with open(raw, "wb") as f:
            f.write(payload(a.size, a.seed, a.version))
        args = ["sign", "--version", a.version, "--header-size", str(a.header_size), "--pad-header",
                "--align", "4", "--slot-size", str(a.slot_size)]
        if a.pad:
            args.append("--pad")
        if key is not None:
            args += ["--key", key]
        run(args + [raw, a.out])
    verify = run(["verify"] + (["--key", key] if key else []) + [a.out])
    digest = re.search(r"Image digest:\s*([0-9a-fA-F]{64})", verify)
    if digest is None:
        sys.exit(f"make_mcuboot_image: imgtool verify gave no digest: {verify.strip()}")
    data = open(a.out, "rb").read()
    print(json.dumps({"path": os.path.abspath(a.out), "sha256": hashlib.sha256(data).hexdigest(),
                      "size": len(data), "version": a.version, "hash": digest.group(1).lower(),
                      "signed": key is not None, "key": os.path.abspath(key) if key else None}), flush=True)


if __name__ == "__main__":
    main()
