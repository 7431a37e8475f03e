#!/usr/bin/env python3
"""Draws the sample photos for examples/photos.yaml and the list that names them.

The classic NSOperation tutorial downloads photos from the web; this pipeline must run on a machine
without network, so the photos are drawn here (landscapes of gradients and a sun, PNG, standard library
only) and served on 127.0.0.1. The list names a few photos that do not exist, as the tutorial's did,
so those downloads fail.

    python3 make-photos.py FOLDER
"""
import json
import math
import os
import struct
import sys
import zlib

WIDTH, HEIGHT = 360, 240

# name, sky top, sky bottom, ground, sun position (0..1)
SCENES = [
    ("lake", (40, 90, 170), (170, 210, 240), (30, 80, 120), 0.3),
    ("desert", (200, 120, 60), (250, 210, 140), (190, 150, 90), 0.7),
    ("forest", (70, 120, 170), (190, 220, 230), (30, 90, 40), 0.2),
    ("harbour", (20, 40, 90), (230, 140, 90), (20, 50, 80), 0.55),
    ("meadow", (90, 150, 220), (220, 235, 250), (90, 160, 60), 0.8),
    ("glacier", (120, 160, 210), (235, 245, 255), (210, 225, 240), 0.45),
]
# Misspelled on purpose: the server has no such photos, so these downloads fail (allowed).
MISSING = ["lakee", "forrest"]


def mix(a, b, t):
    t = min(1.0, max(0.0, t))
    return tuple(int(a[i] + (b[i] - a[i]) * t) for i in range(3))


def draw(sky_top, sky_bottom, ground, sun_x):
    horizon = int(HEIGHT * 0.62)
    sun = (int(WIDTH * sun_x), int(HEIGHT * 0.3), 34)
    rows = []
    for y in range(HEIGHT):
        row = bytearray([0])  # PNG filter type 0 for the row
        for x in range(WIDTH):
            if y < horizon:
                colour = mix(sky_top, sky_bottom, y / horizon)
                distance = math.hypot(x - sun[0], y - sun[1])
                if distance < sun[2]:
                    colour = (255, 236, 170)
                elif distance < sun[2] * 1.6:
                    colour = mix((255, 236, 170), colour, (distance - sun[2]) / (sun[2] * 0.6))
            else:
                wave = 0.08 * math.sin(x / 23.0 + y / 7.0)
                colour = mix(ground, (0, 0, 0), min(1.0, (y - horizon) / (HEIGHT - horizon) * 0.5 + wave))
            row += bytes(colour)
        rows.append(bytes(row))
    return b"".join(rows)


def png(pixels):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(pixels, 6)) + chunk(b"IEND", b"")


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "site"
    os.makedirs(folder, exist_ok=True)
    for name, top, bottom, ground, sun_x in SCENES:
        path = os.path.join(folder, name + ".png")
        if not os.path.exists(path):
            with open(path + ".tmp", "wb") as file:
                file.write(png(draw(top, bottom, ground, sun_x)))
            os.replace(path + ".tmp", path)
    names = [scene[0] for scene in SCENES]
    listed = names[:2] + [MISSING[0]] + names[2:5] + [MISSING[1]] + names[5:]
    with open(os.path.join(folder, "photos.json"), "w") as file:
        json.dump([{"name": name, "title": name.capitalize()} for name in listed], file, indent=1)
    print(f"{len(SCENES)} photos and a list of {len(listed)} in {folder}")


if __name__ == "__main__":
    main()
