/**
 * Draws the console's icon (`/favicon.ico`, src/web/favicon.ts) and prints it as base64:
 *
 *   node --import tsx docs/tools/favicon.ts > /tmp/icon.b64
 *
 * A white ring that comes back on itself (an arrowhead where it ends: replenished) on a rounded
 * square in the console's default accent, #1d4ed8. ICO with two 32-bit BMP images, 16 and 32
 * px, drawn with 4×4 supersampling; the alpha channel carries the shape, the AND masks are empty.
 */
const ACCENT = [0x1d, 0x4e, 0xd8] as const

/** Coverage (0–1) of the icon's layers at a point of the unit square. */
function sample(x: number, y: number): { square: number; ring: number } {
  // Rounded square: corner radius 0.2.
  const r = 0.2
  const dx = Math.max(r - x, 0, x - (1 - r))
  const dy = Math.max(r - y, 0, y - (1 - r))
  const square = dx * dx + dy * dy <= r * r ? 1 : 0
  const cx = x - 0.5
  const cy = y - 0.5
  const distance = Math.hypot(cx, cy)
  // Angle from the top, clockwise, in degrees.
  const angle = ((Math.atan2(cx, -cy) * 180) / Math.PI + 360) % 360
  let ring = distance >= 0.2 && distance <= 0.31 && (angle < 20 || angle > 70) ? 1 : 0
  // Arrowhead at the ring's end (angle 20°), pointing clockwise.
  const a = (20 * Math.PI) / 180
  const tip = { x: 0.5 + Math.sin(a + 0.75) * 0.255, y: 0.5 - Math.cos(a + 0.75) * 0.255 }
  const base1 = { x: 0.5 + Math.sin(a) * 0.1, y: 0.5 - Math.cos(a) * 0.1 }
  const base2 = { x: 0.5 + Math.sin(a) * 0.41, y: 0.5 - Math.cos(a) * 0.41 }
  if (inTriangle({ x, y }, tip, base1, base2)) ring = 1
  return { square, ring }
}

type Point = { x: number; y: number }
function inTriangle(p: Point, a: Point, b: Point, c: Point): boolean {
  const side = (u: Point, v: Point): number => (v.x - u.x) * (p.y - u.y) - (v.y - u.y) * (p.x - u.x)
  const s1 = side(a, b)
  const s2 = side(b, c)
  const s3 = side(c, a)
  return (s1 >= 0 && s2 >= 0 && s3 >= 0) || (s1 <= 0 && s2 <= 0 && s3 <= 0)
}

/** One BMP image (BITMAPINFOHEADER, BGRA rows bottom-up, then the AND mask) of `size` px. */
function bitmap(size: number): Buffer {
  const header = Buffer.alloc(40)
  header.writeUInt32LE(40, 0)
  header.writeInt32LE(size, 4)
  header.writeInt32LE(size * 2, 8) // XOR image and AND mask
  header.writeUInt16LE(1, 12)
  header.writeUInt16LE(32, 14)
  const pixels = Buffer.alloc(size * size * 4)
  const n = 4
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      let square = 0
      let ring = 0
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const s = sample((col + (i + 0.5) / n) / size, (row + (j + 0.5) / n) / size)
          square += s.square
          ring += s.ring * s.square
        }
      }
      square /= n * n
      ring /= n * n
      const white = square === 0 ? 0 : ring / square
      const at = ((size - 1 - row) * size + col) * 4
      pixels[at] = Math.round(ACCENT[2] + (255 - ACCENT[2]) * white)
      pixels[at + 1] = Math.round(ACCENT[1] + (255 - ACCENT[1]) * white)
      pixels[at + 2] = Math.round(ACCENT[0] + (255 - ACCENT[0]) * white)
      pixels[at + 3] = Math.round(square * 255)
    }
  }
  const maskRow = Math.ceil(size / 32) * 4
  return Buffer.concat([header, pixels, Buffer.alloc(maskRow * size)])
}

function ico(sizes: readonly number[]): Buffer {
  const images = sizes.map(bitmap)
  const head = Buffer.alloc(6)
  head.writeUInt16LE(1, 2) // type: icon
  head.writeUInt16LE(sizes.length, 4)
  let offset = 6 + 16 * sizes.length
  const entries = sizes.map((size, i) => {
    const e = Buffer.alloc(16)
    e.writeUInt8(size % 256, 0)
    e.writeUInt8(size % 256, 1)
    e.writeUInt16LE(1, 4) // planes
    e.writeUInt16LE(32, 6) // bits per pixel
    e.writeUInt32LE((images[i] as Buffer).length, 8)
    e.writeUInt32LE(offset, 12)
    offset += (images[i] as Buffer).length
    return e
  })
  return Buffer.concat([head, ...entries, ...images])
}

process.stdout.write(ico([16, 32]).toString('base64') + '\n')
