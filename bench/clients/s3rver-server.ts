// s3rver in a process of its own, for benchmarks where storage's CPU should not be taken from the
// event loop that shapes the link (bench/many-files.ts): as on the Internet, storage serving one
// request does not slow the network. Prints its endpoint; its buckets and keys are dev/s3rver.ts's.

import { startS3rver } from '../../dev/s3rver.ts'

const store = await startS3rver()
console.log(store.endpoint)
process.on('SIGTERM', () => void store.stop().finally(() => process.exit(0)))
