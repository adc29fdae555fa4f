/** File i's size and bytes in bench/many-files.ts: made in the page, checked again when read back. */
export const sizeOf = (job: { minBytes: number; maxBytes: number }, i: number) =>
  job.minBytes + ((i * 7919) % (job.maxBytes - job.minBytes + 1))
export const byteOf = (i: number, j: number) => (i * 131 + j * 7 + (j >> 9)) & 255
