// The pixels of a PNG screenshot (8-bit RGB or RGBA, non-interlaced: what Chromium writes), decoded
// with node:zlib only, so a test can look for a colour the agent must never be shown.
import { inflateSync } from "node:zlib";
import { imageSize } from "./image.ts";

/** How many pixels are within `tolerance` (per channel) of `rgb`. */
export function countColour(png: Buffer, rgb: [number, number, number], tolerance = 24): number {
  const { type, width, height } = imageSize(png);
  if (type !== "png") throw new Error("countColour reads PNG only");
  const colourType = png[25] as number;
  if (png[24] !== 8 || (colourType !== 2 && colourType !== 6) || png[28] !== 0) throw new Error("unsupported PNG layout");
  const bpp = colourType === 6 ? 4 : 3;
  const idat: Buffer[] = [];
  for (let i = 8; i < png.length; ) {
    const len = png.readUInt32BE(i);
    const kind = png.toString("ascii", i + 4, i + 8);
    if (kind === "IDAT") idat.push(png.subarray(i + 8, i + 8 + len));
    i += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  let prev = Buffer.alloc(stride);
  let count = 0;
  for (let y = 0; y < height; y++) {
    const off = y * (stride + 1);
    const filter = raw[off] as number;
    const line = Buffer.from(raw.subarray(off + 1, off + 1 + stride));
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? (line[x - bpp] as number) : 0;
      const b = prev[x] as number;
      const c = x >= bpp ? (prev[x - bpp] as number) : 0;
      let v = line[x] as number;
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      line[x] = v & 0xff;
    }
    for (let x = 0; x < stride; x += bpp) {
      if (
        Math.abs((line[x] as number) - rgb[0]) <= tolerance &&
        Math.abs((line[x + 1] as number) - rgb[1]) <= tolerance &&
        Math.abs((line[x + 2] as number) - rgb[2]) <= tolerance
      ) {
        count++;
      }
    }
    prev = line;
  }
  return count;
}
