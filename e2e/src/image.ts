// Width and height of a PNG or JPEG, read from its header (no image library needed).
export function imageSize(b: Buffer): { type: "png" | "jpeg"; width: number; height: number } {
  if (b.length > 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString("ascii", 12, 16) === "IHDR") {
    return { type: "png", width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  if (b.length > 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) throw new Error(`bad JPEG marker at ${i}`);
      const marker = b[i + 1] as number;
      const len = b.readUInt16BE(i + 2);
      // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { type: "jpeg", height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
      }
      i += 2 + len;
    }
    throw new Error("JPEG without a frame header");
  }
  throw new Error(`neither PNG nor JPEG (starts ${b.subarray(0, 8).toString("hex")})`);
}
