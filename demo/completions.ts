import type { CompletedUpload, UploadHandlerConfig } from '../server/config.ts'

/** What the demo server answers for each verified upload: the page shows it on the file's row. */
export interface DemoRecord {
  /** The upload's number on this server, counted from 1. */
  id: number
  size: number
  contentType: string
}

/**
 * The demo's `onUploadComplete`: keeps every verified upload in memory, once per `uploadId` (the
 * page retries a `/complete` whose reply it lost), as an app would in its database.
 */
export function demoCompletions(): Pick<UploadHandlerConfig<unknown, DemoRecord>, 'onUploadComplete'> & {
  records: Map<string, DemoRecord & { key: string }>
} {
  const records = new Map<string, DemoRecord & { key: string }>()
  return {
    records,
    onUploadComplete({ uploadId, key, size, contentType }: CompletedUpload) {
      let record = records.get(uploadId)
      if (!record) records.set(uploadId, (record = { id: records.size + 1, key, size, contentType }))
      return { id: record.id, size: record.size, contentType: record.contentType }
    },
  }
}
