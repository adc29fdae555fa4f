// What `doctor` and `setup-bucket` run, all of which reach the AWS SDK: behind one dynamic import
// in updraft.ts, so `store` and `--help` run without the SDK, and a missing SDK is named with the
// `npm install` line that adds it (server/optional-peers.ts).
export { credentialsOf } from '../server/credentials.ts'
export { createS3Client } from '../server/storage.ts'
export { keyPolicyJson, pageHeaders, preflightRefusals, runDoctor } from './doctor.ts'
export { applyBucketPlan, describePlan, planBucket } from './setup-bucket.ts'
export { keySigns, storageProbe } from './storage-probe.ts'
