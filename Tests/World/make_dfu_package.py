#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make_dfu_package: real Nordic Secure DFU packages for the tests, made by nrfutil 6.1.7's own
# packager (nordicsemi.dfu.package, as `nrfutil pkg generate` calls it; its command line needs
# pc_ble_driver_py, which does not install here). Run it with the world's venv python:
#   make_dfu_package.py --out PKG.zip --size N --version vXX.YYY.ZZZZ [--key KEY.pem]
#       a synthetic application image of N bytes beginning with GLASSD-FW-VERSION:<version>
#       (where the virtual bootloader, vdfu.py, reads the version the new image boots with),
#       packed for hw-version 52, sd-req 0x00 and signed with KEY.pem (default: a throwaway key
#       made next to PKG, PKG minus .zip plus .key.pem).
#   make_dfu_package.py --out BAD.zip --from PKG.zip --break corrupt-zip|truncated-image|bad-init
#       a broken copy for refusal tests: bytes flipped in the middle of the image's stored data;
#       the image cut to half (the init packet's app_size no longer matches); the init packet
#       replaced by as many 0xFF bytes (no protobuf: a varint that never ends).
# Prints one JSON line: path, sha256, image_size, init_size, app_size (from the init packet,
# null if it has none) and signed. nrfutil pads the image to whole 32-bit words. Test-only tool.

import argparse
import contextlib
import hashlib
import json
import os
import re
import sys
import tempfile
import zipfile

MARKER = b"GLASSD-FW-VERSION:"   # vdfu.VERSION_MARKER; the 12 characters after it are the version
BREAKS = ("corrupt-zip", "truncated-image", "bad-init")


def image(size, version):
    """The marker and version, then bytes that do not compress (so the image fills the zip)."""
    head = MARKER + version.encode("ascii")
    filler, block = bytearray(), 0
    while len(head) + len(filler) < size:
        filler += hashlib.sha256(b"%s %d" % (version.encode(), block)).digest()
        block += 1
    return (head + filler)[:size]


def generate(out, size, version, key):
    from nordicsemi.dfu.package import Package
    from nordicsemi.dfu.signing import Signing

    digits = re.fullmatch(r"v(\d\d)\.(\d\d\d)\.(\d\d\d\d)", version)
    if digits is None:
        sys.exit("make_dfu_package: --version must look like v23.248.0754")
    if size < len(MARKER) + len(version):
        sys.exit("make_dfu_package: --size is smaller than the version marker")
    signer = Signing()
    if key is None:
        key = os.path.splitext(out)[0] + ".key.pem"
        signer.gen_key(key)
    signer.load_key(key)
    with tempfile.TemporaryDirectory() as work:
        # The input's name becomes the package's: application.bin and application.dat.
        app = os.path.join(work, "application.bin")
        with open(app, "wb") as f:
            f.write(image(size, version))
        # The init packet's fw_version: the version's digits (v23.248.0754 -> 232480754).
        # sd_id as well: `pkg generate` passes --sd-req as both, and the application's sd_req
        # comes from sd_id.
        package = Package(hw_version=52, app_version=int("".join(digits.groups())), sd_req=[0x00],
                          sd_id=[0x00], app_fw=app, signer=signer)
        # The packager talks on stdout; this tool's stdout is its one JSON line.
        with contextlib.redirect_stdout(sys.stderr):
            package.generate_package(out)


def entries(path):
    """manifest, {name: bytes} and the application's (bin, dat) names."""
    with zipfile.ZipFile(path) as z:
        files = {i.filename: z.read(i) for i in z.infolist()}
    app = json.loads(files["manifest.json"])["manifest"]["application"]
    return files, app["bin_file"], app["dat_file"]


def rewrite(path, files):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)


def derive(source, out, how):
    files, bin_name, dat_name = entries(source)
    if how == "truncated-image":
        files[bin_name] = files[bin_name][:len(files[bin_name]) // 2 // 4 * 4]
        rewrite(out, files)
    elif how == "bad-init":
        files[dat_name] = b"\xff" * len(files[dat_name])
        rewrite(out, files)
    else:
        data = bytearray(open(source, "rb").read())
        with zipfile.ZipFile(source) as z:
            info = z.getinfo(bin_name)
        # The entry's data follows its local header (30 bytes, name, extra field).
        header = data[info.header_offset:info.header_offset + 30]
        start = info.header_offset + 30 + int.from_bytes(header[26:28], "little") \
            + int.from_bytes(header[28:30], "little")
        middle = start + info.compress_size // 2
        for i in range(middle, middle + 4):
            data[i] ^= 0xFF
        with open(out, "wb") as f:
            f.write(data)


def describe(path):
    from nordicsemi.dfu import dfu_cc_pb2 as pb

    raw = open(path, "rb").read()
    result = {"path": os.path.abspath(path), "sha256": hashlib.sha256(raw).hexdigest()}
    try:
        files, bin_name, dat_name = entries(path)
    except (zipfile.BadZipFile, KeyError, ValueError):
        return result   # a corrupt zip: only the file itself
    packet = pb.Packet()
    try:
        packet.ParseFromString(files[dat_name])
        signed = packet.HasField("signed_command")
        command = packet.signed_command.command if signed else packet.command
        app_size = command.init.app_size if command.init.HasField("app_size") else None
    except Exception:   # protobuf's DecodeError and friends: not an init packet
        signed, app_size = False, None
    result.update(image_size=len(files[bin_name]), init_size=len(files[dat_name]),
                  app_size=app_size, signed=signed)
    return result


def main():
    p = argparse.ArgumentParser(description="Make a Secure DFU package (nrfutil) for the tests.")
    p.add_argument("--out", required=True)
    p.add_argument("--size", type=int)
    p.add_argument("--version")
    p.add_argument("--key")
    p.add_argument("--from", dest="source")
    p.add_argument("--break", dest="how", choices=BREAKS)
    a = p.parse_args()
    if (a.source is None) != (a.how is None):
        p.error("--from and --break go together")
    if a.source is not None:
        derive(a.source, a.out, a.how)
    elif a.size is None or a.version is None:
        p.error("--size and --version are required to make a package")
    else:
        generate(a.out, a.size, a.version, a.key)
    print(json.dumps(describe(a.out)), flush=True)


if __name__ == "__main__":
    main()
