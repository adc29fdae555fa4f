// What the published typings promise, type-checked under `strict` against the installed package's
// .d.ts (tests/package-consumer.test.ts copies this file into a page's project, no Node types).
// A `@ts-expect-error` line must not compile: were it to, tsc fails on the unused directive.
import {
  type ApiOptions,
  type ObjectExtras,
  type ObjectLocation,
  type ResumeUploads,
  resumeUploads,
  type TransferOptions,
  upload,
} from 'updraft-s3'
import type { Located, ResolvedObject, ResolveEndpoint, SessionSource } from 'updraft-s3/aws-endpoints'
import type { ChecksumRun, ChecksumTarget } from 'updraft-s3/checksums'
import { uploadPresigned } from 'updraft-s3/presigned'
import type { LocationReply } from 'updraft-s3/protocol'
import { uploadWithToken } from 'updraft-s3/token'

declare const file: File

// `resume` takes what resumeUploads() makes, and nothing else: the engine runs the upload through
// it (a `true` used to compile, then fail with "options.resume.run is not a function").
const resume: ResumeUploads = resumeUploads()
void upload(file, { resume })
void uploadWithToken(file, { resume: resumeUploads({ maxAge: 60_000 }) })
void uploadPresigned(file, { resume })
// @ts-expect-error a boolean is not a ResumeUploads
void upload(file, { resume: true })
// @ts-expect-error nor an object of its public shape: only resumeUploads() makes one
void upload(file, { resume: { store: resume.store, list: resume.list, discard: resume.discard } })

// Each type a public signature names can be imported by name, from one entry.
export type Named = [
  TransferOptions,
  ApiOptions,
  ObjectExtras,
  ObjectLocation,
  ChecksumRun,
  ChecksumTarget,
  ResolveEndpoint,
  Located,
  ResolvedObject,
  SessionSource,
  LocationReply,
]
