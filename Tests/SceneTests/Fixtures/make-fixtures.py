#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Makes the scene-mode fixtures: 640x400 colour JPEGs, the Monocle camera's frame size, drawn here
from seeded random shapes (nothing copied from anywhere).

  sharp.jpg       a synthetic scene: a gradient wall, a window grid, shelves of boxes, discs, lines
                  and lines of text-like glyphs (quality 90)
  blurred.jpg     the same scene, Gaussian blur of radius 4 (quality 90): well under blur_threshold
  dark.jpg        the same scene at 8 % of its brightness (quality 90): under dark_threshold
  reencoded.jpg   sharp.jpg decoded and saved again at quality 60: the same scene, other JPEG noise
  moved.jpg       the same scene as if the head moved a little: cropped by 12 px left and 8 px top,
                  scaled back to 640x400 (quality 90)
  other.jpg       a different scene drawn the same way from another seed (quality 90)

Needs Pillow (the test world's venv has it: Tests/World/setup, then .venv/bin/python). Made with
Pillow 11.3.0 (libjpeg-turbo 3.x inside its wheel); another Pillow may round a few pixels
differently, so the tests check ranges, not exact numbers.

Usage: .venv/bin/python Tests/SceneTests/Fixtures/make-fixtures.py   (writes next to itself)
"""
import io, os, random

from PIL import Image, ImageDraw, ImageFilter, ImageFont

WIDTH, HEIGHT = 640, 400
HERE = os.path.dirname(os.path.abspath(__file__))


def scene(seed):
    rng = random.Random(seed)
    image = Image.new("RGB", (WIDTH, HEIGHT))
    draw = ImageDraw.Draw(image)
    # A wall lit from one side: a smooth gradient, which dHash sees but the Laplacian barely does.
    top, bottom = [rng.randint(90, 200) for _ in range(3)], [rng.randint(40, 140) for _ in range(3)]
    for y in range(HEIGHT):
        t = y / (HEIGHT - 1)
        draw.line([(0, y), (WIDTH, y)], fill=tuple(int(a + (b - a) * t) for a, b in zip(top, bottom)))
    # A window: a bright pane with dark bars.
    x0, y0 = rng.randint(20, 380), rng.randint(15, 60)
    w, h = rng.randint(160, 240), rng.randint(110, 160)
    draw.rectangle([x0, y0, x0 + w, y0 + h], fill=(225, 235, 245), outline=(30, 30, 30), width=6)
    draw.line([(x0 + w // 2, y0), (x0 + w // 2, y0 + h)], fill=(30, 30, 30), width=5)
    draw.line([(x0, y0 + h // 2), (x0 + w, y0 + h // 2)], fill=(30, 30, 30), width=5)
    # A shelf of boxes along the bottom.
    x = 0
    while x < WIDTH:
        bw, bh = rng.randint(25, 90), rng.randint(40, 150)
        draw.rectangle([x, HEIGHT - bh, x + bw, HEIGHT], fill=tuple(rng.randint(0, 255) for _ in range(3)),
                       outline=(20, 20, 20), width=2)
        x += bw + rng.randint(0, 12)
    # Discs and thin lines.
    for _ in range(6):
        cx, cy, r = rng.randint(0, WIDTH), rng.randint(0, HEIGHT), rng.randint(10, 45)
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=tuple(rng.randint(0, 255) for _ in range(3)))
    for _ in range(8):
        draw.line([(rng.randint(0, WIDTH), rng.randint(0, HEIGHT)), (rng.randint(0, WIDTH), rng.randint(0, HEIGHT))],
                  fill=tuple(rng.randint(0, 255) for _ in range(3)), width=rng.randint(1, 3))
    # A poster of text: the fine detail a sharp photo of a page or a sign has.
    px, py = rng.randint(10, 330), rng.randint(150, 190)
    draw.rectangle([px, py, px + 290, py + 110], fill=(245, 240, 225), outline=(60, 50, 40), width=2)
    font = ImageFont.load_default(size=14)
    words = ["glass", "scene", "frame", "sharp", "light", "door", "table", "exit", "north", "open", "7B", "42"]
    for line in range(6):
        text = " ".join(rng.choice(words) for _ in range(5))
        draw.text((px + 8, py + 6 + line * 17), text, fill=(15, 15, 20), font=font)
    return image


def save(image, name, quality=90):
    image.save(os.path.join(HERE, name), "JPEG", quality=quality, optimize=True)


def main():
    sharp = scene(1)
    save(sharp, "sharp.jpg")
    save(sharp.filter(ImageFilter.GaussianBlur(4)), "blurred.jpg")
    save(sharp.point(lambda v: round(v * 0.08)), "dark.jpg")
    # Re-encoded from the JPEG itself, as a frame of the same view would differ: in its JPEG noise.
    with open(os.path.join(HERE, "sharp.jpg"), "rb") as f:
        save(Image.open(io.BytesIO(f.read())).convert("RGB"), "reencoded.jpg", quality=60)
    save(sharp.crop((12, 8, WIDTH, HEIGHT)).resize((WIDTH, HEIGHT), Image.Resampling.BICUBIC), "moved.jpg")
    save(scene(2), "other.jpg")


if __name__ == "__main__":
    main()
