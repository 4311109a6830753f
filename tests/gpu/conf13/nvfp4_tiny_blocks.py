"""Writes DIR/x.npy: [rows][cols] FP32, random in [-1, 1], except that every
row's second and fifth 16-element blocks hold values near 1e-8 (so their E4M3
block scale rounds to zero) and the last block of row 0 is exactly zero.
Usage: python3 nvfp4_tiny_blocks.py DIR ROWS COLS (standard library only)."""
import os, random, struct, sys

def write_npy(path, rows, cols, vals):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    hdr += ' ' * (63 - (len(hdr) + 10) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
        f.write(struct.pack('<%df' % len(vals), *vals))

d, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(13)
v = []
for r in range(rows):
    for c in range(cols):
        b = c // 16
        if b in (1, 4):
            x = rng.uniform(-1, 1) * 1e-8
        elif r == 0 and b == cols // 16 - 1:
            x = 0.0
        else:
            x = rng.uniform(-1, 1)
        v.append(x)
os.makedirs(d, exist_ok=True)
write_npy(os.path.join(d, 'x.npy'), rows, cols, v)
