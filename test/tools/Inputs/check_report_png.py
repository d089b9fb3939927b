"""Checks a screenshot of `llmc report`'s page (test/tools/llmc-report-browser.mlir).

A PNG decoder in plain Python (8-bit RGB or RGBA, not interlaced: what
Chromium writes), so the test needs no imaging package. It prints one line
of figures and exits 1 naming the first check that fails:
  - the size is at least --min-width x --min-height;
  - the page is not blank: between 2% and 60% of the pixels are not white
    (a page that failed to render is white; one that is all colour is not
    the report);
  - each colour of --present has at least --min-pixels pixels within 40 of it
    in every channel, greys left out (a curve: anti-aliasing blends the
    edges, not the core);
  - each colour of --absent has fewer (a run that is not on the page).

Usage: check_report_png.py PNG [--min-width W] [--min-height H]
         [--present #RRGGBB,...] [--absent #RRGGBB,...] [--min-pixels N]
"""
import argparse
import struct
import sys
import zlib

# A curve's pixel: within TOLERANCE of its colour in every channel, and not
# a grey (text, grid and frame are greys, which a loose match would count).
TOLERANCE = 40
MIN_SPREAD = 48


def decode(path):
    """(width, height, rows of (r, g, b) tuples)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type "
                         f"{colour}, interlace {interlace}")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


def rgb(text):
    text = text.lstrip("#")
    return tuple(int(text[i:i + 2], 16) for i in (0, 2, 4))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("png")
    parser.add_argument("--min-width", type=int, default=800)
    parser.add_argument("--min-height", type=int, default=600)
    parser.add_argument("--present", default="")
    parser.add_argument("--absent", default="")
    parser.add_argument("--min-pixels", type=int, default=200)
    args = parser.parse_args()
    width, height, rows = decode(args.png)
    wanted = {c: rgb(c) for c in (args.present + "," + args.absent).split(",")
              if c}
    counts = dict.fromkeys(wanted, 0)
    coloured = 0
    for row in rows:
        for pixel in row:
            if pixel != (255, 255, 255):
                coloured += 1
            if max(pixel) - min(pixel) < MIN_SPREAD:
                continue
            for name, target in wanted.items():
                if all(abs(p - t) <= TOLERANCE for p, t in zip(pixel, target)):
                    counts[name] += 1
    share = coloured / (width * height)
    print(f"{width}x{height}, {share:.1%} not white, " +
          ", ".join(f"{c}: {n} px" for c, n in counts.items()))
    if width < args.min_width or height < args.min_height:
        print(f"error: expected at least {args.min_width}x{args.min_height}, "
              f"got {width}x{height}")
        return 1
    if not 0.02 <= share <= 0.60:
        print(f"error: expected 2% to 60% of the pixels not white, got "
              f"{share:.1%} (a blank or broken page)")
        return 1
    for colour in filter(None, args.present.split(",")):
        if counts[colour] < args.min_pixels:
            print(f"error: expected at least {args.min_pixels} pixels of the "
                  f"curve colour {colour}, got {counts[colour]}")
            return 1
    for colour in filter(None, args.absent.split(",")):
        if counts[colour] >= args.min_pixels:
            print(f"error: expected no curve of colour {colour}, got "
                  f"{counts[colour]} pixels")
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
