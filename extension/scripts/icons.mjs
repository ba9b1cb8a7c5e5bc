// The extension's icon: a white torii gate on the accent-coloured tile. One geometry (on a
// 128-unit grid) becomes icon.svg (the pages' brand mark) and the 16/32/48/128 PNGs Chrome shows
// in the toolbar and on chrome://extensions, rasterised here with 4×4 supersampling and node:zlib,
// so no image tool or library is needed at build time.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

const TILE = "#2f5bd3"; // tokens.css --accent (light)
const GATE = "#ffffff";
const RADIUS = 28;

// Polygons of the gate, clockwise, in the 128 grid.
const GATE_SHAPES = [
  // kasagi: the top beam with upswept ends
  [[8, 22], [34, 30], [94, 30], [120, 22], [116, 40], [12, 40]],
  // nuki: the tie beam
  [[22, 56], [106, 56], [106, 66], [22, 66]],
  // gakuzuka: the strut between the beams
  [[59, 40], [69, 40], [69, 56], [59, 56]],
  // hashira: the two pillars, leaning in at the top
  [[34, 40], [47, 40], [46, 112], [30, 112]],
  [[81, 40], [94, 40], [98, 112], [82, 112]],
];

function iconSvg() {
  const polys = GATE_SHAPES.map((p) => `<polygon points="${p.map(([x, y]) => `${x},${y}`).join(" ")}"/>`).join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 128 128" role="img" aria-label="Torii"><rect width="128" height="128" rx="${RADIUS}" fill="${TILE}"/><g fill="${GATE}">${polys}</g></svg>\n`;
}

function inPoly(x, y, poly) {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function inTile(x, y) {
  const r = RADIUS;
  const cx = Math.min(Math.max(x, r), 128 - r);
  const cy = Math.min(Math.max(y, r), 128 - r);
  return x >= 0 && y >= 0 && x <= 128 && y <= 128 && (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));

const CRC = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

function iconPng(size) {
  const tile = hex(TILE);
  const gate = hex(GATE);
  const S = 4;
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let py = 0; py < size; py++) {
    raw[py * (size * 4 + 1)] = 0; // filter: none
    for (let px = 0; px < size; px++) {
      let tileHits = 0;
      let gateHits = 0;
      for (let sy = 0; sy < S; sy++) {
        for (let sx = 0; sx < S; sx++) {
          const x = ((px + (sx + 0.5) / S) * 128) / size;
          const y = ((py + (sy + 0.5) / S) * 128) / size;
          if (!inTile(x, y)) continue;
          tileHits++;
          if (GATE_SHAPES.some((p) => inPoly(x, y, p))) gateHits++;
        }
      }
      const a = tileHits / (S * S);
      const g = tileHits ? gateHits / tileHits : 0;
      const o = py * (size * 4 + 1) + 1 + px * 4;
      for (let c = 0; c < 3; c++) raw[o + c] = Math.round(tile[c] * (1 - g) + gate[c] * g);
      raw[o + 3] = Math.round(a * 255);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([sig, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw, { level: 9 })), chunk("IEND", Buffer.alloc(0))]);
}

const ICON_SIZES = [16, 32, 48, 128];

export async function writeIcons(dir) {
  await writeFile(join(dir, "icon.svg"), iconSvg());
  await Promise.all(ICON_SIZES.map((s) => writeFile(join(dir, `icon-${s}.png`), iconPng(s))));
}
