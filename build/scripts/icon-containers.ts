/**
 * Writers for the two icon containers the desktop targets need, from PNGs we render ourselves.
 * Both formats are a short header and a table of images, so a few lines replace a dependency.
 */

/** One rendered square image: its side in pixels, its PNG bytes and its straight-alpha RGBA pixels. */
export interface IconImage {
  size: number;
  png: Buffer;
  rgba: Buffer;
}

/**
 * macOS .icns element types that hold PNG data, by pixel side. @2x types are the same pixels as
 * the plain type of twice the side, shown on Retina displays; Finder wants both.
 * (Apple's iconutil writes the same set from an .iconset folder.)
 */
export const ICNS_TYPES: readonly { type: string; size: number }[] = [
  { type: 'icp4', size: 16 },
  { type: 'ic11', size: 32 }, // 16 pt @2x
  { type: 'icp5', size: 32 },
  { type: 'ic12', size: 64 }, // 32 pt @2x
  { type: 'ic07', size: 128 },
  { type: 'ic13', size: 256 }, // 128 pt @2x
  { type: 'ic08', size: 256 },
  { type: 'ic14', size: 512 }, // 256 pt @2x
  { type: 'ic09', size: 512 },
  { type: 'ic10', size: 1024 }, // 512 pt @2x
];

/** Windows .ico sides: the shell's list, details and tile views at 100–200% scaling, and 256 for "large icons". */
export const ICO_SIZES: readonly number[] = [16, 24, 32, 48, 64, 128, 256];

/**
 * Sides at or below this go into the .ico as bitmaps rather than PNG: the resource compilers and
 * installers that embed the icon (rcedit, NSIS) read bitmap entries everywhere, PNG entries only
 * in newer versions, and at these sizes a bitmap is small anyway.
 */
const ICO_BITMAP_MAX_SIZE = 64;

function imageOfSize(images: readonly IconImage[], size: number): IconImage {
  const image = images.find((candidate) => candidate.size === size);
  if (image === undefined) throw new Error(`No ${size}×${size} rendering was given; the icon containers need one.`);
  return image;
}

/** An .icns file: 'icns', total length, then per element its type, length (including this 8-byte header) and PNG. */
export function encodeIcns(images: readonly IconImage[]): Buffer {
  const elements = ICNS_TYPES.map(({ type, size }) => {
    const png = imageOfSize(images, size).png;
    const header = Buffer.alloc(8);
    header.write(type, 0, 'latin1');
    header.writeUInt32BE(png.length + 8, 4);
    return Buffer.concat([header, png]);
  });
  const header = Buffer.alloc(8);
  header.write('icns', 0, 'latin1');
  header.writeUInt32BE(8 + elements.reduce((total, element) => total + element.length, 0), 4);
  return Buffer.concat([header, ...elements]);
}

/**
 * A 32-bit BMP entry as .ico stores it: BITMAPINFOHEADER with the height doubled (image plus mask),
 * BGRA rows bottom-up, then the 1-bit AND mask, which alpha makes redundant and is left all zero.
 */
function icoBitmap(image: IconImage): Buffer {
  const { size, rgba } = image;
  const maskRowBytes = Math.ceil(size / 32) * 4;
  const header = Buffer.alloc(40);
  header.writeUInt32LE(40, 0);
  header.writeInt32LE(size, 4);
  header.writeInt32LE(size * 2, 8);
  header.writeUInt16LE(1, 12); // planes
  header.writeUInt16LE(32, 14); // bits per pixel
  header.writeUInt32LE(size * size * 4 + maskRowBytes * size, 20); // image size
  const pixels = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const from = (y * size + x) * 4;
      const to = ((size - 1 - y) * size + x) * 4;
      pixels[to] = rgba[from + 2]!;
      pixels[to + 1] = rgba[from + 1]!;
      pixels[to + 2] = rgba[from]!;
      pixels[to + 3] = rgba[from + 3]!;
    }
  }
  return Buffer.concat([header, pixels, Buffer.alloc(maskRowBytes * size)]);
}

/** An .ico file: ICONDIR, one 16-byte ICONDIRENTRY per image, then the images (bitmaps small, PNG large). */
export function encodeIco(images: readonly IconImage[]): Buffer {
  const payloads = ICO_SIZES.map((size) => {
    const image = imageOfSize(images, size);
    return { size, data: size <= ICO_BITMAP_MAX_SIZE ? icoBitmap(image) : image.png };
  });
  const directory = Buffer.alloc(6 + 16 * payloads.length);
  directory.writeUInt16LE(0, 0);
  directory.writeUInt16LE(1, 2); // type: icon
  directory.writeUInt16LE(payloads.length, 4);
  let offset = directory.length;
  payloads.forEach(({ size, data }, index) => {
    const entry = 6 + 16 * index;
    directory.writeUInt8(size % 256, entry); // 0 means 256
    directory.writeUInt8(size % 256, entry + 1);
    directory.writeUInt16LE(1, entry + 4); // planes
    directory.writeUInt16LE(32, entry + 6); // bits per pixel
    directory.writeUInt32LE(data.length, entry + 8);
    directory.writeUInt32LE(offset, entry + 12);
    offset += data.length;
  });
  return Buffer.concat([directory, ...payloads.map(({ data }) => data)]);
}
