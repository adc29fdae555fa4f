import { browser } from './browser.ts'
import { bundleSize } from './bundle-size.ts'
import { concurrency } from './concurrency.ts'
import { firstByte } from './first-byte.ts'
import { images } from './images.ts'
import type { Benchmark } from './lib/report.ts'
import { manyFiles } from './many-files.ts'
import { memory } from './memory.ts'
import { network } from './network.ts'
import { node } from './node.ts'
import { throughput } from './throughput.ts'
import { uploadApi } from './upload-api-load.ts'

/** In run order; `npm run bench -- NAME` picks by name. */
export const benchmarks: Benchmark[] = [
  bundleSize,
  throughput,
  node,
  concurrency,
  browser,
  memory,
  uploadApi,
  network,
  firstByte,
  manyFiles,
  images,
]
